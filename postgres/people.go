package postgres

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/tidings-dev/tidings"
)

// Identify merges properties into a user, creating it.
func (db *DB) Identify(ctx context.Context, accountID int64, c *tidings.Identify) (*tidings.Person, error) {
	p, err := findProject(ctx, db.pool, accountID, c.Project)
	if err != nil {
		return nil, err
	}
	now := ms(db.stamp())
	var u *tidings.Person
	if err := db.inTx(ctx, func(tx pgx.Tx) error {
		claim, err := claimFor(ctx, tx, accountID, c.Key, now)
		if err != nil {
			return err
		}
		if _, err := upsertProperties(ctx, tx, "people", "user_id", p.ID, c.UserID, c.Properties, c.Remove, now); err != nil {
			return err
		}
		if u, err = findPerson(ctx, tx, p, c.UserID); err != nil {
			return err
		}
		return settle(ctx, tx, claim, c.Key, u, nil)
	}); err != nil {
		return nil, err
	}
	return u, nil
}

// Group merges properties into a group and adds the user to it, in one transaction.
func (db *DB) Group(ctx context.Context, accountID int64, c *tidings.GroupChange) (*tidings.Group, error) {
	p, err := findProject(ctx, db.pool, accountID, c.Project)
	if err != nil {
		return nil, err
	}
	now := ms(db.stamp())
	var g *tidings.Group
	if err := db.inTx(ctx, func(tx pgx.Tx) error {
		claim, err := claimFor(ctx, tx, accountID, c.Key, now)
		if err != nil {
			return err
		}
		if err := joinGroup(ctx, tx, p, c, now); err != nil {
			return err
		}
		if g, err = groupSummary(ctx, tx, p, c.GroupID); err != nil {
			return err
		}
		return settle(ctx, tx, claim, c.Key, g, nil)
	}); err != nil {
		return nil, err
	}
	return g, nil
}

// joinGroup merges the change's properties into its group and adds its user, if any.
func joinGroup(ctx context.Context, tx pgx.Tx, p *tidings.Project, c *tidings.GroupChange, now int64) error {
	group, err := upsertProperties(ctx, tx, "groups", "group_id", p.ID, c.GroupID, c.Properties, c.Remove, now)
	if err != nil || c.UserID == "" {
		return err
	}
	person, err := upsertProperties(ctx, tx, "people", "user_id", p.ID, c.UserID, nil, nil, now)
	if err != nil {
		return err
	}
	// The person's row is locked (upsertProperties): two joins of one user are counted in turn.
	var member, groups int
	if err := tx.QueryRow(ctx, `SELECT count(*) FILTER (WHERE group_ref = $1), count(*) FROM group_members WHERE person_ref = $2`,
		group, person).Scan(&member, &groups); err != nil {
		return err
	}
	if member == 0 && groups >= tidings.MaxUserGroups {
		return tidings.TooManyGroups(c.UserID)
	}
	_, err = tx.Exec(ctx, `INSERT INTO group_members (group_ref, person_ref) VALUES ($1, $2) ON CONFLICT DO NOTHING`, group, person)
	return err
}

// groupSummary reads a group with its number of members: what a group call answers.
func groupSummary(ctx context.Context, q querier, p *tidings.Project, groupID string) (*tidings.Group, error) {
	g := &tidings.Group{Project: p.Name, GroupID: groupID}
	var props string
	var first, last int64
	if err := q.QueryRow(ctx, `SELECT g.properties, g.first_seen, g.last_seen,
		(SELECT count(*) FROM group_members m WHERE m.group_ref = g.id) FROM groups g WHERE g.project_id = $1 AND g.group_id = $2`,
		p.ID, groupID).Scan(&props, &first, &last, &g.Members); err != nil {
		return nil, mapErr(err)
	}
	g.FirstSeen, g.LastSeen = fromMS(first), fromMS(last)
	return g, json.Unmarshal([]byte(props), &g.Properties)
}

// upsertProperties merges properties into the row of table (people or groups) named
// id in the project, creating it, and returns its row id. The row is locked while it
// is merged, so two instances' calls do not lose each other's keys.
func upsertProperties(ctx context.Context, tx pgx.Tx, table, idColumn string, project int64, id string, set tidings.Tags, remove []string, now int64) (int64, error) {
	if _, err := tx.Exec(ctx, `INSERT INTO `+table+` (project_id, `+idColumn+`, properties, first_seen, last_seen)
		VALUES ($1, $2, '{}', $3, $3) ON CONFLICT (project_id, `+idColumn+`) DO NOTHING`, project, id, now); err != nil {
		return 0, err
	}
	var ref int64
	var stored string
	if err := tx.QueryRow(ctx, `SELECT id, properties FROM `+table+` WHERE project_id = $1 AND `+idColumn+` = $2 FOR UPDATE`,
		project, id).Scan(&ref, &stored); err != nil {
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
	// Another instance's batch may have seen the user later (or earlier) meanwhile.
	_, err = tx.Exec(ctx, `UPDATE `+table+` SET properties = $1, last_seen = greatest(last_seen, $2), first_seen = least(first_seen, $2)
		WHERE id = $3`, string(out), now, ref)
	return ref, err
}

const personColumns = `u.id, u.user_id, u.properties, u.first_seen, u.last_seen, u.events, u.page_views, u.sessions`

func scanPerson(project string, r pgx.Row) (*tidings.Person, int64, error) {
	u := &tidings.Person{Project: project}
	var ref, first, last int64
	var props string
	if err := r.Scan(&ref, &u.UserID, &props, &first, &last, &u.Events, &u.PageViews, &u.Sessions); err != nil {
		return nil, 0, err
	}
	u.FirstSeen, u.LastSeen = fromMS(first), fromMS(last)
	return u, ref, json.Unmarshal([]byte(props), &u.Properties)
}

// FindPerson returns one user with its groups.
func (db *DB) FindPerson(ctx context.Context, accountID int64, project, userID string) (*tidings.Person, error) {
	p, err := findProject(ctx, db.pool, accountID, project)
	if err != nil {
		return nil, err
	}
	return findPerson(ctx, db.pool, p, userID)
}

func findPerson(ctx context.Context, q querier, p *tidings.Project, userID string) (*tidings.Person, error) {
	u, ref, err := scanPerson(p.Name, mappedRow{q.QueryRow(ctx, `SELECT `+personColumns+` FROM people u WHERE u.project_id = $1 AND u.user_id = $2`,
		p.ID, userID)})
	if noRows(err) {
		return nil, tidings.PersonNotFound(p.Name, userID)
	}
	if err != nil {
		return nil, err
	}
	if err := (mappedRow{q.QueryRow(ctx, `SELECT count(*) FROM group_members WHERE person_ref = $1`, ref)}).Scan(&u.GroupCount); err != nil {
		return nil, err
	}
	u.Groups, err = query(ctx, q, func(r pgx.Row) (string, error) {
		var g string
		return g, r.Scan(&g)
	}, `SELECT g.group_id FROM group_members m JOIN groups g ON g.id = m.group_ref WHERE m.person_ref = $1
		ORDER BY g.last_seen DESC, g.id DESC LIMIT $2`, ref, tidings.MaxUserGroups)
	return u, err
}

// personSorts are the columns of the orders of a page of users; each has an index
// (project_id, column, id).
var personSorts = map[string]string{
	"":                          "last_seen",
	tidings.PersonSortLastSeen:  "last_seen",
	tidings.PersonSortEvents:    "events",
	tidings.PersonSortFirstSeen: "first_seen",
}

// ListPeople returns a page of the project's users in the query's order (last seen,
// events or first seen, largest first, ties by the newest row).
func (db *DB) ListPeople(ctx context.Context, accountID int64, q tidings.PersonQuery) (*tidings.PersonPage, error) {
	if err := tidings.CheckPersonSort(q.Sort); err != nil {
		return nil, err
	}
	col := personSorts[q.Sort]
	p, err := findProject(ctx, db.pool, accountID, q.Project)
	if err != nil {
		return nil, err
	}
	var sb strings.Builder
	args := []any{p.ID}
	arg := func(v any) string {
		args = append(args, v)
		return "$" + strconv.Itoa(len(args))
	}
	sb.WriteString(`SELECT ` + personColumns + ` FROM people u WHERE u.project_id = $1`)
	if q.Before != "" {
		var last, ref int64
		err := db.row(ctx, `SELECT `+col+`, id FROM people WHERE project_id = $1 AND user_id = $2`, p.ID, q.Before).Scan(&last, &ref)
		if noRows(err) {
			var pr tidings.Problems
			pr.Add("before", "cursor", "no user %q in project %q", q.Before, q.Project)
			return nil, pr.Err()
		}
		if err != nil {
			return nil, err
		}
		sb.WriteString(` AND (u.` + col + `, u.id) < (` + arg(last) + `, ` + arg(ref) + `)`)
	}
	if q.IDPrefix != "" {
		sb.WriteString(` AND u.user_id ILIKE ` + arg(tidings.LikePrefix(q.IDPrefix)) + ` ESCAPE '\'`)
	}
	for _, f := range q.Properties {
		sb.WriteString(` AND (u.properties::jsonb ->> ` + arg(f.Key) + `) = ` + arg(f.Value))
	}
	sb.WriteString(` ORDER BY u.` + col + ` DESC, u.id DESC LIMIT ` + arg(q.Limit+1))
	people, err := query(ctx, db.pool, func(r pgx.Row) (*tidings.Person, error) {
		u, _, err := scanPerson(q.Project, r)
		if u != nil {
			u.Sessions = 0 // FindPerson's only
		}
		return u, err
	}, sb.String(), args...)
	if err != nil {
		return nil, err
	}
	page := &tidings.PersonPage{People: people}
	if page.People == nil {
		page.People = []*tidings.Person{}
	}
	if len(page.People) > q.Limit {
		page.People = page.People[:q.Limit]
		page.Next = page.People[q.Limit-1].UserID
	}
	return page, nil
}

const groupColumns = `g.id, g.group_id, g.properties, g.first_seen, g.last_seen, (SELECT count(*) FROM group_members m WHERE m.group_ref = g.id)`

func scanGroup(project string, r pgx.Row) (*tidings.Group, int64, error) {
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
	p, err := findProject(ctx, db.pool, accountID, project)
	if err != nil {
		return nil, err
	}
	q := `SELECT ` + groupColumns + ` FROM groups g WHERE g.project_id = $1`
	args := []any{p.ID}
	if before != "" {
		var last, ref int64
		err := db.row(ctx, `SELECT last_seen, id FROM groups WHERE project_id = $1 AND group_id = $2`, p.ID, before).Scan(&last, &ref)
		if noRows(err) {
			var pr tidings.Problems
			pr.Add("before", "cursor", "no group %q in project %q", before, project)
			return nil, pr.Err()
		}
		if err != nil {
			return nil, err
		}
		q += ` AND (g.last_seen, g.id) < ($2, $3)`
		args = append(args, last, ref)
	}
	args = append(args, limit+1)
	groups, err := query(ctx, db.pool, func(r pgx.Row) (*tidings.Group, error) {
		g, _, err := scanGroup(project, r)
		return g, err
	}, q+` ORDER BY g.last_seen DESC, g.id DESC LIMIT $`+strconv.Itoa(len(args)), args...)
	if err != nil {
		return nil, err
	}
	page := &tidings.GroupPage{Groups: groups}
	if page.Groups == nil {
		page.Groups = []*tidings.Group{}
	}
	if len(page.Groups) > limit {
		page.Groups = page.Groups[:limit]
		page.Next = page.Groups[limit-1].GroupID
	}
	return page, nil
}

// FindGroup returns one group with its members' IDs.
func (db *DB) FindGroup(ctx context.Context, accountID int64, project, groupID string) (*tidings.Group, error) {
	p, err := findProject(ctx, db.pool, accountID, project)
	if err != nil {
		return nil, err
	}
	g, ref, err := scanGroup(project, db.row(ctx, `SELECT `+groupColumns+` FROM groups g WHERE g.project_id = $1 AND g.group_id = $2`, p.ID, groupID))
	if noRows(err) {
		return nil, tidings.GroupNotFound(project, groupID)
	}
	if err != nil {
		return nil, err
	}
	g.MemberIDs, err = query(ctx, db.pool, func(r pgx.Row) (string, error) {
		var id string
		return id, r.Scan(&id)
	}, `SELECT u.user_id FROM group_members m JOIN people u ON u.id = m.person_ref WHERE m.group_ref = $1
		ORDER BY u.last_seen DESC, u.user_id COLLATE "C" LIMIT $2`, ref, tidings.MaxGroupMembersShown)
	return g, err
}
