package deliver

import (
	"context"
	"time"

	"github.com/tidings-dev/tidings"
)

// The data of the webhook messages of an acknowledgement and of a press
// (api-contract.md, "Priority, links, actions, keys and acknowledgement"):
//
//	{"type":"event.acknowledged","timestamp":…,"data":{"event":{…},"by":"ada@x.io","at":"…"}}
//	{"type":"event.action","timestamp":…,"data":{"event":{…},"action":{"id":"approve","label":"Approve"},"by":…,"at":…,"via":"Pixel 8"}}

// AckData is the data of event.acknowledged.
type AckData struct {
	Event tidings.EventJSON `json:"event"`
	By    string            `json:"by"`
	At    time.Time         `json:"at"`
}

// PressData is the data of event.action.
type PressData struct {
	Event  tidings.EventJSON `json:"event"`
	Action PressedAction     `json:"action"`
	By     string            `json:"by"`
	At     time.Time         `json:"at"`
	Via    string            `json:"via"`
}

// PressedAction names the action pressed.
type PressedAction struct {
	ID    string `json:"id"`
	Label string `json:"label"`
}

// intentData is the type and data of a DeliverWebhookAck or DeliverWebhookPress job
// (the event as it is now). Errors: ENotFound when there is nothing to send.
func (r *Runner) intentData(ctx context.Context, j *tidings.Delivery, ev *tidings.Event) (string, any, error) {
	if j.Kind == tidings.DeliverWebhookAck {
		if ev.Ack == nil {
			return "", nil, tidings.Errorf(tidings.ENotFound, "event %s is not acknowledged", ev.ID)
		}
		return tidings.WebhookAcknowledged, AckData{Event: ev.JSON(), By: ev.Ack.By, At: ev.Ack.At.UTC()}, nil
	}
	p, err := r.cfg.Store.FindPress(ctx, j.AccountID, j.Ref)
	if err != nil {
		return "", nil, err
	}
	return tidings.WebhookAction, PressData{Event: ev.JSON(), Action: PressedAction{ID: p.ActionID, Label: p.Label},
		By: p.By, At: p.At.UTC(), Via: p.Via}, nil
}
