// Package hooks turns providers' webhooks into events: one file per source
// (stripe.go, github.go, alertmanager.go, grafana.go, json.go), each a signature check
// and a pure function from the delivery to events. The API's POST /hooks/{id} finds
// the hook, calls Verify then Map, and publishes the events with the delivery's id as
// the idempotency key.
package hooks

import (
	"fmt"
	"net/http"
	"time"

	"github.com/tidings-dev/tidings"
)

// Request is one delivery as a source sees it.
type Request struct {
	Header http.Header
	Body   []byte // at most tidings.MaxHookBody
	Now    time.Time
}

// Delivery is what a delivery becomes.
type Delivery struct {
	// ID is the provider's id of the delivery (Stripe's event id, X-GitHub-Delivery,
	// …): retries of one delivery carry the same, and it is the idempotency key. ""
	// when the source has none (then every request stores its events).
	ID string
	// SenderKey names the header ID came from when the sender chose it freely (json:
	// "Idempotency-Key" or "X-Request-Id"): that id again with another body is refused
	// (422 idempotency_key_reused), as the API refuses a reused Idempotency-Key. ""
	// for a provider's id (Stripe, GitHub, Alertmanager, Grafana): the id alone
	// decides, and a delivery with an id already seen is a replay whatever its body
	// (a Grafana repeat changes valueString, an Alertmanager one its templated
	// annotations; a Stripe resend may be rendered anew).
	SenderKey string
	Events    []*tidings.NewEvent // Project and Channel are the hook's
}

// Refusal is why a delivery is refused: Status 401 (signature, timestamp, missing
// bearer) or 400 (a body that does not parse, a template that fails). Reason is for
// the hook's log and the answer; it never quotes the body.
type Refusal struct {
	Status int
	Reason string
}

func (r *Refusal) Error() string { return r.Reason }

// Unauthorized and BadBody make Refusals.
func Unauthorized(format string, args ...any) error {
	return &Refusal{Status: http.StatusUnauthorized, Reason: fmt.Sprintf(format, args...)}
}

func BadBody(format string, args ...any) error {
	return &Refusal{Status: http.StatusBadRequest, Reason: fmt.Sprintf(format, args...)}
}

// Source is one provider's checks and mapping.
type Source interface {
	// Verify checks the delivery's credentials (signature, timestamp tolerance,
	// bearer secret): a *Refusal with 401 when they do not hold.
	Verify(h *tidings.Hook, r *Request) error
	// Map turns a verified delivery into events: a *Refusal with 400 when the body
	// does not parse. A provider's event type that maps to nothing becomes one event
	// named after the type, notify off.
	Map(h *tidings.Hook, r *Request) (*Delivery, error)
}

// For returns the source of a hook's Source; nil for an unknown one.
func For(source string) Source {
	return sources[source]
}

// sources is filled by each source's file.
var sources = map[string]Source{}
