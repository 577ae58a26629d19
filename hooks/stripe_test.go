package hooks

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stripe/stripe-go/v83/webhook"
	"github.com/tidings-dev/tidings"
)

const stripeSecret = "whsec_test_3f9a0c7b2e4d4e1f9c8b7a6d5e4f3a2b"

func stripeHook() *tidings.Hook {
	return &tidings.Hook{ID: "hook_0123456789ab", AccountID: 1, Project: "shop", Channel: "payments",
		Source: tidings.HookStripe, Secret: stripeSecret, UserIDFrom: "customer"}
}

// stripeSigned signs body as Stripe does, with stripe-go's own test helper.
func stripeSigned(body []byte, secret string, at time.Time) http.Header {
	sp := webhook.GenerateTestSignedPayload(&webhook.UnsignedPayload{Payload: body, Secret: secret, Timestamp: at})
	return http.Header{"Stripe-Signature": {sp.Header}}
}

func TestStripeMapping(t *testing.T) {
	for _, tc := range []struct {
		file, event, icon, user, priority string
		notify                            bool
		tags                              map[string]string
	}{
		{"checkout.session.completed", "New payment", "💰", "cus_NZKoSNZ9tCvIfg", "default", true,
			map[string]string{"amount": "21.98", "currency": "usd", "stripe-event": "checkout.session.completed"}},
		{"invoice.paid", "New payment", "💰", "cus_NeZwdNtLEOXuvB", "default", true,
			map[string]string{"amount": "15.00", "currency": "usd", "stripe-event": "invoice.paid"}},
		{"customer.subscription.created", "New subscription", "🎉", "cus_Na6dX7aXxi11N4", "default", true,
			map[string]string{"plan": "Pro monthly", "status": "active", "interval": "month", "amount": "10.00"}},
		{"customer.subscription.updated", "Subscription updated", "🔄", "cus_Na6dX7aXxi11N4", "default", false,
			map[string]string{"plan": "Pro monthly", "status": "active", "cancel-at-period-end": "true"}},
		{"customer.subscription.deleted", "Subscription canceled", "👋", "cus_Na6dX7aXxi11N4", "default", true,
			map[string]string{"plan": "Pro monthly", "status": "canceled"}},
		{"charge.refunded", "Refund", "💸", "cus_NXqwLx1D4IT8nN", "default", true,
			map[string]string{"amount": "10.99", "currency": "usd"}},
		{"charge.dispute.created", "Dispute opened", "⚠️", "", "high", true,
			map[string]string{"amount": "10.00", "reason": "general", "charge": "ch_1AZtxr2eZvKYlo2CJDX8whov"}},
		{"payment_intent.succeeded", "payment_intent.succeeded", "", "", "default", false,
			map[string]string{"stripe-event": "payment_intent.succeeded"}},
	} {
		t.Run(tc.file, func(t *testing.T) {
			body := testdata(t, "stripe", tc.file+".json")
			d, err := deliver(t, stripeHook(), stripeSigned(body, stripeSecret, now.Add(-time.Minute)), body)
			if err != nil {
				t.Fatal(err)
			}
			var want struct{ ID string }
			json.Unmarshal(body, &want)
			if d.ID != want.ID || len(d.Events) != 1 {
				t.Fatalf("delivery %q with %d events, want %q with 1", d.ID, len(d.Events), want.ID)
			}
			e := d.Events[0]
			if e.Event != tc.event || e.Notify != tc.notify || e.UserID != tc.user || e.Priority != tc.priority {
				t.Errorf("got %q notify %v user %q priority %q", e.Event, e.Notify, e.UserID, e.Priority)
			}
			var p tidings.Problems
			icon := tc.icon
			tidings.CheckIcon(&p, "icon", &icon)
			if e.Icon != icon {
				t.Errorf("icon %q, want %q", e.Icon, icon)
			}
			for k, v := range tc.tags {
				if got := tag(e, k); got != v {
					t.Errorf("tag %s = %q, want %q", k, got, v)
				}
			}
			if e.Timestamp.IsZero() {
				t.Error("no timestamp from the event's created")
			}
		})
	}
}

// Checkout sessions that are not a payment yet, and invoices of nothing.
func TestStripeCheckoutKinds(t *testing.T) {
	base := testdata(t, "stripe", "checkout.session.completed.json")
	for _, tc := range []struct {
		name         string
		from, to     []string
		event        string
		notify       bool
		amountExists bool
	}{
		{"subscription", []string{`"mode": "payment"`}, []string{`"mode": "subscription"`}, "Checkout completed", false, true},
		{"unpaid", []string{`"payment_status": "paid"`}, []string{`"payment_status": "unpaid"`}, "Checkout completed", false, true},
		{"async paid", []string{`"type": "checkout.session.completed"`}, []string{`"type": "checkout.session.async_payment_succeeded"`}, "New payment", true, true},
	} {
		body := base
		for i := range tc.from {
			body = bytes.Replace(body, []byte(tc.from[i]), []byte(tc.to[i]), 1)
		}
		d, err := deliver(t, stripeHook(), stripeSigned(body, stripeSecret, now), body)
		if err != nil {
			t.Fatal(err)
		}
		if e := d.Events[0]; e.Event != tc.event || e.Notify != tc.notify || tag(e, "amount") != "21.98" {
			t.Errorf("%s: %q notify %v amount %q", tc.name, e.Event, e.Notify, tag(e, "amount"))
		}
	}
	body := bytes.Replace(testdata(t, "stripe", "invoice.paid.json"), []byte(`"amount_paid": 1500`), []byte(`"amount_paid": 0`), 1)
	d, err := deliver(t, stripeHook(), stripeSigned(body, stripeSecret, now), body)
	if err != nil || d.Events[0].Event != "Invoice paid" || d.Events[0].Notify || tag(d.Events[0], "amount") != "0.00" {
		t.Errorf("%v %q", err, d.Events[0].Event)
	}
}

func TestStripeUserIDNone(t *testing.T) {
	body := testdata(t, "stripe", "invoice.paid.json")
	for _, from := range []string{"none", ""} {
		h := stripeHook()
		h.UserIDFrom = from
		d, err := deliver(t, h, stripeSigned(body, stripeSecret, now), body)
		if err != nil || d.Events[0].UserID != "" {
			t.Fatalf("%q: %v, user %q", from, err, d.Events[0].UserID)
		}
	}
}

func TestStripeAmounts(t *testing.T) {
	n := func(v int64) *int64 { return &v }
	for _, tc := range []struct {
		minor    *int64
		currency string
		want     string
	}{
		{n(1250), "usd", "12.50"}, {n(5), "USD", "0.05"}, {n(0), "eur", "0.00"}, {n(100), "eur", "1.00"},
		{n(500), "jpy", "500"}, {n(500), "JPY", "500"}, {n(1250), "kwd", "1.250"}, {n(7), "bhd", "0.007"},
		{n(-1250), "usd", "-12.50"}, {n(9007199254740993), "usd", "90071992547409.93"}, {nil, "usd", ""},
	} {
		if got := stripeAmount(tc.minor, tc.currency); got != tc.want {
			t.Errorf("%v %s: %q, want %q", tc.minor, tc.currency, got, tc.want)
		}
	}
	// Through the mapping: a zero-decimal and a three-decimal currency.
	for cur, want := range map[string]string{"jpy": "2198", "kwd": "2.198"} {
		body := bytes.Replace(testdata(t, "stripe", "checkout.session.completed.json"), []byte(`"currency": "usd"`), []byte(`"currency": "`+strings.ToUpper(cur)+`"`), 1)
		d, err := deliver(t, stripeHook(), stripeSigned(body, stripeSecret, now), body)
		if err != nil {
			t.Fatal(err)
		}
		if got := tag(d.Events[0], "amount"); got != want || tag(d.Events[0], "currency") != cur {
			t.Errorf("%s: amount %q currency %q", cur, got, tag(d.Events[0], "currency"))
		}
	}
}

func TestStripeRefusals(t *testing.T) {
	body := testdata(t, "stripe", "invoice.paid.json")
	good := stripeSigned(body, stripeSecret, now)
	other := stripeSigned(body, "whsec_another", now)
	for _, tc := range []struct {
		name   string
		header http.Header
		body   []byte
		status int
	}{
		{"wrong secret", other, body, 401},
		{"old timestamp", stripeSigned(body, stripeSecret, now.Add(-6*time.Minute)), body, 401},
		{"future timestamp", stripeSigned(body, stripeSecret, now.Add(6*time.Minute)), body, 401},
		{"missing header", http.Header{}, body, 401},
		{"no v1", http.Header{"Stripe-Signature": {"t=" + strings.TrimPrefix(strings.Split(good.Get("Stripe-Signature"), ",")[0], "t=")}}, body, 401},
		{"v0 only", http.Header{"Stripe-Signature": {strings.Replace(good.Get("Stripe-Signature"), "v1=", "v0=", 1)}}, body, 401},
		{"garbage header", http.Header{"Stripe-Signature": {"nonsense"}}, body, 401},
		{"body changed", good, append([]byte(" "), body...), 401},
		{"unparsable body", stripeSigned([]byte("{not json"), stripeSecret, now), []byte("{not json"), 400},
		{"not an event", stripeSigned([]byte(`{"hello":1}`), stripeSecret, now), []byte(`{"hello":1}`), 400},
		{"mapped type, wrong object", stripeSigned([]byte(`{"id":"evt_1","type":"invoice.paid","data":{"object":{"amount_paid":"lots"}}}`), stripeSecret, now),
			[]byte(`{"id":"evt_1","type":"invoice.paid","data":{"object":{"amount_paid":"lots"}}}`), 400},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := deliver(t, stripeHook(), tc.header, tc.body)
			refusal(t, err, tc.status)
			if strings.Contains(err.Error(), "Jenny") || strings.Contains(err.Error(), "not json") {
				t.Errorf("the reason quotes the body: %v", err)
			}
		})
	}
	// A rolled secret: two v1 signatures, one of them good.
	h := http.Header{"Stripe-Signature": {other.Get("Stripe-Signature") + "," + strings.Split(good.Get("Stripe-Signature"), ",")[1]}}
	if _, err := deliver(t, stripeHook(), h, body); err != nil {
		t.Errorf("several v1: %v", err)
	}
	// stripe-go's own check agrees with ours.
	real := stripeSigned(body, stripeSecret, time.Now())
	if _, err := webhook.ConstructEventWithOptions(body, real.Get("Stripe-Signature"), stripeSecret, webhook.ConstructEventOptions{IgnoreAPIVersionMismatch: true}); err != nil {
		t.Errorf("stripe-go refuses the test signature: %v", err)
	}
}

func TestStripeHostile(t *testing.T) {
	long := strings.Repeat("x", 5000)
	body, _ := json.Marshal(map[string]any{
		"id": "evt_hostile", "object": "event", "type": "customer.subscription.created\u202e\n" + long, "created": 1680064028,
		"data": map[string]any{"object": map[string]any{"id": "sub_1", "customer": "cus_\x00\u202e" + long,
			"status": "act\nive\x07", "plan": map[string]any{"nickname": "Pro\u2066\t\r\n" + long, "currency": "usd", "amount": 1}}},
	})
	d, err := deliver(t, stripeHook(), stripeSigned(body, stripeSecret, now), body)
	if err != nil {
		t.Fatal(err)
	}
	e := d.Events[0]
	if e.UserID != "" || !strings.HasPrefix(e.Event, "customer.subscription.created xxx") {
		t.Errorf("user %q status %q event %q", e.UserID, tag(e, "status"), e.Event)
	}
	// A subscription whose plan name is hostile.
	body, _ = json.Marshal(map[string]any{
		"id": "evt_hostile2", "type": "customer.subscription.created", "created": 1680064028,
		"data": map[string]any{"object": map[string]any{"id": "sub_1", "customer": "cus_1", "status": "act\nive\x07",
			"plan": map[string]any{"nickname": "Pro\u2066\t\r\n" + long, "currency": "usd", "amount": 1}}},
	})
	if d, err = deliver(t, stripeHook(), stripeSigned(body, stripeSecret, now), body); err != nil {
		t.Fatal(err)
	}
	if p := tag(d.Events[0], "plan"); !strings.HasPrefix(p, "Pro x") || len([]rune(p)) != tidings.MaxTagValueLen || tag(d.Events[0], "status") != "act ive" {
		t.Errorf("plan %q…", p[:20])
	}
}

// TestParseErrorsNameNoValue: a body of the wrong shape is refused saying which field
// and what kind of value, never the value (encoding/json's error quotes a number that
// overflows its field).
func TestParseErrorsNameNoValue(t *testing.T) {
	const big = "424242424242424242424242"
	body := []byte(`{"id":"evt_1","type":"invoice.paid","data":{"object":{"amount_paid":` + big + `}}}`)
	_, err := deliver(t, stripeHook(), stripeSigned(body, stripeSecret, now), body)
	refusal(t, err, 400)
	if strings.Contains(err.Error(), big) || !strings.Contains(err.Error(), "amount_paid has the wrong type (number)") {
		t.Errorf("stripe: %v", err)
	}
	alerts := []byte(`{"alerts":[{"status":` + big + `}]}`)
	_, err = deliver(t, alertHook(tidings.HookAlertmanager, ""), http.Header{}, alerts)
	refusal(t, err, 400)
	if strings.Contains(err.Error(), big) || !strings.Contains(err.Error(), "status has the wrong type (number)") {
		t.Errorf("alertmanager: %v", err)
	}
}
