package web

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/tidings-dev/tidings"
)

// heartbeat keeps proxies from closing an idle stream.
const heartbeat = 25 * time.Second

// insightEvery is how often a stream sends a changed insight card at most: a counter
// incremented thousands of times a second is redrawn four times a second, with its
// latest value, and costs one history read per redraw rather than per increment.
const insightEvery = 250 * time.Millisecond

// stream sends a project's new events (filtered like the feed) as server-sent events,
// or with ?insights=1 its insight changes. Each event carries its ID, so a browser that
// reconnects sends Last-Event-ID and gets what it missed from the store before the
// live notices.
func (s *Server) stream(w http.ResponseWriter, r *http.Request) error {
	sess := sessionFrom(r)
	ctx := r.Context()
	project := r.PathValue("project")
	if _, err := s.store.FindProject(ctx, sess.account.ID, project); err != nil {
		return err
	}
	v := r.URL.Query()
	q, params := feedQuery(r) // the feed's filter, for events and for their chips' links
	q.Channel = v.Get("channel")
	base := feedURL(project, q.Channel)
	insights := v.Get("insights") == "1"
	last := r.Header.Get("Last-Event-ID")
	if last == "" {
		last = v.Get("last")
	}
	if insights {
		last = "" // an insight board shows current values; it has nothing to catch up on
	}

	// Subscribe before catching up, so that nothing falls between the two.
	sub := s.broker.Subscribe(sess.account.ID)
	defer sub.Close()

	rc := http.NewResponseController(w)
	rc.SetReadDeadline(time.Time{}) // a stream outlives the server's request timeouts
	rc.SetWriteDeadline(time.Time{})
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	fmt.Fprint(w, "retry: 2000\n\n")

	send := func(ev *tidings.Event) error {
		if ev.Project != project || (last != "" && ev.ID <= last) {
			return nil
		}
		last = ev.ID
		if !q.Matches(ev) {
			return nil
		}
		var b bytes.Buffer
		if err := s.pages.raw.ExecuteTemplate(&b, "event-card", s.eventView(ev, base, params)); err != nil {
			return err
		}
		return writeSSE(w, ev.ID, "event", b.String())
	}
	if last != "" {
		missed, err := s.store.EventsAfter(ctx, sess.account.ID, project, last, 500)
		if err != nil {
			return nil // the stream has begun: the browser retries
		}
		for _, ev := range missed {
			if err := send(ev); err != nil {
				return nil
			}
		}
	}
	rc.Flush()

	tick := time.NewTicker(heartbeat)
	defer tick.Stop()
	flush := time.NewTicker(insightEvery)
	defer flush.Stop()
	pending := map[string]*tidings.Insight{} // latest state of changed insights, by title
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-s.closing:
			return nil // the browser reconnects to the next server and catches up
		case <-tick.C:
			if _, err := io.WriteString(w, ": ping\n\n"); err != nil {
				return nil
			}
		case <-flush.C:
			if len(pending) == 0 {
				continue
			}
			for title, in := range pending {
				card, err := s.insightCard(r, in)
				if err != nil || writeSSE(w, "", "insight", card) != nil {
					return nil
				}
				delete(pending, title)
			}
		case n, ok := <-sub.C():
			if !ok {
				return nil // fell behind: the browser reconnects and catches up from the store
			}
			switch {
			case n.Event != nil && !insights:
				if send(n.Event) != nil {
					return nil
				}
			case n.Insight != nil && insights && n.Insight.Project == project:
				pending[n.Insight.Title] = n.Insight
				continue // sent by the next flush
			default:
				continue
			}
		}
		rc.Flush()
	}
}

// writeSSE writes one message; every line of data gets its own "data:" field.
func writeSSE(w io.Writer, id, event, data string) error {
	var b strings.Builder
	if id != "" {
		b.WriteString("id: " + id + "\n")
	}
	b.WriteString("event: " + event + "\n")
	for _, line := range strings.Split(data, "\n") {
		b.WriteString("data: " + line + "\n")
	}
	b.WriteString("\n")
	_, err := io.WriteString(w, b.String())
	return err
}
