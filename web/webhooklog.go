package web

import (
	"context"
	"strconv"
	"time"

	"github.com/tidings-dev/tidings"
)

// deliveryGroup is what a webhook's log shows of one message (an event, or a test):
// its latest result on one line, retries folded under it. People ask "did my event
// arrive?", not "what was attempt 7?": twenty lines of one failing event hid the rest.
type deliveryGroup struct {
	Latest   attemptRow
	Attempts []attemptRow // every attempt kept, newest first (the store keeps the latest 20 of a webhook)
	Tries    int          // the latest attempt's number: earlier attempts may have been pruned
	NextAt   time.Time    // when it is tried again; zero: it is not
	Result   string       // "delivered after 3 attempts", "failed 20 times: DNS error, next retry in 4 min"
	State    string       // "ok", "retrying" or "failed": the line's colour and mark
}

// groupAttempts folds attempts (newest first) by message, in the order of each
// message's latest attempt; retries are the pending deliveries' next times by message.
func groupAttempts(attempts []attemptRow, retries map[string]time.Time, now time.Time) []*deliveryGroup {
	var groups []*deliveryGroup
	byMessage := map[string]*deliveryGroup{}
	for _, a := range attempts {
		g := byMessage[a.MessageID]
		if g == nil {
			g = &deliveryGroup{Latest: a, Tries: a.Attempt}
			byMessage[a.MessageID] = g
			groups = append(groups, g)
		}
		g.Attempts = append(g.Attempts, a)
	}
	for _, g := range groups {
		g.Tries = max(g.Tries, len(g.Attempts))
		switch {
		case g.Latest.OK():
			g.State, g.Result = "ok", "delivered"
			if g.Tries > 1 {
				g.Result += " after " + strconv.Itoa(g.Tries) + " attempts"
			}
		default:
			g.Result = "failed"
			if g.Tries > 1 {
				g.Result += " " + strconv.Itoa(g.Tries) + " times"
			}
			g.Result += ": " + failure(g.Latest.WebhookAttempt)
			if next, ok := retries[g.Latest.MessageID]; ok {
				g.State, g.NextAt = "retrying", next
				g.Result += ", next retry " + until(next, now)
			} else {
				g.State = "failed"
				g.Result += ", gave up"
			}
		}
	}
	return groups
}

// failure says why an attempt failed: the error for people, or the bare status.
func failure(a *tidings.WebhookAttempt) string {
	if a.Error != "" {
		return a.Error
	}
	return "HTTP " + strconv.Itoa(a.Status)
}

// until is how far ahead t is, as "in 4 min"; a time already past is "now" (the
// runner is on it).
func until(t, now time.Time) string {
	d := t.Sub(now)
	switch {
	case d < 30*time.Second:
		return "now"
	case d < time.Minute:
		return "in less than a minute"
	case d < time.Hour:
		return "in " + strconv.Itoa(int((d+30*time.Second)/time.Minute)) + " min"
	case d < 24*time.Hour:
		return "in " + strconv.Itoa(int((d+30*time.Minute)/time.Hour)) + " h"
	}
	return "on " + t.UTC().Format("2 Jan 15:04 UTC")
}

// deliveryLog reads a webhook's attempts and folds them by message, naming the event
// of each (each event read once).
func (s *Server) deliveryLog(ctx context.Context, account int64, hookID string) ([]*deliveryGroup, error) {
	attempts, err := s.store.ListWebhookAttempts(ctx, account, hookID)
	if err != nil || len(attempts) == 0 {
		return nil, err
	}
	retries, err := s.store.WebhookRetries(ctx, account, hookID)
	if err != nil {
		return nil, err
	}
	names := map[string]*tidings.Event{}
	rows := make([]attemptRow, 0, len(attempts))
	for _, a := range attempts {
		ar, err := s.attemptRow(ctx, account, a, names)
		if err != nil {
			return nil, err
		}
		rows = append(rows, ar)
	}
	return groupAttempts(rows, retries, s.now()), nil
}
