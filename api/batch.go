package api

import (
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/tidings-dev/tidings"
	"github.com/tidings-dev/tidings/internal/clientip"
)

// Limits of POST /v1/log/batch.
const (
	MaxBatchEvents = 100
	MaxBatchBytes  = 1 << 20
)

// batchResult is one event's outcome in a batch's answer.
type batchResult struct {
	Status int                `json:"status"`
	Event  *tidings.EventJSON `json:"event,omitempty"`
	Error  *problem           `json:"error,omitempty"`
}

type batchAnswer struct {
	Results []batchResult `json:"results"`
}

// decodeBatch splits a batch's body into its events, each still raw JSON.
func decodeBatch(body []byte) ([]json.RawMessage, error) {
	obj, err := decodeObject(body)
	if err != nil {
		return nil, err
	}
	var p tidings.Problems
	f := newFields(obj, "", &p)
	raw, ok := f.get("events")
	f.rejectUnknown("events")
	switch {
	case !ok:
		p.Add("events", "required", "is required: an array of 1 to %d events, each as POST /v1/log takes it", MaxBatchEvents)
	case raw[0] != '[':
		p.Add("events", "type", "must be an array of events")
	}
	if err := p.Err(); err != nil {
		return nil, err
	}
	events := splitArray(raw)
	if len(events) == 0 || len(events) > MaxBatchEvents {
		p.Add("events", "length", "must hold 1 to %d events (got %d): send more in further batches", MaxBatchEvents, len(events))
		return nil, p.Err()
	}
	return events, nil
}

// splitArray slices a JSON array into its elements. The array is valid JSON already
// (decodeObject checked the whole body), so finding each element's extent is enough.
func splitArray(raw []byte) []json.RawMessage {
	var out []json.RawMessage
	i := skipSpace(raw, 1)
	for i < len(raw) && raw[i] != ']' {
		end := valueEnd(raw, i)
		if end < 0 {
			break // cannot happen in valid JSON
		}
		out = append(out, raw[i:end])
		i = skipSpace(raw, end)
		if i < len(raw) && raw[i] == ',' {
			i = skipSpace(raw, i+1)
		}
	}
	return out
}

// handleLogBatch publishes up to MaxBatchEvents events in one request and one commit:
// POST /v1/log/batch. Each event is decoded, authorised and rate limited on its own;
// the answer says each one's outcome, in order.
func (s *Server) handleLogBatch(w http.ResponseWriter, r *http.Request) error {
	tok, body, g, err := s.keyedRequest(w, r, MaxBatchBytes)
	if err != nil {
		return err
	}
	defer g.done()
	raws, err := decodeBatch(body)
	if err != nil {
		return err
	}
	results := make([]batchResult, len(raws))
	denied := make([]error, len(raws)) // why this token may not publish each event
	var events []*tidings.NewEvent
	var at []int // each stored event's place in results
	now := s.now()
	for i, raw := range raws {
		e, err := decodeLog(raw, now)
		if err == nil {
			err = tok.AllowEvent(e)
		}
		if err != nil {
			results[i], denied[i] = failed(r, err), err
			continue
		}
		events = append(events, e)
		at = append(at, i)
	}
	// The request itself spent one from the rate limits: each further event spends one.
	if len(events) > 1 {
		allowed, err := s.limits.allowN(w, tok, clientip.Of(r, s.trusted), now, len(events)-1)
		for j := allowed + 1; j < len(events); j++ {
			results[at[j]] = failed(r, err)
		}
		events, at = events[:allowed+1], at[:allowed+1]
	}
	if len(events) == 0 {
		return writeJSON(w, batchAnswer{results})
	}
	merge := func(published []tidings.Published) batchAnswer {
		out := batchAnswer{Results: append([]batchResult(nil), results...)}
		for j, p := range published {
			if p.Event != nil {
				ev := eventOut(p.Event)
				out.Results[at[j]] = batchResult{Status: http.StatusOK, Event: &ev}
			} else {
				out.Results[at[j]] = failed(r, p.Err)
			}
		}
		return out
	}
	published, err := s.store.PublishEvents(r.Context(), tok.AccountID,
		&tidings.NewBatch{Events: events, Key: keyFor(g, func(ps []tidings.Published) any { return merge(ps) })})
	if err == tidings.ErrKeyTaken {
		return g.lostAs(w, r, vetBatch(denied))
	}
	if err != nil {
		return err
	}
	for _, p := range published {
		if p.Event != nil {
			s.broker.Publish(tidings.Notice{AccountID: tok.AccountID, Event: p.Event})
		}
	}
	return g.write(w, merge(published))
}

// vetBatch lets a token replay a kept batch answer only if it may publish every event
// the answer shows as stored: the key is the account's, and a token limited to one
// channel must not read, by sending the same bytes, the events of another that a
// wider token stored. An event refused the first time may be refused again (a token
// replaying its own batch gets its answer); denied holds this token's refusals.
func vetBatch(denied []error) vetAnswer {
	return func(kept []byte) ([]byte, error) {
		var a struct {
			Results []struct {
				Status int `json:"status"`
			} `json:"results"`
		}
		if err := json.Unmarshal(kept, &a); err != nil {
			return nil, fmt.Errorf("a kept batch answer: %w", err)
		}
		if len(a.Results) != len(denied) {
			return nil, fmt.Errorf("a kept batch answer of %d results for %d events", len(a.Results), len(denied))
		}
		for i, res := range a.Results {
			if res.Status == http.StatusOK && denied[i] != nil {
				return nil, tidings.Errorf(tidings.EForbidden,
					"this Idempotency-Key's batch stored events[%d], which this token may not publish (%s): "+
						"only a token that may publish every event it stored can replay it", i, tidings.ErrorMessage(denied[i]))
			}
		}
		return kept, nil
	}
}

// failed is an event's refusal in a batch's answer.
func failed(r *http.Request, err error) batchResult {
	p := problemOf(r, err)
	return batchResult{Status: p.Status, Error: p}
}
