package api

import (
	"bufio"
	"context"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/tidings-dev/tidings"
)

// Live stream limits (api-contract.md, "Inbound hooks and the live stream").
const (
	// MaxStreamsPerToken is how many streams one token may hold open: the next one
	// closes the token's oldest.
	MaxStreamsPerToken = 10
	// streamHeartbeat keeps proxies from closing an idle stream.
	streamHeartbeat = 15 * time.Second
	// streamTokenCheck is how often the tokens of open streams are read from the
	// database (ActiveTokens: never the token cache, whose TTL would add its second):
	// a revoked token's streams end within this and one read, well within the
	// contract's second.
	streamTokenCheck = 250 * time.Millisecond
	// streamTokensPerRead bounds the ids of one ActiveTokens read.
	streamTokensPerRead = 500
	// streamWriteTimeout bounds one write: a client that stops reading is cut off.
	streamWriteTimeout = 10 * time.Second
	// streamCatchUpPage is how many missed events are read at a time.
	streamCatchUpPage = 100
)

// streams is the API's open live streams, by token, to close a token's oldest and
// the streams of a revoked token. The bound of MaxStreamsPerToken is this instance's:
// instances do not share their streams.
type streams struct {
	mu       sync.Mutex
	byToken  map[string][]*apiStream
	closing  chan struct{}
	once     sync.Once
	watching bool // watchTokens runs: it stops when no stream is left
}

// apiStream is one open stream; ended closes when something else ends it.
type apiStream struct {
	ended chan struct{}
	once  sync.Once
}

func (st *apiStream) end() { st.once.Do(func() { close(st.ended) }) }

// open registers a stream of the token, ending its oldest past MaxStreamsPerToken.
// watch says that no watchTokens runs: the caller starts one.
func (ss *streams) open(token string) (st *apiStream, watch bool) {
	st = &apiStream{ended: make(chan struct{})}
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if ss.byToken == nil {
		ss.byToken = map[string][]*apiStream{}
	}
	mine := ss.byToken[token]
	for len(mine) >= MaxStreamsPerToken {
		mine[0].end()
		mine = mine[1:]
	}
	ss.byToken[token] = append(mine, st)
	watch, ss.watching = !ss.watching, true
	return st, watch
}

// tokens returns the tokens that have open streams; none (and the watcher stops).
func (ss *streams) tokens() []string {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if len(ss.byToken) == 0 {
		ss.watching = false
		return nil
	}
	ids := make([]string, 0, len(ss.byToken))
	for id := range ss.byToken {
		ids = append(ids, id)
	}
	return ids
}

// endUnless ends the streams of the tokens of ids that active does not list.
func (ss *streams) endUnless(ids, active []string) {
	keep := make(map[string]bool, len(active))
	for _, id := range active {
		keep[id] = true
	}
	ss.mu.Lock()
	defer ss.mu.Unlock()
	for _, id := range ids {
		if !keep[id] {
			for _, st := range ss.byToken[id] {
				st.end()
			}
		}
	}
}

// watchTokens ends the streams of revoked (or deleted) tokens: every
// streamTokenCheck it reads the tokens that have streams open on this instance from
// the database, in one read per streamTokensPerRead tokens however many streams each
// holds, and ends the streams of those no longer active. It stops when no stream is
// left (the next stream starts it again).
func (s *Server) watchTokens() {
	tick := time.NewTicker(streamTokenCheck)
	defer tick.Stop()
	closing := s.streams.closed()
	failing := false
	for {
		select {
		case <-tick.C:
		case <-closing:
			closing = nil // once: the streams are ending, the next tick finds them gone
		}
		ids := s.streams.tokens()
		if ids == nil {
			return
		}
		var active []string
		var err error
		for from := 0; from < len(ids) && err == nil; from += streamTokensPerRead {
			ctx, cancel := context.WithTimeout(context.Background(), 4*streamTokenCheck)
			var some []string
			some, err = s.store.ActiveTokens(ctx, ids[from:min(from+streamTokensPerRead, len(ids))])
			cancel()
			active = append(active, some...)
		}
		if err != nil {
			// Streams are kept while the database cannot say (it is down: nothing is
			// published either); said once until it answers again.
			if !failing {
				s.log.Warn("checking the tokens of live streams", "err", err)
			}
			failing = true
			continue
		}
		failing = false
		s.streams.endUnless(ids, active)
	}
}

func (ss *streams) close(token string, st *apiStream) {
	st.end()
	ss.mu.Lock()
	defer ss.mu.Unlock()
	mine := ss.byToken[token]
	for i, o := range mine {
		if o == st {
			mine = append(mine[:i:i], mine[i+1:]...)
			break
		}
	}
	if len(mine) == 0 {
		delete(ss.byToken, token)
	} else {
		ss.byToken[token] = mine
	}
}

// closed is closed when the server shuts down.
func (ss *streams) closed() <-chan struct{} {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if ss.closing == nil {
		ss.closing = make(chan struct{})
	}
	return ss.closing
}

// CloseStreams ends every open live stream (GET /v1/events/stream): the server shuts
// down, and its clients reconnect elsewhere and resume with Last-Event-ID.
func (s *Server) CloseStreams() {
	s.streams.closed()
	s.streams.once.Do(func() {
		s.streams.mu.Lock()
		close(s.streams.closing)
		s.streams.mu.Unlock()
	})
}

// handleStream follows a project's new events: GET /v1/events/stream?project=P
// [&channel=C][&tag=k:v…][&q=…], as server-sent events (id: the event's ID, data: the
// event as POST /v1/log answers it) or, when Accept asks for application/x-ndjson, one
// JSON line per event. Last-Event-ID (or last_event_id) resumes after that event: the
// missed events from the store, then the live ones, none twice.
func (s *Server) handleStream(w http.ResponseWriter, r *http.Request) error {
	tok, err := s.authenticate(w, r)
	if err != nil {
		return err
	}
	q, err := parseEventQuery(r, s.now())
	if err != nil {
		return err
	}
	if err := tok.AllowRead(q.Project, q.Channel); err != nil {
		return err
	}
	ctx := r.Context()
	if err := s.streamTarget(ctx, tok.AccountID, q); err != nil {
		return err
	}
	last := r.Header.Get("Last-Event-ID")
	if last == "" {
		last = r.URL.Query().Get("last_event_id")
	}
	if last != "" {
		if _, ok := tidings.EventIDTime(last); !ok {
			return tidings.Errorf(tidings.EValidation, "Last-Event-ID must be an event's ID as the stream sent it (got %q)", last)
		}
	}
	ndjson := strings.Contains(r.Header.Get("Accept"), "application/x-ndjson")

	// Subscribe before catching up, so that nothing falls between the two.
	sub := s.broker.Subscribe(tok.AccountID)
	defer sub.Close()
	st, watch := s.streams.open(tok.ID)
	defer s.streams.close(tok.ID, st)
	if watch {
		go s.watchTokens()
	}
	closing := s.streams.closed()

	rc := http.NewResponseController(w)
	rc.SetReadDeadline(time.Time{}) // a stream outlives the server's request timeouts
	h := w.Header()
	if ndjson {
		h.Set("Content-Type", "application/x-ndjson")
	} else {
		h.Set("Content-Type", "text/event-stream")
	}
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	out := bufio.NewWriterSize(w, 32<<10)
	write := func(b []byte) bool {
		rc.SetWriteDeadline(time.Now().Add(streamWriteTimeout))
		_, err := out.Write(b)
		return err == nil
	}
	flush := func() bool {
		rc.SetWriteDeadline(time.Now().Add(streamWriteTimeout))
		return out.Flush() == nil && rc.Flush() == nil
	}
	frame := func(ev *tidings.Event) []byte {
		j := ev.JSON()
		b, err := encodeJSON(&j)
		if err != nil {
			s.log.Error("encoding a streamed event", "err", err)
			return nil
		}
		if ndjson {
			return b
		}
		b = append([]byte("id: "+ev.ID+"\ndata: "), strings.TrimSuffix(string(b), "\n")...)
		return append(b, "\n\n"...)
	}
	if !ndjson && !write([]byte("retry: 2000\n\n")) {
		return nil
	}

	// Catch up: the events after last, oldest first. sent keeps their IDs so that the
	// live notices already queued are not sent twice.
	var sent map[string]bool
	if last != "" {
		sent = map[string]bool{}
		from := last
		for {
			missed, err := s.store.EventsAfter(ctx, tok.AccountID, q.Project, from, streamCatchUpPage)
			if err != nil {
				s.log.Warn("catching up a stream", "err", err)
				return nil // the stream has begun: the client reconnects
			}
			for _, ev := range missed {
				sent[ev.ID] = true
				if q.Matches(ev) && !write(frame(ev)) {
					return nil
				}
			}
			if len(missed) < streamCatchUpPage {
				break
			}
			from = missed[len(missed)-1].ID
		}
	}
	if !flush() {
		return nil
	}

	beat := time.NewTicker(streamHeartbeat)
	defer beat.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-closing:
			return nil
		case <-st.ended:
			return nil // the token was revoked (watchTokens), or opened too many and this is its oldest
		case <-beat.C:
			ping := []byte(": ping\n\n")
			if ndjson {
				ping = []byte("\n") // an empty line: readers of NDJSON skip it
			}
			if !write(ping) || !flush() {
				return nil
			}
		case n, ok := <-sub.C():
			if !ok {
				return nil // it fell behind the broker: the client reconnects and catches up
			}
			// Write what is queued in one go, flushing once.
			for more := true; more; {
				if ev := n.Event; ev != nil && ev.Project == q.Project && !sent[ev.ID] && q.Matches(ev) {
					if !write(frame(ev)) {
						return nil
					}
				}
				select {
				case n, ok = <-sub.C():
					if !ok {
						flush()
						return nil
					}
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

// streamTarget refuses a stream of a project or channel that does not exist, as GET
// /v1/events does: a typo must not follow nothing forever. Errors: EProjectNotFound,
// EChannelNotFound.
func (s *Server) streamTarget(ctx context.Context, accountID int64, q tidings.EventQuery) error {
	if q.Channel == "" {
		_, err := s.store.FindProject(ctx, accountID, q.Project)
		return err
	}
	channels, err := s.store.ListChannels(ctx, accountID, q.Project)
	if err != nil {
		return err
	}
	for _, c := range channels {
		if c.Name == q.Channel {
			return nil
		}
	}
	return tidings.ChannelNotFound(q.Project, q.Channel)
}
