package web

import (
	"bytes"
	"context"
	"net/url"
	"sync"
	"time"

	"golang.org/x/time/rate"

	"github.com/tidings-dev/tidings"
)

// Live-stream limits of the contract: a session or an account that opens more streams
// cannot make every published event cost more.
const (
	DefaultMaxStreamsPerSession = 10
	DefaultMaxStreamsPerAccount = 200
	// streamQueue is how many messages a stream may have unwritten before it is
	// dropped: its browser reconnects and catches up from the store.
	streamQueue = 128
	// streamBytesPerSecond and streamBurst bound what one stream is sent: more than a
	// person can read, far less than a burst of large events would make. A feed that
	// receives more is told it fell behind and stops (the page offers the newest).
	streamBytesPerSecond = 256 << 10
	streamBurst          = 1 << 20
	// sessionCheckEvery bounds how long a stream outlives its session when no notice
	// announces its end (expiry, the CLI on SQLite); sign-out, a password change and a
	// member's removal end it at once, on every instance.
	sessionCheckEvery = 2 * time.Second
)

var errTooManyStreams = tidings.Errorf(tidings.ERateLimited,
	"This account has too many live views open. Close some dashboard tabs and reload.")

// hub fans notices out to the dashboard's open streams. It holds one broker
// subscription per account that has streams open; each event is rendered once per
// distinct feed (project, channel and filter), and the same bytes are queued to every
// stream showing that feed. A stream whose queue is full is dropped, never waited for.
type hub struct {
	srv           *Server
	perSession    int
	perAccount    int
	mu            sync.Mutex
	accounts      map[int64]*accountHub
	seq           uint64 // opening order, to find a session's oldest stream
	insightsEvery time.Duration
	sessionsEvery time.Duration
	running       sync.WaitGroup // each account's fan-out loop and worker
}

// accountHub is one account's subscription and streams; its goroutine does the fan-out.
type accountHub struct {
	id      int64
	sub     tidings.Subscription
	streams map[*liveStream]struct{} // guarded by hub.mu
	stop    chan struct{}
}

// liveStream is one open stream: what it shows and its queue of messages.
type liveStream struct {
	seq      uint64
	account  int64
	userID   int64
	session  string // hash of the session cookie
	project  string
	insights bool      // an insight board; otherwise a feed
	feed     *feedSpec // the feed's filter, nil for an insight board
	out      chan sseMessage
	budget   *rate.Limiter // bytes it may still be sent
	ended    chan struct{}
	endOnce  sync.Once
	why      string // set before ended is closed
}

// feedSpec is a feed as its stream shows it; key identifies feeds that render alike.
type feedSpec struct {
	key    string
	query  tidings.EventQuery
	base   string
	params url.Values
}

// sseMessage is one message ready to write; id is the event's, for deduplication.
type sseMessage struct {
	id    string
	frame []byte
}

// Reasons a stream ends; the browser is told the first two.
const (
	endTooMany = "too-many"   // the session opened more streams than allowed
	endSession = "signed-out" // the session ended
	endBehind  = "behind"     // more arrived than it may be sent: the page offers a reload
	endSlow    = "slow"       // its reader fell behind: it reconnects and catches up
)

func newHub(s *Server, perSession, perAccount int) *hub {
	if perSession <= 0 {
		perSession = DefaultMaxStreamsPerSession
	}
	if perAccount <= 0 {
		perAccount = DefaultMaxStreamsPerAccount
	}
	return &hub{srv: s, perSession: perSession, perAccount: perAccount, accounts: map[int64]*accountHub{},
		insightsEvery: insightEvery, sessionsEvery: sessionCheckEvery}
}

// end closes the stream for the given reason; the first reason wins.
func (ls *liveStream) end(why string) {
	ls.endOnce.Do(func() {
		ls.why = why
		close(ls.ended)
	})
}

// queue hands a message to the stream without waiting; a full queue drops the stream,
// and so does a message over its byte budget.
func (ls *liveStream) queue(m sseMessage, now time.Time) {
	if !ls.budget.AllowN(now, len(m.frame)) {
		ls.end(endBehind)
		return
	}
	select {
	case ls.out <- m:
	default:
		ls.end(endSlow)
	}
}

// open registers a stream. A session over its limit loses its oldest stream; an
// account over its limit refuses the new one.
func (h *hub) open(ls *liveStream) error {
	ls.out = make(chan sseMessage, streamQueue)
	ls.budget = rate.NewLimiter(streamBytesPerSecond, streamBurst)
	ls.ended = make(chan struct{})
	h.mu.Lock()
	defer h.mu.Unlock()
	ah := h.accounts[ls.account]
	var mine []*liveStream
	if ah != nil {
		for o := range ah.streams {
			if o.session == ls.session {
				mine = append(mine, o)
			}
		}
	}
	for len(mine) >= h.perSession {
		oldest := 0
		for i, o := range mine {
			if o.seq < mine[oldest].seq {
				oldest = i
			}
		}
		mine[oldest].end(endTooMany)
		delete(ah.streams, mine[oldest])
		mine = append(mine[:oldest], mine[oldest+1:]...)
	}
	if ah != nil && len(ah.streams) >= h.perAccount {
		return errTooManyStreams
	}
	if ah == nil {
		ah = &accountHub{id: ls.account, sub: h.srv.broker.Subscribe(ls.account),
			streams: map[*liveStream]struct{}{}, stop: make(chan struct{})}
		h.accounts[ls.account] = ah
		h.running.Add(1)
		go h.run(ah)
	}
	h.seq++
	ls.seq = h.seq
	ah.streams[ls] = struct{}{}
	return nil
}

// close unregisters a stream; the last one of an account ends its subscription.
func (h *hub) close(ls *liveStream) {
	ls.end("closed")
	h.mu.Lock()
	defer h.mu.Unlock()
	ah := h.accounts[ls.account]
	if ah == nil {
		return
	}
	delete(ah.streams, ls)
	if len(ah.streams) == 0 {
		h.removeLocked(ah)
	}
}

func (h *hub) removeLocked(ah *accountHub) {
	if h.accounts[ah.id] == ah {
		delete(h.accounts, ah.id)
		close(ah.stop)
	}
}

// streams returns the account's streams that match, under the lock.
func (h *hub) streams(ah *accountHub, match func(*liveStream) bool) []*liveStream {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []*liveStream
	for ls := range ah.streams {
		if match(ls) {
			out = append(out, ls)
		}
	}
	return out
}

// run fans an account's notices out until its last stream closes. It never waits on
// the store: it renders events from what the notice carries, ends the streams of ended
// sessions, and hands insight cards (which read the card's history) to the account's
// worker. A slow store read delays insight cards, never a feed, and drops no stream.
func (h *hub) run(ah *accountHub) {
	defer h.running.Done()
	defer ah.sub.Close()
	work := make(chan map[string]map[string]*tidings.Insight, 1)
	h.running.Add(1)
	go h.work(ah, work)
	flush := time.NewTicker(h.insightsEvery)
	defer flush.Stop()
	pending := map[string]map[string]*tidings.Insight{} // project → title → latest state
	for {
		select {
		case <-ah.stop:
			return
		case n, ok := <-ah.sub.C():
			if !ok {
				// The broker dropped this account's subscription: every stream ends and
				// its browser reconnects and catches up from the store.
				h.mu.Lock()
				for ls := range ah.streams {
					ls.end(endSlow)
				}
				h.removeLocked(ah)
				h.mu.Unlock()
				return
			}
			switch {
			case n.Event != nil:
				h.fanOutEvent(ah, n.Event)
			case n.Insight != nil:
				byTitle := pending[n.Insight.Project]
				if byTitle == nil {
					byTitle = map[string]*tidings.Insight{}
					pending[n.Insight.Project] = byTitle
				}
				byTitle[n.Insight.Title] = n.Insight
			case n.SessionEnd != nil:
				for _, ls := range h.streams(ah, func(ls *liveStream) bool { return n.SessionEnd.Ends(ls.userID, []byte(ls.session)) }) {
					ls.end(endSession)
				}
			}
		case <-flush.C:
			if len(pending) == 0 {
				continue
			}
			select {
			case work <- pending:
				pending = map[string]map[string]*tidings.Insight{}
			default:
				// The worker is still rendering the last batch: these wait for the next
				// tick, newer states replacing older ones, bounded by the insights there are.
			}
		}
	}
}

// work does what needs the store for an account's streams, off the fan-out loop:
// renders insight cards, and checks now and then that each stream's session is alive
// (it expired, or ended in another process that could not announce it).
func (h *hub) work(ah *accountHub, batches <-chan map[string]map[string]*tidings.Insight) {
	defer h.running.Done()
	check := time.NewTicker(h.sessionsEvery)
	defer check.Stop()
	for {
		select {
		case <-ah.stop:
			return
		case batch := <-batches:
			for project, byTitle := range batch {
				h.fanOutInsights(ah, project, byTitle)
			}
		case <-check.C:
			h.checkSessions(ah)
		}
	}
}

// fanOutEvent renders the event once per feed that shows it and queues the bytes.
func (h *hub) fanOutEvent(ah *accountHub, ev *tidings.Event) {
	targets := h.streams(ah, func(ls *liveStream) bool { return !ls.insights && ls.project == ev.Project })
	frames := map[string][]byte{} // feed key → message; nil when the feed does not show it
	now := h.srv.now()
	for _, ls := range targets {
		frame, done := frames[ls.feed.key]
		if !done {
			if ls.feed.query.Matches(ev) {
				frame = h.srv.eventFrame(ev, ls.feed)
			}
			frames[ls.feed.key] = frame
		}
		if frame != nil {
			ls.queue(sseMessage{id: ev.ID, frame: frame}, now)
		}
	}
}

// fanOutInsights renders each changed insight card once and queues it to the boards.
func (h *hub) fanOutInsights(ah *accountHub, project string, byTitle map[string]*tidings.Insight) {
	targets := h.streams(ah, func(ls *liveStream) bool { return ls.insights && ls.project == project })
	if len(targets) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for _, in := range byTitle {
		card, err := h.srv.insightCard(ctx, ah.id, in)
		if err != nil {
			h.srv.log.Warn("rendering an insight card", "err", err)
			continue
		}
		frame := sseFrame("", "insight", card)
		now := h.srv.now()
		for _, ls := range targets {
			ls.queue(sseMessage{frame: frame}, now)
		}
	}
}

// checkSessions ends the streams whose session has ended without a notice: expired,
// or ended by a process that could not announce it (the CLI on SQLite).
func (h *hub) checkSessions(ah *accountHub) {
	bySession := map[string][]*liveStream{}
	for _, ls := range h.streams(ah, func(*liveStream) bool { return true }) {
		bySession[ls.session] = append(bySession[ls.session], ls)
	}
	ctx, cancel := context.WithTimeout(context.Background(), h.sessionsEvery)
	defer cancel()
	now := h.srv.now()
	for hash, streams := range bySession {
		_, _, _, err := h.srv.store.FindSession(ctx, []byte(hash), now)
		if tidings.ErrorCode(err) != tidings.ENotFound {
			continue // alive, or the store did not answer: check again next time
		}
		for _, ls := range streams {
			ls.end(endSession)
		}
	}
}

// eventFrame is the SSE message of an event's card in one feed.
func (s *Server) eventFrame(ev *tidings.Event, f *feedSpec) []byte {
	s.cardRenders.Add(1)
	var b bytes.Buffer
	if err := s.pages.raw.ExecuteTemplate(&b, "event-card", s.eventView(ev, f.base, f.params)); err != nil {
		s.log.Error("rendering an event card", "err", err)
		return nil
	}
	return sseFrame(ev.ID, "event", b.String())
}
