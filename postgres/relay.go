package postgres

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"log/slog"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/tidings-dev/tidings"
)

// channelName is the NOTIFY channel of the instances that share the schema "public".
// Channels belong to the database, not to a schema, so deployments that share a
// database in schemas of their own (search_path in the URL) each get another one
// (notifyChannel): otherwise one deployment's session ends and token notices would
// reach the other's instances.
const channelName = "tidings"

// notifyChannel is the NOTIFY channel of the instances whose tables are in schema.
func notifyChannel(schema string) string {
	if schema == "" || schema == "public" {
		return channelName // as before per-schema channels: a rolling upgrade keeps hearing the old instances
	}
	sum := sha256.Sum256([]byte(schema))
	return channelName + "_" + hex.EncodeToString(sum[:8])
}

// maxPayload keeps a notification under PostgreSQL's 8,000-byte limit.
const maxPayload = 7000

// notice names a committed change: an event by ID, or an insight by project and
// title. Notifications carry names, never contents: the receiver reads the rows, so
// nothing of an account passes through the notification channel.
type notice struct {
	Account int64  `json:"a"`
	Event   string `json:"e,omitempty"`
	Project string `json:"p,omitempty"`
	Title   string `json:"t,omitempty"`
}

type message struct {
	From     string       `json:"f"`
	Notices  []notice     `json:"n"`
	Tokens   bool         `json:"t,omitempty"` // a token may have become invalid: forget cached ones
	Sessions []sessionEnd `json:"s,omitempty"` // sessions ended: their live views close
}

// sessionEnd is a tidings.SessionEnd of an account, as the notification carries it.
type sessionEnd struct {
	Account int64  `json:"a"`
	Hash    []byte `json:"h,omitempty"`
	User    int64  `json:"u,omitempty"`
	Keep    []byte `json:"k,omitempty"`
}

// sessionsEnded tells the other instances, with the transaction's commit, that
// sessions ended, so that their live views of those sessions close at once. This
// instance's dashboard publishes the same notice itself.
func (db *DB) sessionsEnded(ctx context.Context, tx pgx.Tx, end sessionEnd) error {
	payload, _ := json.Marshal(message{From: db.instance, Sessions: []sessionEnd{end}})
	_, err := tx.Exec(ctx, `SELECT pg_notify($1, $2)`, db.notifyOn, string(payload))
	return err
}

// tokensInvalidated clears this instance's token cache and tells the other instances
// to clear theirs, after a write that may have made a token invalid. The notice is the
// fast path; without it (listener reconnecting) a cached token still expires within
// tokencache.TTL.
func (db *DB) tokensInvalidated(ctx context.Context) {
	db.tokens.Clear()
	payload, _ := json.Marshal(message{From: db.instance, Tokens: true})
	db.pool.Exec(ctx, `SELECT pg_notify($1, $2)`, db.notifyOn, string(payload))
}

// announce sends the batch's notices with its commit (a NOTIFY in a transaction is
// delivered when, and only if, it commits), in messages under the size limit.
func (b *batch) announce(ctx context.Context) error {
	if len(b.notices) == 0 {
		return nil
	}
	for _, n := range b.notices {
		if n.Event != "" {
			b.db.seen.add(n.Event)
		}
	}
	msg := message{From: b.db.instance}
	size := 0
	send := func() error {
		if len(msg.Notices) == 0 {
			return nil
		}
		payload, _ := json.Marshal(msg)
		msg.Notices, size = msg.Notices[:0], 0
		_, err := b.tx.Exec(ctx, `SELECT pg_notify($1, $2)`, b.db.notifyOn, string(payload))
		return err
	}
	for _, n := range b.notices {
		one, _ := json.Marshal(n)
		if size+len(one)+64 > maxPayload {
			if err := send(); err != nil {
				return err
			}
		}
		msg.Notices = append(msg.Notices, n)
		size += len(one) + 1
	}
	return send()
}

// seenSet remembers the latest event IDs published on this instance, so that the
// catch-up after a lost listener connection publishes nothing twice. Bounded: the
// oldest are forgotten first.
type seenSet struct {
	mu    sync.Mutex
	ids   map[string]struct{}
	order []string
	next  int
}

const seenCap = 16384

func (s *seenSet) add(id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ids == nil {
		s.ids, s.order = make(map[string]struct{}, seenCap), make([]string, seenCap)
	}
	if _, ok := s.ids[id]; ok {
		return false
	}
	if old := s.order[s.next]; old != "" {
		delete(s.ids, old)
	}
	s.order[s.next] = id
	s.next = (s.next + 1) % seenCap
	s.ids[id] = struct{}{}
	return true
}

// catchUpMargin is how far before a lost connection the catch-up reads: commits
// stamped a little earlier than they landed, and clocks of instances that differ a little.
const catchUpMargin = 5 * time.Second

// catchUpLimit bounds the catch-up read; dashboards that missed more reload on their own.
const catchUpLimit = 5000

// Relay publishes to local what other instances commit, until ctx ends. It LISTENs on
// a connection of its own; when that connection is lost it reconnects and reads what
// was committed meanwhile, so that no event is missed.
func (db *DB) Relay(ctx context.Context, local tidings.Broker, log *slog.Logger) {
	var lost time.Time
	backoff := 100 * time.Millisecond
	for ctx.Err() == nil {
		began := time.Now()
		err := db.listen(ctx, local, &lost)
		if ctx.Err() != nil {
			return
		}
		if time.Since(began) > time.Minute {
			backoff = 100 * time.Millisecond // it had been up a while: a fresh outage
		}
		log.Warn("live updates from other instances interrupted; reconnecting", "err", err)
		select {
		case <-ctx.Done():
			return
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, 2*time.Second)
	}
}

func (db *DB) listen(ctx context.Context, local tidings.Broker, lost *time.Time) error {
	conn, err := pgx.ConnectConfig(ctx, db.pool.Config().ConnConfig)
	if err != nil {
		return err
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(ctx, `LISTEN `+db.notifyOn); err != nil {
		return err
	}
	if !lost.IsZero() {
		if err := db.catchUp(ctx, local, *lost); err != nil {
			return err
		}
	}
	for {
		n, err := conn.WaitForNotification(ctx)
		if err != nil {
			*lost = db.now()
			return err
		}
		var m message
		if json.Unmarshal([]byte(n.Payload), &m) != nil || m.From == db.instance {
			continue
		}
		if m.Tokens {
			db.tokens.Clear()
		}
		for _, e := range m.Sessions {
			local.Publish(tidings.Notice{AccountID: e.Account,
				SessionEnd: &tidings.SessionEnd{Hash: e.Hash, UserID: e.User, Keep: e.Keep}})
		}
		db.deliverNotices(ctx, local, m.Notices)
	}
}

// deliverNotices reads what the notices name and publishes it locally.
func (db *DB) deliverNotices(ctx context.Context, local tidings.Broker, ns []notice) {
	var ids []string
	for _, n := range ns {
		if n.Event != "" {
			ids = append(ids, n.Event)
			continue
		}
		if in, err := db.findInsight(ctx, n.Account, n.Project, n.Title); err == nil {
			local.Publish(tidings.Notice{AccountID: n.Account, Insight: in})
		}
	}
	if len(ids) == 0 {
		return
	}
	evs, err := db.eventsByID(ctx, `e.id = ANY($1) ORDER BY e.id`, ids)
	if err != nil {
		return
	}
	for _, ae := range evs {
		if db.seen.add(ae.ev.ID) {
			local.Publish(tidings.Notice{AccountID: ae.account, Event: ae.ev})
		}
	}
	db.notifyOutbox()
}

// catchUp publishes the events and insights committed since shortly before since.
func (db *DB) catchUp(ctx context.Context, local tidings.Broker, since time.Time) error {
	from := ms(since.Add(-catchUpMargin))
	evs, err := db.eventsByID(ctx, `e.created_at >= $1 ORDER BY e.created_at, e.id LIMIT `+itoa(catchUpLimit), from)
	if err != nil {
		return err
	}
	for _, ae := range evs {
		if db.seen.add(ae.ev.ID) {
			local.Publish(tidings.Notice{AccountID: ae.account, Event: ae.ev})
		}
	}
	ins, err := query(ctx, db.pool, func(r pgx.Row) (accountInsight, error) {
		var ai accountInsight
		in, err := scanInsight(r, &ai.account)
		ai.in = in
		return ai, err
	}, `SELECT p.name, `+insightColumns+`, p.account_id FROM insights i JOIN projects p ON p.id = i.project_id
		WHERE i.updated_at >= $1 ORDER BY i.updated_at LIMIT `+itoa(catchUpLimit), from)
	if err != nil {
		return err
	}
	for _, ai := range ins {
		local.Publish(tidings.Notice{AccountID: ai.account, Insight: ai.in})
	}
	db.notifyOutbox()
	return nil
}

type accountInsight struct {
	account int64
	in      *tidings.Insight
}

// Instances that have not been seen for this long no longer count (nor share limits).
const instanceTimeout = 15 * time.Second

// Heartbeat records that this instance is alive and returns how many instances are
// (itself included): they share the cluster's rate limits.
func (db *DB) Heartbeat(ctx context.Context) (int, error) {
	now := db.now()
	if _, err := db.exec(ctx, `INSERT INTO instances (id, seen_at) VALUES ($1, $2)
		ON CONFLICT (id) DO UPDATE SET seen_at = excluded.seen_at`, db.instance, ms(now)); err != nil {
		return 0, err
	}
	if _, err := db.exec(ctx, `DELETE FROM instances WHERE seen_at < $1`, ms(now.Add(-4*instanceTimeout))); err != nil {
		return 0, err
	}
	var n int
	err := db.row(ctx, `SELECT count(*) FROM instances WHERE seen_at >= $1`, ms(now.Add(-instanceTimeout))).Scan(&n)
	return max(n, 1), err
}

// leave removes this instance from the count at once when it stops.
func (db *DB) leave() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	db.pool.Exec(ctx, `DELETE FROM instances WHERE id = $1`, db.instance)
}
