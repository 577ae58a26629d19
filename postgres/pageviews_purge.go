package postgres

import (
	"context"

	"github.com/jackc/pgx/v5"

	"github.com/tidings-dev/tidings"
)

// goneView is a page view deleted by the purge: what its deletion must undo.
type goneView struct {
	person, ts, path int64
	entry            bool
	referrer         string // an entry's; "" otherwise
}

// purgeViews deletes up to max of a project's page views older than before (unix
// ms), oldest first, and takes them off every count. SKIP LOCKED lets two instances
// purge side by side.
func purgeViews(ctx context.Context, tx pgx.Tx, project, before int64, max int) (int, error) {
	gone, err := query(ctx, tx, func(r pgx.Row) (goneView, error) {
		var g goneView
		return g, r.Scan(&g.person, &g.ts, &g.path, &g.entry, &g.referrer)
	}, `WITH d AS (DELETE FROM page_views WHERE ctid = ANY(ARRAY(SELECT ctid FROM page_views
		  WHERE project_id = $1 AND ts < $2 ORDER BY ts, id LIMIT $3 FOR UPDATE SKIP LOCKED))
		  RETURNING person_ref, ts, path, referrer, entry)
		SELECT d.person_ref, d.ts, d.path, d.entry, coalesce(t.text, '') FROM d LEFT JOIN page_texts t ON t.id = d.referrer AND d.entry`,
		project, before, max)
	if err != nil || len(gone) == 0 {
		return 0, err
	}
	return len(gone), uncountViews(ctx, tx, project, gone)
}

// uncountViews takes deleted page views of a project off the counts, in the order in
// which batches lock them (flush): people, user_minutes, page_person_paths,
// page_user_days, page_days, page_path_days, page_path_months, page_referrer_days.
func uncountViews(ctx context.Context, tx pgx.Tx, project int64, gone []goneView) error {
	hosts, err := referrerHosts(ctx, tx, project, gone)
	if err != nil {
		return err
	}
	people := map[int64]int64{}
	minutes := countRows{table: "user_minutes", keys: []string{"person_ref", "minute"}, counts: []string{"views"}, empty: "t.events + t.views <= 0"}
	paths := countRows{table: "page_person_paths", keys: []string{"person_ref", "path"}, counts: []string{"views"}, empty: "t.views <= 0"}
	userDays := countRows{table: "page_user_days", keys: []string{"project_id", "day", "person_ref"}, counts: []string{"views"}, empty: "t.views <= 0"}
	days := countRows{table: "page_days", keys: []string{"project_id", "day"}, counts: []string{"views", "entries", "users"}, empty: "t.views <= 0"}
	pathDays := countRows{table: "page_path_days", keys: []string{"project_id", "day", "path"}, counts: []string{"views", "entries"}, empty: "t.views <= 0"}
	pathMonths := countRows{table: "page_path_months", keys: []string{"project_id", "month", "path"}, counts: []string{"views", "entries"}, empty: "t.views <= 0"}
	refDays := countRows{table: "page_referrer_days", keys: []string{"project_id", "day", "host"}, counts: []string{"entries"}, empty: "t.entries <= 0"}
	idx := [7]map[string]int{{}, {}, {}, {}, {}, {}, {}}
	for _, g := range gone {
		day := g.ts - g.ts%dayMS
		entry := int64(0)
		if g.entry {
			entry = 1
		}
		people[g.person]++
		minutes.add(idx[0], []int64{g.person, g.ts - g.ts%60_000}, 1)
		paths.add(idx[1], []int64{g.person, g.path}, 1)
		userDays.add(idx[2], []int64{project, day, g.person}, 1)
		days.add(idx[3], []int64{project, day}, 1, entry, 0)
		pathDays.add(idx[4], []int64{project, day, g.path}, 1, entry)
		pathMonths.add(idx[6], []int64{project, monthOf(g.ts), g.path}, 1, entry)
		if h := hosts[g.referrer]; g.entry && h != 0 {
			refDays.add(idx[5], []int64{project, day, h}, 1)
		}
	}
	refs, counts := make([]int64, 0, len(people)), make([]int64, 0, len(people))
	for r, n := range people {
		refs, counts = append(refs, r), append(counts, n)
	}
	if _, err := tx.Exec(ctx, `WITH g AS (SELECT * FROM unnest($1::bigint[], $2::bigint[]) AS g(r, n)),
		locked AS (SELECT p.id, g.n FROM people p JOIN g ON p.id = g.r ORDER BY p.project_id, p.user_id FOR UPDATE OF p)
		UPDATE people p SET page_views = greatest(p.page_views - locked.n, 0) FROM locked WHERE p.id = locked.id`, refs, counts); err != nil {
		return err
	}
	refs, at := make([]int64, len(minutes.keyVal)), make([]int64, len(minutes.keyVal))
	for i, k := range minutes.keyVal {
		refs[i], at[i] = k[0], k[1]
	}
	if err := withSessions(ctx, tx, refs, at, func() error {
		_, err := minutes.take(ctx, tx)
		return err
	}); err != nil {
		return err
	}
	if _, err := paths.take(ctx, tx); err != nil {
		return err
	}
	// A user's day left without views is a user fewer that day.
	emptied, err := userDays.take(ctx, tx)
	if err != nil {
		return err
	}
	for _, k := range emptied {
		days.add(idx[3], []int64{k[0], k[1]}, 0, 0, 1)
	}
	for _, c := range []*countRows{&days, &pathDays, &pathMonths, &refDays} {
		if _, err := c.take(ctx, tx); err != nil {
			return err
		}
	}
	return nil
}

// referrerHosts returns the page_texts ids of the hosts of the gone entries' referrers.
func referrerHosts(ctx context.Context, tx pgx.Tx, project int64, gone []goneView) (map[string]int64, error) {
	seen := map[string]bool{}
	var hashes [][]byte
	for _, g := range gone {
		if h := tidings.ReferrerHost(g.referrer); h != "" && !seen[h] {
			seen[h] = true
			hashes = append(hashes, textHash(h))
		}
	}
	out := map[string]int64{}
	if len(hashes) == 0 {
		return out, nil
	}
	ids := map[string]int64{} // by host hash
	rows, err := tx.Query(ctx, `SELECT hash, id FROM page_texts WHERE project_id = $1 AND hash = ANY($2::bytea[])`, project, hashes)
	if err != nil {
		return nil, err
	}
	for rows.Next() {
		var h []byte
		var id int64
		if err := rows.Scan(&h, &id); err != nil {
			rows.Close()
			return nil, err
		}
		ids[string(h)] = id
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	for _, g := range gone {
		if h := tidings.ReferrerHost(g.referrer); h != "" {
			out[g.referrer] = ids[string(textHash(h))]
		}
	}
	return out, nil
}
