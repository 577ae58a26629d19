package web

import (
	"bufio"
	"net/http"
	"strings"
	"time"

	"github.com/tidings-dev/tidings"
)

// heartbeat keeps proxies from closing an idle stream.
const heartbeat = 25 * time.Second

// insightEvery is how often a board gets a changed insight card at most: a counter
// incremented thousands of times a second is redrawn four times a second, with its
// latest value, and costs one history read per redraw rather than per increment.
const insightEvery = 250 * time.Millisecond

// Catch-up of a reconnecting feed (the contract's "Live streams").
const (
	// maxCatchUp is how many missed events a reconnect replays, and maxCatchUpBytes
	// how much of them; past either the page reloads itself instead.
	maxCatchUp      = 5000
	maxCatchUpBytes = 8 << 20
	// catchUpPage is how many missed events are read at a time, bounding memory.
	catchUpPage = 50
	// catchUpMargin reaches back before the last event the browser saw: the events of
	// one group commit are announced in the order their requests finish, not in ID
	// order, so one with a smaller ID may arrive after the one the browser names.
	// The page drops the repeats by element id.
	catchUpMargin = time.Second
	// writeTimeout bounds one write to a stream: a browser that stops reading is cut off.
	writeTimeout = 10 * time.Second
)

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
	ls := &liveStream{account: sess.account.ID, userID: sess.user.ID, session: string(sess.hash), project: project,
		insights: v.Get("insights") == "1"}
	last := r.Header.Get("Last-Event-ID")
	if last == "" {
		last = v.Get("last")
	}
	if ls.insights {
		last = "" // an insight board shows current values; it has nothing to catch up on
	} else {
		q, params, err := s.feedQuery(r) // the feed's filter, for events and for their chips' links
		if err != nil {
			return err
		}
		base := feedURL(project, v.Get("channel")) // the page's; q.Channel may be its search's

		ls.feed = &feedSpec{key: base + "?" + params.Encode(), query: q, base: base, params: params}
	}

	// Register before catching up, so that nothing falls between the two.
	if err := s.hub.open(ls); err != nil {
		return err
	}
	defer s.hub.close(ls)

	rc := http.NewResponseController(w)
	rc.SetReadDeadline(time.Time{}) // a stream outlives the server's request timeouts
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	out := bufio.NewWriterSize(w, 32<<10)
	write := func(b []byte) bool {
		rc.SetWriteDeadline(time.Now().Add(writeTimeout))
		_, err := out.Write(b)
		return err == nil
	}
	flush := func() bool {
		rc.SetWriteDeadline(time.Now().Add(writeTimeout))
		return out.Flush() == nil && rc.Flush() == nil
	}
	if !write([]byte("retry: 2000\n\n")) {
		return nil
	}

	sent, ok := s.catchUp(r, ls, last, write)
	if !ok || !flush() {
		return nil // the stream has begun: the browser retries
	}

	tick := time.NewTicker(heartbeat)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-s.closing:
			return nil // the browser reconnects to the next server and catches up
		case <-ls.ended:
			switch ls.why {
			case endTooMany, endSession, endBehind:
				write(sseFrame("", "end", ls.why))
				flush()
			}
			return nil
		case <-tick.C:
			if !write([]byte(": ping\n\n")) || !flush() {
				return nil
			}
		case m := <-ls.out:
			// Write what is queued in one go, flushing once.
			for more := true; more; {
				if m.id == "" || !sent[m.id] {
					if !write(m.frame) {
						return nil
					}
				}
				select {
				case m = <-ls.out:
				default:
					more = false
				}
			}
			if !flush() {
				return nil
			}
		}
	}
}

// catchUp replays what a reconnecting feed missed since the event last, oldest first,
// and returns the IDs it sent so that the live messages already queued are not sent
// twice. More than maxCatchUp missed: it tells the page to reload instead.
func (s *Server) catchUp(r *http.Request, ls *liveStream, last string, write func([]byte) bool) (map[string]bool, bool) {
	if last == "" {
		return nil, true
	}
	from := last
	if t, ok := tidings.EventIDTime(last); ok {
		from = tidings.EventIDFloor(t.Add(-catchUpMargin))
	}
	ctx := r.Context()
	n, err := s.store.CountEventsAfter(ctx, ls.account, ls.project, from, maxCatchUp+1)
	if err != nil {
		return nil, false
	}
	if n > maxCatchUp {
		return nil, write(sseFrame("", "reload", "more events arrived than a reconnect replays"))
	}
	sent := make(map[string]bool, n)
	written := 0
	for {
		missed, err := s.store.EventsAfter(ctx, ls.account, ls.project, from, catchUpPage)
		if err != nil {
			return nil, false
		}
		for _, ev := range missed {
			sent[ev.ID] = true
			if ev.ID == last || !ls.feed.query.Matches(ev) {
				continue
			}
			frame := s.eventFrame(ev, ls.feed)
			if written += len(frame); written > maxCatchUpBytes {
				return nil, write(sseFrame("", "reload", "more was missed than a reconnect replays"))
			}
			if frame != nil && !write(frame) {
				return nil, false
			}
		}
		if len(missed) < catchUpPage || len(sent) >= maxCatchUp+catchUpPage {
			return sent, true
		}
		from = missed[len(missed)-1].ID
	}
}

// sseFrame is one server-sent-events message. SSE ends a line at CR, LF or CR LF, so
// the data is split at each of them and every piece gets its own "data:" field: no
// input can start a line of its own (an "id:" or "retry:" that would poison the
// browser's Last-Event-ID). The id and event name come from us, never from input.
func sseFrame(id, event, data string) []byte {
	var b strings.Builder
	b.Grow(len(data) + 64)
	if id != "" {
		b.WriteString("id: " + oneLine(id) + "\n")
	}
	b.WriteString("event: " + oneLine(event) + "\n")
	for {
		i := strings.IndexAny(data, "\r\n")
		if i < 0 {
			break
		}
		b.WriteString("data: " + data[:i] + "\n")
		if data[i] == '\r' && i+1 < len(data) && data[i+1] == '\n' {
			i++
		}
		data = data[i+1:]
	}
	b.WriteString("data: " + data + "\n\n")
	return []byte(b.String())
}

// oneLine drops line breaks from a field that must stay on its line.
func oneLine(s string) string {
	return strings.NewReplacer("\r", "", "\n", "").Replace(s)
}
