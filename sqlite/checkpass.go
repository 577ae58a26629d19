package sqlite

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/binary"
	"fmt"
	"hash/maphash"
	"math/rand/v2"
	"sync"

	"github.com/tidings-dev/tidings"
)

// The tag index has a row (tag, ts, seq, channel) for each tag of each event. Looking
// each row up on the other side costs a random B-tree search, about 2 µs, and a store
// of 10 million events has 35 million rows. So the check reads both sides in order
// instead, each in parts on connections that share one snapshot, and compares per
// project a count and two sums of a hash of the rows:
//
//	Σ h(project, key, value) · f(seq, ts, channel)   (mod a prime, for two primes)
//
// The events' side parses each event's tags (the events pass); the index's side sums
// f over each tag's rows in SQL (f is arithmetic that SQL and Go compute alike) and
// multiplies by h of the tag's dictionary entry. A missing, surplus or wrong row changes
// a sum unless it happens to cancel, about once in 2^62 with random coefficients drawn
// for each check. Only a project whose sums differ is read row by row, to name its rows.
// The same pass counts each user's events for the people table.

// checkPrimes are the moduli of the two sums (each < 2^31, so that a product of two
// residues fits in an int64, and a sum of 2^32 of them too).
var checkPrimes = [2]int64{2147483647, 2147483629}

// rowHash is f(seq, ts, channel) for both primes: (seq·a + ts mod p)·(ts·b + channel
// mod p) mod p with random a and b, not linear, so that values swapped between two rows
// change it. a < 2^27 and b < 2^19 keep every product under 2^63 for seq < 2^35 and
// ts < 2^43 (unix ms until the year 2248), so SQL computes it as Go does (SQLite's %
// truncates toward zero, as Go's does): eight operations a row, which matter at 35
// million rows.
type rowHash struct{ a, b [2]int64 }

func newRowHash() rowHash {
	var f rowHash
	for k := range checkPrimes {
		f.a[k], f.b[k] = 1+rand.Int64N(1<<27-1), 1+rand.Int64N(1<<19-1)
	}
	return f
}

func (f rowHash) of(k int, seq, ts, channel int64) int64 {
	p := checkPrimes[k]
	return (seq*f.a[k] + ts) % p * ((ts*f.b[k] + channel) % p) % p
}

// sql is f(t.seq, t.ts, t.channel_id) for prime k as an SQL expression.
func (f rowHash) sql(k int) string {
	p := checkPrimes[k]
	return fmt.Sprintf("((t.seq * %d + t.ts) %% %d * ((t.ts * %d + t.channel_id) %% %d) %% %d)", f.a[k], p, f.b[k], p, p)
}

// tagHash is h(project, key, value) for both primes.
type tagHash struct{ seed maphash.Seed }

func newTagHash() tagHash { return tagHash{maphash.MakeSeed()} }

func (t tagHash) of(project int64, key, value []byte) [2]int64 {
	var h maphash.Hash
	h.SetSeed(t.seed)
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], uint64(project))
	h.Write(b[:])
	h.Write(key)
	h.WriteByte(0)
	h.Write(value)
	sum := h.Sum64() // one 64-bit hash: its low and high bits give the two residues
	return [2]int64{int64(sum % uint64(checkPrimes[0])), int64((sum>>32 ^ sum<<32) % uint64(checkPrimes[1]))}
}

// tagSums is one project's side of the comparison.
type tagSums struct {
	rows int64
	sum  [2]int64
}

func (s *tagSums) add(h, f [2]int64, n int64) {
	s.rows += n
	for k, p := range checkPrimes {
		s.sum[k] = (s.sum[k] + h[k]*f[k]%p) % p
	}
}

type personKey struct {
	project int64
	user    string
}

// usersOf is each project's users' stats.
type usersOf map[int64]map[string]*userStats

type userStats struct{ n, first, last int64 }

// eventPass is what one range of the events adds up to.
type eventPass struct {
	events   int64
	tags     map[int64]*tagSums // by project
	users    usersOf
	problems []tidings.Inconsistency // events whose tags could not be read
}

// passEvents reads the events with lo < seq <= hi.
// channels maps each channel to its project: an event's channel must be of its project.
func passEvents(ctx context.Context, tx *sql.Tx, lo, hi int64, f rowHash, th tagHash, channels map[int64]int64) (*eventPass, error) {
	rows, err := tx.QueryContext(ctx, `SELECT seq, project_id, channel_id, ts, user_id, created_at, tags FROM events WHERE seq > ? AND seq <= ?`, lo, hi)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := &eventPass{tags: map[int64]*tagSums{}, users: usersOf{}}
	var last *tagSums
	var users map[string]*userStats
	lastProject, lastUsersProject := int64(-1), int64(-1)
	var user, tags sql.RawBytes
	for rows.Next() {
		var seq, project, channel, ts, created int64
		if err := rows.Scan(&seq, &project, &channel, &ts, &user, &created, &tags); err != nil {
			return nil, err
		}
		out.events++
		if of, ok := channels[channel]; !ok || of != project {
			found := "none"
			if ok {
				found = fmt.Sprintf("channel %d of project %d", channel, of)
			}
			out.problems = append(out.problems, tidings.Inconsistency{Kind: "event.channel", Where: fmt.Sprintf("seq %d", seq),
				Expected: fmt.Sprintf("channel of project %d", project), Found: found})
		}
		if len(user) > 0 {
			if project != lastUsersProject {
				if users = out.users[project]; users == nil {
					users = map[string]*userStats{}
					out.users[project] = users
				}
				lastUsersProject = project
			}
			u := users[string(user)]
			if u == nil {
				u = &userStats{first: created, last: created}
				users[string(user)] = u
			}
			u.n++
			u.first, u.last = min(u.first, created), max(u.last, created)
		}
		if project != lastProject {
			if last = out.tags[project]; last == nil {
				last = &tagSums{}
				out.tags[project] = last
			}
			lastProject = project
		}
		fr := [2]int64{f.of(0, seq, ts, channel), f.of(1, seq, ts, channel)}
		ok := eachTag(tags, func(key, value []byte) {
			last.add(th.of(project, key, value), fr, 1)
		})
		if !ok {
			out.problems = append(out.problems, tidings.Inconsistency{Kind: "event.tags",
				Where: fmt.Sprintf("project %d seq %d", project, seq), Expected: "a JSON object of tags", Found: string(tags)})
		}
	}
	return out, rows.Err()
}

// tagGroups is what one range of the tag index adds up to.
type tagGroups struct {
	tags     map[int64]*tagSums // by project
	problems []tidings.Inconsistency
}

// passTagIndex reads the tag index's rows with lo < tag_id <= hi, tag by tag in the
// index's order, and the dictionary's entries for them.
func passTagIndex(ctx context.Context, tx *sql.Tx, lo, hi int64, f rowHash, th tagHash) (*tagGroups, error) {
	rows, err := tx.QueryContext(ctx, `SELECT s.tag_id, s.n, s.f0, s.f1, g.id IS NULL, coalesce(g.project_id, 0), coalesce(g.key, ''), coalesce(g.value, ''), coalesce(g.count, 0)
		FROM (SELECT t.tag_id, count(*) AS n, sum(`+f.sql(0)+`) AS f0, sum(`+f.sql(1)+`) AS f1
			FROM event_tags t WHERE t.tag_id > ? AND t.tag_id <= ? GROUP BY t.tag_id) s
		LEFT JOIN tags g ON g.id = s.tag_id`, lo, hi)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := &tagGroups{tags: map[int64]*tagSums{}}
	var key, value sql.RawBytes
	for rows.Next() {
		var tag, n, project, count int64
		var fs [2]int64
		var noEntry bool
		if err := rows.Scan(&tag, &n, &fs[0], &fs[1], &noEntry, &project, &key, &value, &count); err != nil {
			return nil, err
		}
		if noEntry {
			out.problems = append(out.problems, tidings.Inconsistency{Kind: "tag_index.orphan", Where: fmt.Sprintf("tag %d", tag),
				Expected: "an entry of the tag dictionary", Found: fmt.Sprintf("%d rows of a tag that has none", n)})
			continue
		}
		if n != count {
			out.problems = append(out.problems, tidings.Inconsistency{Kind: "tag_count", Where: fmt.Sprintf("tag %d (%s:%s)", tag, key, value),
				Expected: fmt.Sprint(n), Found: fmt.Sprint(count)})
		}
		s := out.tags[project]
		if s == nil {
			s = &tagSums{}
			out.tags[project] = s
		}
		for k, p := range checkPrimes {
			fs[k] %= p
		}
		s.add(th.of(project, key, value), fs, n)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	// Entries whose count says they have rows, but none are in the index.
	err = eachRow(ctx, tx, `SELECT 'tag ' || id || ' (' || key || ':' || value || ')', 0, count FROM tags g
		WHERE id > ? AND id <= ? AND count != 0 AND NOT EXISTS (SELECT 1 FROM event_tags t WHERE t.tag_id = g.id)`,
		func(where, expected, found string) {
			out.problems = append(out.problems, tidings.Inconsistency{Kind: "tag_count", Where: where, Expected: expected, Found: found})
		}, lo, hi)
	return out, err
}

// splitRange cuts (lo, hi] into n ranges.
func splitRange(lo, hi int64, n int) [][2]int64 {
	var out [][2]int64
	step := max((hi-lo+int64(n)-1)/int64(n), 1)
	for a := lo; a < hi; a += step {
		out = append(out, [2]int64{a, min(a+step, hi)})
	}
	if len(out) == 0 {
		out = append(out, [2]int64{lo, hi})
	}
	return out
}

// tagPass is the events pass and the tag index's, run side by side, each in parts.
type tagPass struct {
	done   chan struct{}
	err    error
	events eventPass
	index  tagGroups
}

// startTagPass starts the passes on txs (all of one snapshot), half on the events and
// half on the tag index; wait for them with result.
func startTagPass(ctx context.Context, txs []*sql.Tx) *tagPass {
	p := &tagPass{done: make(chan struct{})}
	go func() {
		defer close(p.done)
		p.err = p.run(ctx, txs)
	}()
	return p
}

func (p *tagPass) run(ctx context.Context, txs []*sql.Tx) error {
	var maxSeq, maxTag int64
	if err := txs[0].QueryRowContext(ctx, `SELECT coalesce(max(seq), 0), (SELECT coalesce(max(id), 0) FROM tags) FROM events`).Scan(&maxSeq, &maxTag); err != nil {
		return err
	}
	channels := map[int64]int64{}
	rows, err := txs[0].QueryContext(ctx, `SELECT id, project_id FROM channels`)
	if err != nil {
		return err
	}
	for rows.Next() {
		var id, project int64
		if err := rows.Scan(&id, &project); err != nil {
			rows.Close()
			return err
		}
		channels[id] = project
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	f, th := newRowHash(), newTagHash()
	half := max(len(txs)/2, 1)
	seqs, tags := splitRange(0, maxSeq, half), splitRange(0, maxTag, len(txs)-half)
	var mu sync.Mutex
	var wg sync.WaitGroup
	var firstErr error
	p.events = eventPass{tags: map[int64]*tagSums{}, users: usersOf{}}
	p.index = tagGroups{tags: map[int64]*tagSums{}}
	for i, r := range seqs {
		wg.Go(func() {
			e, err := passEvents(ctx, txs[i], r[0], r[1], f, th, channels)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				firstErr = cmp.Or(firstErr, err)
				return
			}
			p.events.events += e.events
			p.events.problems = append(p.events.problems, e.problems...)
			mergeSums(p.events.tags, e.tags)
			for project, users := range e.users {
				into := p.events.users[project]
				if into == nil {
					p.events.users[project] = users
					continue
				}
				for user, u := range users {
					if have := into[user]; have != nil {
						have.n += u.n
						have.first, have.last = min(have.first, u.first), max(have.last, u.last)
					} else {
						into[user] = u
					}
				}
			}
		})
	}
	for i, r := range tags {
		wg.Go(func() {
			g, err := passTagIndex(ctx, txs[half+i], r[0], r[1], f, th)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				firstErr = cmp.Or(firstErr, err)
				return
			}
			p.index.problems = append(p.index.problems, g.problems...)
			mergeSums(p.index.tags, g.tags)
		})
	}
	wg.Wait()
	return firstErr
}

func mergeSums(into, from map[int64]*tagSums) {
	for project, s := range from {
		if have := into[project]; have != nil {
			have.add([2]int64{1, 1}, s.sum, s.rows)
		} else {
			into[project] = s
		}
	}
}

// result waits for the passes.
func (p *tagPass) result(ctx context.Context) error {
	select {
	case <-p.done:
		return p.err
	case <-ctx.Done():
		return ctx.Err()
	}
}
