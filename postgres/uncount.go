package postgres

import (
	"context"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
)

// countRows are amounts to take off rows of a count table (user_minutes and the page
// counts): one entry per row, its key columns' values and the amounts of its counts.
type countRows struct {
	table  string
	keys   []string // the key columns, in the order rows are locked
	counts []string // the count columns taken from
	empty  string   // when a row is left empty: it is deleted
	keyVal [][]int64
	amount [][]int64
}

// add takes amounts off the row of key, adding to what was taken from it already.
func (c *countRows) add(index map[string]int, key []int64, amounts ...int64) {
	k := fmtKey(key)
	i, ok := index[k]
	if !ok {
		i = len(c.keyVal)
		index[k] = i
		c.keyVal = append(c.keyVal, key)
		c.amount = append(c.amount, make([]int64, len(amounts)))
	}
	for j, a := range amounts {
		c.amount[i][j] += a
	}
}

func fmtKey(key []int64) string {
	var sb strings.Builder
	for _, k := range key {
		sb.WriteString(strconv.FormatInt(k, 10))
		sb.WriteByte(' ')
	}
	return sb.String()
}

// take takes the amounts off their rows, locked in key order, and deletes the rows it
// leaves empty; it returns the keys of those.
func (c *countRows) take(ctx context.Context, tx pgx.Tx) ([][]int64, error) {
	if len(c.keyVal) == 0 {
		return nil, nil
	}
	var args []any
	var params, gcols, join, lockedCols, set, ret []string
	for i, k := range c.keys {
		col := make([]int64, len(c.keyVal))
		for r, kv := range c.keyVal {
			col[r] = kv[i]
		}
		args = append(args, col)
		params = append(params, "$"+strconv.Itoa(len(args))+"::bigint[]")
		gcols = append(gcols, "k"+strconv.Itoa(i))
		join = append(join, "t."+k+" = g.k"+strconv.Itoa(i))
		lockedCols = append(lockedCols, "t."+k)
		ret = append(ret, "t."+k)
	}
	var amounts []string
	for j, n := range c.counts {
		col := make([]int64, len(c.amount))
		for r, a := range c.amount {
			col[r] = a[j]
		}
		args = append(args, col)
		params = append(params, "$"+strconv.Itoa(len(args))+"::bigint[]")
		gcols = append(gcols, "c"+strconv.Itoa(j))
		amounts = append(amounts, "g.c"+strconv.Itoa(j))
		set = append(set, n+" = t."+n+" - locked.c"+strconv.Itoa(j))
	}
	var on []string
	for _, k := range c.keys {
		on = append(on, "t."+k+" = locked."+k)
	}
	q := `WITH g AS (SELECT * FROM unnest(` + strings.Join(params, ", ") + `) AS g(` + strings.Join(gcols, ", ") + `)),
		locked AS (SELECT ` + strings.Join(lockedCols, ", ") + `, ` + strings.Join(amounts, ", ") + ` FROM ` + c.table + ` t JOIN g ON ` +
		strings.Join(join, " AND ") + ` ORDER BY ` + strings.Join(lockedCols, ", ") + ` FOR UPDATE OF t)
		UPDATE ` + c.table + ` t SET ` + strings.Join(set, ", ") + ` FROM locked WHERE ` + strings.Join(on, " AND ") + `
		RETURNING ` + strings.Join(ret, ", ") + `, ` + c.empty
	rows, err := tx.Query(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	var gone [][]int64
	for rows.Next() {
		key := make([]int64, len(c.keys))
		dest := make([]any, len(key)+1)
		for i := range key {
			dest[i] = &key[i]
		}
		var empty bool
		dest[len(key)] = &empty
		if err := rows.Scan(dest...); err != nil {
			rows.Close()
			return nil, err
		}
		if empty {
			gone = append(gone, key)
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil || len(gone) == 0 {
		return nil, err
	}
	return gone, deleteRows(ctx, tx, c.table, c.keys, gone)
}

// deleteRows deletes rows of a count table by their keys (rows locked already).
func deleteRows(ctx context.Context, tx pgx.Tx, table string, keys []string, rows [][]int64) error {
	var args []any
	var params, cols, on []string
	for i, k := range keys {
		col := make([]int64, len(rows))
		for r, kv := range rows {
			col[r] = kv[i]
		}
		args = append(args, col)
		params = append(params, "$"+strconv.Itoa(len(args))+"::bigint[]")
		cols = append(cols, "k"+strconv.Itoa(i))
		on = append(on, "t."+k+" = x.k"+strconv.Itoa(i))
	}
	_, err := tx.Exec(ctx, `DELETE FROM `+table+` t USING unnest(`+strings.Join(params, ", ")+`) AS x(`+strings.Join(cols, ", ")+`)
		WHERE `+strings.Join(on, " AND "), args...)
	return err
}

// uncountEventMinutes takes events off their users' minutes, after their people rows
// (the order in which batches lock them), and moves their sessions: gone is a query
// of (u, m, n), a user id, a minute and how many of its events go, in a project ($1).
func uncountEventMinutes(ctx context.Context, tx pgx.Tx, gone string, args ...any) error {
	rows, err := tx.Query(ctx, `WITH gone AS (`+gone+`)
		SELECT um.person_ref, um.minute, gone.n FROM gone JOIN people p ON p.project_id = $1 AND p.user_id = gone.u
		  JOIN user_minutes um ON um.person_ref = p.id AND um.minute = gone.m ORDER BY 1, 2 FOR UPDATE OF um`, args...)
	if err != nil {
		return err
	}
	minutes := countRows{table: "user_minutes", keys: []string{"person_ref", "minute"}, counts: []string{"events"}, empty: "t.events + t.views <= 0"}
	idx := map[string]int{}
	var refs, at []int64
	for rows.Next() {
		var ref, minute, n int64
		if err := rows.Scan(&ref, &minute, &n); err != nil {
			rows.Close()
			return err
		}
		minutes.add(idx, []int64{ref, minute}, n)
		refs, at = append(refs, ref), append(at, minute)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	return withSessions(ctx, tx, refs, at, func() error {
		_, err := minutes.take(ctx, tx)
		return err
	})
}
