package hooks

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strconv"
	"strings"
	"time"

	"github.com/tidings-dev/tidings"
)

// Stripe: the Stripe-Signature header ("t=TIMESTAMP,v1=SIG[,v1=SIG…]", several v1
// while a secret is rolled) signs "TIMESTAMP.BODY" with HMAC-SHA256 keyed by the
// endpoint's signing secret (whsec_…, the whole string); the timestamp must be within
// StripeTolerance of now. The event's id (evt_…) is the delivery's id.
// https://docs.stripe.com/webhooks#verify-manually

// StripeTolerance is how far a Stripe-Signature's timestamp may be from now.
const StripeTolerance = 5 * time.Minute

func init() { sources[tidings.HookStripe] = stripeSource{} }

type stripeSource struct{}

func (stripeSource) Verify(h *tidings.Hook, r *Request) error {
	header := r.Header.Get("Stripe-Signature")
	if header == "" {
		return Unauthorized("missing Stripe-Signature header")
	}
	if h.Secret == "" {
		return Unauthorized("the hook has no signing secret")
	}
	var ts int64 = -1
	var sigs [][]byte
	for _, part := range strings.Split(header, ",") {
		k, v, _ := strings.Cut(strings.TrimSpace(part), "=")
		switch k {
		case "t":
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				return Unauthorized("malformed Stripe-Signature timestamp")
			}
			ts = n
		case "v1":
			if sig, err := hex.DecodeString(v); err == nil {
				sigs = append(sigs, sig)
			}
		}
	}
	if ts < 0 {
		return Unauthorized("Stripe-Signature has no timestamp")
	}
	if len(sigs) == 0 {
		return Unauthorized("Stripe-Signature has no v1 signature")
	}
	mac := hmac.New(sha256.New, []byte(h.Secret))
	mac.Write([]byte(strconv.FormatInt(ts, 10)))
	mac.Write([]byte{'.'})
	mac.Write(r.Body)
	want := mac.Sum(nil)
	ok := false
	for _, sig := range sigs {
		if hmac.Equal(sig, want) {
			ok = true
		}
	}
	if !ok {
		return Unauthorized("no Stripe-Signature v1 signature matches the signing secret")
	}
	if d := r.Now.Sub(time.Unix(ts, 0)); d > StripeTolerance || d < -StripeTolerance {
		return Unauthorized("Stripe-Signature timestamp is %s away from now (tolerance %s)", d.Round(time.Second), StripeTolerance)
	}
	return nil
}

// stripeEvent is the part of Stripe's Event object the mapping reads.
type stripeEvent struct {
	ID      string `json:"id"`
	Object  string `json:"object"`
	Type    string `json:"type"`
	Created int64  `json:"created"`
	Data    struct {
		Object             json.RawMessage `json:"object"`
		PreviousAttributes json.RawMessage `json:"previous_attributes"`
	} `json:"data"`
	Livemode bool `json:"livemode"`
}

// stripeObject holds the fields of the objects the mapping reads (checkout session,
// invoice, subscription, charge, dispute).
type stripeObject struct {
	ID             string          `json:"id"`
	Object         string          `json:"object"`
	Customer       json.RawMessage `json:"customer"` // an id, or the expanded object
	Currency       string          `json:"currency"`
	Amount         *int64          `json:"amount"`
	AmountTotal    *int64          `json:"amount_total"`
	AmountPaid     *int64          `json:"amount_paid"`
	AmountRefunded *int64          `json:"amount_refunded"`
	Status         string          `json:"status"`
	Reason         string          `json:"reason"`
	Mode           string          `json:"mode"`
	PaymentStatus  string          `json:"payment_status"`
	CustomerEmail  string          `json:"customer_email"`
	Details        *struct {
		Email string `json:"email"`
	} `json:"customer_details"`
	CancelAtPeriodEnd bool        `json:"cancel_at_period_end"`
	Plan              *stripePlan `json:"plan"`
	Items             *struct {
		Data []struct {
			Plan  *stripePlan `json:"plan"`
			Price *stripePlan `json:"price"`
		} `json:"data"`
	} `json:"items"`
	Charge json.RawMessage `json:"charge"`
}

type stripePlan struct {
	ID         string `json:"id"`
	Nickname   string `json:"nickname"`
	LookupKey  string `json:"lookup_key"`
	Interval   string `json:"interval"`
	UnitAmount *int64 `json:"unit_amount"`
	Amount     *int64 `json:"amount"`
	Currency   string `json:"currency"`
	Recurring  *struct {
		Interval string `json:"interval"`
	} `json:"recurring"`
}

func (stripeSource) Map(h *tidings.Hook, r *Request) (*Delivery, error) {
	var ev stripeEvent
	if err := json.Unmarshal(r.Body, &ev); err != nil {
		return nil, BadBody("the body is not a Stripe event: %s", jsonError(err))
	}
	if ev.Type == "" || ev.ID == "" {
		return nil, BadBody("the body is not a Stripe event: no id or type")
	}
	o := new(stripeObject)
	if err := json.Unmarshal(ev.Data.Object, o); err != nil {
		if stripeMapped[ev.Type] {
			return nil, BadBody("the %s event's data.object does not decode: %s", line(ev.Type, 100), jsonError(err))
		}
		// Another type's object may use these names differently: keep its id and customer.
		var lenient map[string]json.RawMessage
		_ = json.Unmarshal(ev.Data.Object, &lenient)
		o = &stripeObject{ID: rawID(lenient["id"]), Customer: lenient["customer"]}
	}
	e := event(h)
	var tags tagger
	switch ev.Type {
	case "checkout.session.completed", "checkout.session.async_payment_succeeded", "invoice.paid":
		e.Event, e.Icon, e.Notify = "New payment", "💰", true
		amount := o.AmountTotal
		if ev.Type == "invoice.paid" {
			amount = o.AmountPaid
		} else if o.Mode != "payment" || o.PaymentStatus != "paid" {
			// A subscription's first payment is its invoice's (invoice.paid follows),
			// a setup session pays nothing, and an unpaid session (a bank debit) is
			// paid when checkout.session.async_payment_succeeded comes.
			e.Event, e.Icon, e.Notify = "Checkout completed", "🛒", false
			tags.add("mode", o.Mode)
			tags.add("payment-status", o.PaymentStatus)
		}
		if ev.Type == "invoice.paid" && amount != nil && *amount == 0 {
			e.Event, e.Icon, e.Notify = "Invoice paid", "🧾", false // a trial's or a coupon's: no money moved
		}
		tags.add("amount", stripeAmount(amount, o.Currency))
		tags.add("currency", strings.ToLower(o.Currency))
		email := o.CustomerEmail
		if o.Details != nil && o.Details.Email != "" {
			email = o.Details.Email
		}
		e.Description = text(email)
	case "customer.subscription.created", "customer.subscription.updated", "customer.subscription.deleted":
		e.Icon = "🔄"
		switch ev.Type {
		case "customer.subscription.created":
			e.Event, e.Icon, e.Notify = "New subscription", "🎉", true
		case "customer.subscription.updated":
			e.Event = "Subscription updated"
		default:
			e.Event, e.Icon, e.Notify = "Subscription canceled", "👋", true
		}
		if p := o.plan(); p != nil {
			name := p.Nickname
			if name == "" {
				name = p.LookupKey
			}
			if name == "" {
				name = p.ID
			}
			tags.add("plan", name)
			interval := p.Interval
			if p.Recurring != nil && interval == "" {
				interval = p.Recurring.Interval
			}
			tags.add("interval", interval)
			amount := p.UnitAmount
			if amount == nil {
				amount = p.Amount
			}
			tags.add("amount", stripeAmount(amount, p.Currency))
			tags.add("currency", strings.ToLower(p.Currency))
		}
		tags.add("status", o.Status)
		if o.CancelAtPeriodEnd {
			tags.addBool("cancel-at-period-end", true)
		}
	case "charge.refunded":
		e.Event, e.Icon, e.Notify = "Refund", "💸", true
		tags.add("amount", stripeAmount(o.AmountRefunded, o.Currency))
		tags.add("currency", strings.ToLower(o.Currency))
	case "charge.dispute.created":
		e.Event, e.Icon, e.Notify, e.Priority = "Dispute opened", "⚠️", true, "high"
		tags.add("amount", stripeAmount(o.Amount, o.Currency))
		tags.add("currency", strings.ToLower(o.Currency))
		tags.add("reason", o.Reason)
		tags.add("charge", rawID(o.Charge))
	default:
		e.Event = label(ev.Type, "stripe event")
	}
	tags.add("stripe-event", ev.Type)
	tags.add("stripe-id", o.ID)
	if !ev.Livemode {
		tags.addBool("livemode", false)
	}
	e.Tags = tags.tags
	if h.UserIDFrom == "customer" { // "none" or "": no user (tidings.Hook.UserIDFrom)
		e.UserID = userID(rawID(o.Customer))
	}
	if ev.Created > 946684800 && ev.Created <= r.Now.Unix() {
		e.Timestamp = time.Unix(ev.Created, 0).UTC()
	}
	return &Delivery{ID: deliveryID(ev.ID), Events: []*tidings.NewEvent{e}}, nil
}

var stripeMapped = map[string]bool{"checkout.session.completed": true, "checkout.session.async_payment_succeeded": true, "invoice.paid": true,
	"customer.subscription.created": true, "customer.subscription.updated": true, "customer.subscription.deleted": true,
	"charge.refunded": true, "charge.dispute.created": true}

func (o *stripeObject) plan() *stripePlan {
	if o.Items != nil && len(o.Items.Data) > 0 {
		if it := o.Items.Data[0]; it.Price != nil {
			return it.Price
		} else if it.Plan != nil {
			return it.Plan
		}
	}
	return o.Plan
}

// rawID is the id of a field that is an id or an expanded object ({"id": …}).
func rawID(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var o struct {
		ID string `json:"id"`
	}
	if json.Unmarshal(raw, &o) == nil {
		return o.ID
	}
	return ""
}

// Stripe's currencies whose amounts are not in hundredths.
// https://docs.stripe.com/currencies#zero-decimal
var (
	stripeZeroDecimal  = map[string]bool{"bif": true, "clp": true, "djf": true, "gnf": true, "jpy": true, "kmf": true, "krw": true, "mga": true, "pyg": true, "rwf": true, "ugx": true, "vnd": true, "vuv": true, "xaf": true, "xof": true, "xpf": true}
	stripeThreeDecimal = map[string]bool{"bhd": true, "jod": true, "kwd": true, "omr": true, "tnd": true}
)

// stripeAmount is an amount in the currency's smallest unit as an exact decimal in
// its units: 1250 usd → "12.50", 500 jpy → "500", 1250 kwd → "1.250". "" for none.
func stripeAmount(minor *int64, currency string) string {
	if minor == nil {
		return ""
	}
	c := strings.ToLower(currency)
	decimals := 2
	switch {
	case stripeZeroDecimal[c]:
		decimals = 0
	case stripeThreeDecimal[c]:
		decimals = 3
	}
	n := *minor
	sign := ""
	if n < 0 {
		sign = "-"
	}
	digits := strconv.FormatUint(uint64(n), 10)
	if n < 0 {
		digits = strconv.FormatUint(uint64(-n), 10)
	}
	if decimals == 0 {
		return sign + digits
	}
	if len(digits) <= decimals {
		digits = strings.Repeat("0", decimals-len(digits)+1) + digits
	}
	return sign + digits[:len(digits)-decimals] + "." + digits[len(digits)-decimals:]
}

// jsonError says why a body did not decode without quoting it.
func jsonError(err error) string {
	switch e := err.(type) {
	case *json.SyntaxError:
		return "invalid JSON at byte " + strconv.FormatInt(e.Offset, 10)
	case *json.UnmarshalTypeError:
		// Value is "number 4242…" for a number: the kind alone names no value.
		kind, _, _ := strings.Cut(e.Value, " ")
		return "field " + e.Field + " has the wrong type (" + kind + ")"
	}
	if err.Error() == "unexpected end of JSON input" {
		return "truncated JSON"
	}
	return "invalid JSON"
}
