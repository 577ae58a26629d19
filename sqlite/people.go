package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"strings"

	"github.com/tidings-dev/tidings"
)

// Identify merges properties into a user, in a group-committed transaction.
func (db *DB) Identify(ctx context.Context, accountID int64, c *tidings.Identify) (*tidings.Person, error) {
	p, err := findProject(ctx, db.reads, accountID, c.Project)
	if err != nil {
		return nil, err
	}
	stamp := db.stamp()
	var u *tidings.Person
	err = db.inBatch(ctx, func(ctx context.Context, sqlTx *sql.Tx) error {
		tx := db.preparedIn(sqlTx)
		claim, err := claimFor(ctx, tx, accountID, c.Key, stamp)
		if err != nil {
			return err
		}
		if _, err := upsertProperties(ctx, tx, peopleTable, p.ID, c.UserID, c.Properties, c.Remove, ms(stamp)); err != nil {
			return err
		}
		if u, err = findPerson(ctx, tx, p, c.UserID); err != nil {
			return err
		}
		return settle(ctx, tx, claim, c.Key, u, nil)
	})
	if err != nil {
		return nil, err
	}
	return u, nil
}

// Group merges properties into a group and adds the user to it, in one transaction.
func (db *DB) Group(ctx context.Context, accountID int64, c *tidings.GroupChange) (*tidings.Group, error) {
	p, err := findProject(ctx, db.reads, accountID, c.Project)
	if err != nil {
		return nil, err
	}
	stamp := db.stamp()
	var g *tidings.Group
	err = db.inBatch(ctx, func(ctx context.Context, sqlTx *sql.Tx) error {
		tx := db.preparedIn(sqlTx)
		claim, err := claimFor(ctx, tx, accountID, c.Key, stamp)
		if err != nil {
			return err
		}
		if err := joinGroup(ctx, tx, p, c, ms(stamp)); err != nil {
			return err
		}
		if g, err = groupSummary(ctx, tx, p, c.GroupID); err != nil {
			return err
		}
		return settle(ctx, tx, claim, c.Key, g, nil)
	})
	if err != nil {
		return nil, err
	}
	return g, nil
}

// joinGroup merges the change's properties into its group and adds its user, if any.
func joinGroup(ctx context.Context, tx prepared, p *tidings.Project, c *tidings.GroupChange, now int64) error {
	group, err := upsertProperties(ctx, tx, groupsTable, p.ID, c.GroupID, c.Properties, c.Remove, now)
	if err != nil || c.UserID == "" {
		return err
	}
	person, err := upsertProperties(ctx, tx, peopleTable, p.ID, c.UserID, nil, nil, now)
	if err != nil {
		return err
	}
	var member, memberships int
	if err := tx.QueryRowContext(ctx, sqlGroupMembership, group, person).Scan(&member, &memberships); err != nil {
		return err
	}
	if member == 0 && memberships >= tidings.MaxUserGroups {
		return tidings.TooManyGroups(c.UserID)
	}
	_, err = tx.ExecContext(ctx, sqlJoinGroup, group, person)
	return err
}

// The statements of identify and group, prepared with the write path's (preparedIn).
const (
	sqlGroupMembership = `SELECT count(*) FILTER (WHERE group_ref = ?), count(*) FROM group_members WHERE person_ref = ?`
	sqlJoinGroup       = `INSERT OR IGNORE INTO group_members (group_ref, person_ref) VALUES (?, ?)`
	sqlGroupSummary    = `SELECT g.properties, g.first_seen, g.last_seen,
		(SELECT count(*) FROM group_members m WHERE m.group_ref = g.id) FROM groups g WHERE g.project_id = ? AND g.group_id = ?`
	sqlFindPerson       = `SELECT ` + personColumns + ` FROM people u WHERE u.project_id = ? AND u.user_id = ?`
	sqlPersonGroupCount = `SELECT count(*) FROM group_members WHERE person_ref = ?`
	sqlPersonGroups     = `SELECT g.group_id FROM group_members m JOIN groups g ON g.id = m.group_ref
		WHERE m.person_ref = ? ORDER BY g.last_seen DESC, g.id DESC LIMIT ?`
)

// propertyTable is a table of named rows with properties (people or groups) and its
// statements.
type propertyTable struct{ find, insert, update string }

func newPropertyTable(table, idColumn string) propertyTable {
	return propertyTable{
		find: `SELECT id, properties FROM ` + table + ` WHERE project_id = ? AND ` + idColumn + ` = ?`,
		insert: `INSERT INTO ` + table + ` (project_id, ` + idColumn + `, properties, first_seen, last_seen)
			VALUES (?, ?, ?, ?, ?) RETURNING id`,
		update: `UPDATE ` + table + ` SET properties = ?, last_seen = max(last_seen, ?) WHERE id = ?`,
	}
}

var (
	peopleTable = newPropertyTable("people", "user_id")
	groupsTable = newPropertyTable("groups", "group_id")
)

// groupSummary reads a group with its number of members: what a group call answers.
func groupSummary(ctx context.Context, q querier, p *tidings.Project, groupID string) (*tidings.Group, error) {
	g := &tidings.Group{Project: p.Name, GroupID: groupID}
	var props string
	var first, last int64
	err := q.QueryRowContext(ctx, sqlGroupSummary, p.ID, groupID).Scan(&props, &first, &last, &g.Members)
	if err != nil {
		return nil, err
	}
	g.FirstSeen, g.LastSeen = fromMS(first), fromMS(last)
	return g, json.Unmarshal([]byte(props), &g.Properties)
}

// upsertProperties merges properties into the row of t named id in the project,
// creating it, and returns its row id.
func upsertProperties(ctx context.Context, tx prepared, t propertyTable, project int64, id string, set tidings.Tags, remove []string, now int64) (int64, error) {
	var ref int64
	var stored string
	err := tx.QueryRowContext(ctx, t.find, project, id).Scan(&ref, &stored)
	if errors.Is(err, sql.ErrNoRows) {
		stored = "{}"
	} else if err != nil {
		return 0, err
	}
	var props tidings.Tags
	if err := json.Unmarshal([]byte(stored), &props); err != nil {
		return 0, err
	}
	merged, err := tidings.MergeProperties(props, set, remove)
	if err != nil {
		return 0, err
	}
	out := merged.JSON()
	if ref == 0 {
		err = tx.QueryRowContext(ctx, t.insert, project, id, string(out), now, now).Scan(&ref)
		return ref, err
	}
	_, err = tx.ExecContext(ctx, t.update, string(out), now, ref)
	return ref, err
}

// personColumns are what scanPerson reads, from people aliased u.
const personColumns = `u.id, u.user_id, u.properties, u.first_seen, u.last_seen, u.events, u.page_views`

func scanPerson(project string, r interface{ Scan(...any) error }) (*tidings.Person, int64, error) {
	u := &tidings.Person{Project: project}
	var ref, first, last int64
	var props string
	if err := r.Scan(&ref, &u.UserID, &props, &first, &last, &u.Events, &u.PageViews); err != nil {
		return nil, 0, err
	}
	u.FirstSeen, u.LastSeen = fromMS(first), fromMS(last)
	return u, ref, json.Unmarshal([]byte(props), &u.Properties)
}

// FindPerson returns one user with its groups and sessions.
func (db *DB) FindPerson(ctx context.Context, accountID int64, project, userID string) (*tidings.Person, error) {
	p, err := findProject(ctx, db.reads, accountID, project)
	if err != nil {
		return nil, err
	}
	u, err := findPerson(ctx, db.reads, p, userID)
	if err != nil {
		return nil, err
	}
	u.Sessions, err = db.sessions(ctx, p.ID, userID)
	return u, err
}

// reader is a database or a transaction.
type reader interface {
	querier
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

func findPerson(ctx context.Context, r reader, p *tidings.Project, userID string) (*tidings.Person, error) {
	u, ref, err := scanPerson(p.Name, r.QueryRowContext(ctx, sqlFindPerson, p.ID, userID))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, tidings.PersonNotFound(p.Name, userID)
	}
	if err != nil {
		return nil, err
	}
	if err := r.QueryRowContext(ctx, sqlPersonGroupCount, ref).Scan(&u.GroupCount); err != nil {
		return nil, err
	}
	rows, err := r.QueryContext(ctx, sqlPersonGroups, ref, tidings.MaxUserGroups)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var g string
		if err := rows.Scan(&g); err != nil {
			return nil, err
		}
		u.Groups = append(u.Groups, g)
	}
	return u, rows.Err()
}

// ListPeople returns a page of the project's users, most recently seen first. Property
// filters are checked on each user walked (a project's users are far fewer than its
// events; the walk stops at the page's end).
func (db *DB) ListPeople(ctx context.Context, accountID int64, q tidings.PersonQuery) (*tidings.PersonPage, error) {
	p, err := findProject(ctx, db.reads, accountID, q.Project)
	if err != nil {
		return nil, err
	}
	if err := tidings.CheckPersonSort(q.Sort); err != nil {
		return nil, err
	}
	// The column of the order, each with its index (project_id, column, id).
	column := "last_seen"
	switch q.Sort {
	case tidings.PersonSortEvents:
		column = "events"
	case tidings.PersonSortFirstSeen:
		column = "first_seen"
	}
	var sb strings.Builder
	args := []any{p.ID}
	sb.WriteString(`SELECT ` + personColumns + ` FROM people u WHERE u.project_id = ?`)
	if q.Before != "" {
		var last, ref int64
		err := db.read.QueryRowContext(ctx, `SELECT `+column+`, id FROM people WHERE project_id = ? AND user_id = ?`, p.ID, q.Before).
			Scan(&last, &ref)
		if errors.Is(err, sql.ErrNoRows) {
			var pr tidings.Problems
			pr.Add("before", "cursor", "no user %q in project %q", q.Before, q.Project)
			return nil, pr.Err()
		}
		if err != nil {
			return nil, err
		}
		sb.WriteString(` AND (u.` + column + `, u.id) < (?, ?)`)
		args = append(args, last, ref)
	}
	if q.IDPrefix != "" {
		sb.WriteString(` AND u.user_id LIKE ? ESCAPE '\'`)
		args = append(args, tidings.LikePrefix(q.IDPrefix))
	}
	for _, f := range q.Properties {
		// The value as text, as tags compare: true/false for booleans, a number as written.
		sb.WriteString(` AND EXISTS (SELECT 1 FROM json_each(u.properties) j WHERE j.key = ? AND
			(CASE j.type WHEN 'true' THEN 'true' WHEN 'false' THEN 'false' ELSE CAST(j.value AS TEXT) END) = ?)`)
		args = append(args, f.Key, f.Value)
	}
	sb.WriteString(` ORDER BY u.` + column + ` DESC, u.id DESC LIMIT ?`)
	args = append(args, q.Limit+1)
	rows, err := db.read.QueryContext(ctx, sb.String(), args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	page := &tidings.PersonPage{People: []*tidings.Person{}}
	for rows.Next() {
		u, _, err := scanPerson(q.Project, rows)
		if err != nil {
			return nil, err
		}
		page.People = append(page.People, u)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if len(page.People) > q.Limit {
		page.People = page.People[:q.Limit]
		page.Next = page.People[q.Limit-1].UserID
	}
	return page, nil
}

const groupColumns = `g.id, g.group_id, g.properties, g.first_seen, g.last_seen, (SELECT count(*) FROM group_members m WHERE m.group_ref = g.id)`

func scanGroup(project string, r interface{ Scan(...any) error }) (*tidings.Group, int64, error) {
	g := &tidings.Group{Project: project}
	var ref, first, last int64
	var props string
	if err := r.Scan(&ref, &g.GroupID, &props, &first, &last, &g.Members); err != nil {
		return nil, 0, err
	}
	g.FirstSeen, g.LastSeen = fromMS(first), fromMS(last)
	return g, ref, json.Unmarshal([]byte(props), &g.Properties)
}

// ListGroups returns a page of the project's groups, most recently seen first.
func (db *DB) ListGroups(ctx context.Context, accountID int64, project, before string, limit int) (*tidings.GroupPage, error) {
	p, err := findProject(ctx, db.reads, accountID, project)
	if err != nil {
		return nil, err
	}
	q := `SELECT ` + groupColumns + ` FROM groups g WHERE g.project_id = ?`
	args := []any{p.ID}
	if before != "" {
		var last, ref int64
		err := db.read.QueryRowContext(ctx, `SELECT last_seen, id FROM groups WHERE project_id = ? AND group_id = ?`, p.ID, before).Scan(&last, &ref)
		if errors.Is(err, sql.ErrNoRows) {
			var pr tidings.Problems
			pr.Add("before", "cursor", "no group %q in project %q", before, project)
			return nil, pr.Err()
		}
		if err != nil {
			return nil, err
		}
		q += ` AND (g.last_seen, g.id) < (?, ?)`
		args = append(args, last, ref)
	}
	rows, err := db.read.QueryContext(ctx, q+` ORDER BY g.last_seen DESC, g.id DESC LIMIT ?`, append(args, limit+1)...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	page := &tidings.GroupPage{Groups: []*tidings.Group{}}
	for rows.Next() {
		g, _, err := scanGroup(project, rows)
		if err != nil {
			return nil, err
		}
		page.Groups = append(page.Groups, g)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if len(page.Groups) > limit {
		page.Groups = page.Groups[:limit]
		page.Next = page.Groups[limit-1].GroupID
	}
	return page, nil
}

// FindGroup returns one group with its members' IDs.
func (db *DB) FindGroup(ctx context.Context, accountID int64, project, groupID string) (*tidings.Group, error) {
	p, err := findProject(ctx, db.reads, accountID, project)
	if err != nil {
		return nil, err
	}
	g, ref, err := scanGroup(project, db.read.QueryRowContext(ctx,
		`SELECT `+groupColumns+` FROM groups g WHERE g.project_id = ? AND g.group_id = ?`, p.ID, groupID))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, tidings.GroupNotFound(project, groupID)
	}
	if err != nil {
		return nil, err
	}
	rows, err := db.read.QueryContext(ctx, `SELECT u.user_id FROM group_members m JOIN people u ON u.id = m.person_ref
		WHERE m.group_ref = ? ORDER BY u.last_seen DESC, u.user_id LIMIT ?`, ref, tidings.MaxGroupMembersShown)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		g.MemberIDs = append(g.MemberIDs, id)
	}
	return g, rows.Err()
}
