package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"slices"
	"strings"

	"github.com/tidings-dev/tidings"
)

// Who is notified of a project's and a channel's events (issue 39): projects.notify
// and channels.notify hold Recipients.String() ("everyone", "nobody", or the chosen
// members' emails joined by commas); a channel's NULL follows its project. A member
// deleted after being chosen stays in the list as it was saved: Includes matches only
// account members' devices, so they are not notified, and saving the list again
// names them as not a member.

// checkRecipients normalises r (modes, lower-case sorted unique emails) and checks
// that every email is a member of the account, reading the members in tx.
func checkRecipients(ctx context.Context, tx *sql.Tx, accountID int64, r *tidings.Recipients) (string, error) {
	var p tidings.Problems
	switch r.Mode {
	case tidings.NotifyEveryone, tidings.NotifyNobody:
		return r.Mode, nil
	case tidings.NotifyMembers:
	default:
		p.Add("notify", "enum", `must be "everyone", "nobody" or chosen members (got mode %q)`, r.Mode)
		return "", p.Err()
	}
	emails := make([]string, 0, len(r.Emails))
	for _, e := range r.Emails {
		if e = strings.ToLower(strings.TrimSpace(e)); e != "" {
			emails = append(emails, e)
		}
	}
	slices.Sort(emails)
	emails = slices.Compact(emails)
	switch {
	case len(emails) == 0:
		p.Add("notify", "required", "choose at least one member (or \"nobody\")")
		return "", p.Err()
	case len(emails) > tidings.MaxRecipients:
		p.Add("notify", "too_many", "at most %d recipients (got %d)", tidings.MaxRecipients, len(emails))
		return "", p.Err()
	}
	rows, err := tx.QueryContext(ctx, `SELECT lower(email) FROM users WHERE account_id = ?`, accountID)
	if err != nil {
		return "", err
	}
	defer rows.Close()
	members := map[string]bool{}
	for rows.Next() {
		var e string
		if err := rows.Scan(&e); err != nil {
			return "", err
		}
		members[e] = true
	}
	if err := rows.Err(); err != nil {
		return "", err
	}
	var strangers []string
	for _, e := range emails {
		if !members[e] || strings.Contains(e, ",") {
			strangers = append(strangers, e)
		}
	}
	if len(strangers) > 0 {
		return "", tidings.NotMembers(strangers)
	}
	return strings.Join(emails, ","), nil
}

// parseNotify reads a stored setting.
func parseNotify(s string) tidings.Recipients {
	switch s {
	case tidings.NotifyNobody:
		return tidings.Recipients{Mode: tidings.NotifyNobody}
	case tidings.NotifyEveryone, "":
		return tidings.Everyone
	}
	return tidings.Recipients{Mode: tidings.NotifyMembers, Emails: strings.Split(s, ",")}
}

// SetRecipients sets who is notified of the project's events (channel "") or of one
// channel's (r nil: the channel follows its project again, a project notifies
// everyone). The members are checked and the setting saved in one transaction.
func (db *DB) SetRecipients(ctx context.Context, accountID int64, project, channel string, r *tidings.Recipients) error {
	tx, err := db.write.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	var projectID int64
	err = tx.QueryRowContext(ctx, `SELECT id FROM projects WHERE account_id = ? AND name = ?`, accountID, project).Scan(&projectID)
	if errors.Is(err, sql.ErrNoRows) {
		return tidings.ProjectNotFound(project)
	}
	if err != nil {
		return err
	}
	var channelID int64
	if channel != "" {
		err = tx.QueryRowContext(ctx, `SELECT id FROM channels WHERE project_id = ? AND name = ?`, projectID, channel).Scan(&channelID)
		if errors.Is(err, sql.ErrNoRows) {
			return tidings.ChannelNotFound(project, channel)
		}
		if err != nil {
			return err
		}
	}
	var setting sql.NullString
	switch {
	case r != nil:
		s, err := checkRecipients(ctx, tx, accountID, r)
		if err != nil {
			return err
		}
		setting = sql.NullString{String: s, Valid: true}
	case channel == "":
		setting = sql.NullString{String: tidings.NotifyEveryone, Valid: true}
	}
	if channel == "" {
		_, err = tx.ExecContext(ctx, `UPDATE projects SET notify = ? WHERE id = ?`, setting.String, projectID)
	} else {
		_, err = tx.ExecContext(ctx, `UPDATE channels SET notify = ? WHERE id = ?`, setting, channelID)
	}
	if err != nil {
		return err
	}
	return tx.Commit()
}

// RecipientsOf returns the project's setting (channel "") or the channel's own; own is
// false when the channel follows its project, whose setting r then is.
func (db *DB) RecipientsOf(ctx context.Context, accountID int64, project, channel string) (tidings.Recipients, bool, error) {
	// One read: the project's setting, whether the channel exists, and its own.
	var projectNotify string
	var channelFound bool
	var own sql.NullString
	err := db.read.QueryRowContext(ctx, `SELECT p.notify, c.id IS NOT NULL, c.notify FROM projects p
		LEFT JOIN channels c ON c.project_id = p.id AND c.name = ? WHERE p.account_id = ? AND p.name = ?`,
		channel, accountID, project).Scan(&projectNotify, &channelFound, &own)
	if errors.Is(err, sql.ErrNoRows) {
		return tidings.Recipients{}, false, tidings.ProjectNotFound(project)
	}
	if err != nil {
		return tidings.Recipients{}, false, err
	}
	if channel == "" {
		return parseNotify(projectNotify), true, nil
	}
	if !channelFound {
		return tidings.Recipients{}, false, tidings.ChannelNotFound(project, channel)
	}
	if !own.Valid {
		return parseNotify(projectNotify), false, nil
	}
	return parseNotify(own.String), true, nil
}
