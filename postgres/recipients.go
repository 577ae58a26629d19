package postgres

import (
	"context"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/tidings-dev/tidings"
)

// Who is notified of a project's and a channel's events (issue 39). A setting is
// stored as Recipients.String() and read back with ParseRecipients: projects.notify
// (NOT NULL, 'everyone' by default) and channels.notify (NULL: the channel follows its
// project). A member deleted while chosen stays in the list: Includes matches no
// member of the account by that email any more, and the next save of the list from
// Settings (which offers the account's members) leaves them out.

// SetRecipients sets who is notified of the project's events (channel "") or of one
// channel's; r nil makes a channel follow its project again and a project notify
// everyone. Every chosen email must be a member of the account: one problem of the
// field "notify" names each that is not. It is checked in the transaction that saves,
// the members' rows locked against a concurrent deletion. The project's and channel's
// rows are not locked: an event batch holds key-share locks on them, which the update
// of a non-key column does not wait for.
func (db *DB) SetRecipients(ctx context.Context, accountID int64, project, channel string, r *tidings.Recipients) error {
	var setting *string // nil: NULL, the channel follows its project
	if r != nil {
		n, err := normalRecipients(*r)
		if err != nil {
			return err
		}
		s := n.String()
		setting = &s
	} else if channel == "" {
		s := tidings.NotifyEveryone
		setting = &s
	}
	return db.inTx(ctx, func(tx pgx.Tx) error {
		var pid int64
		err := tx.QueryRow(ctx, `SELECT id FROM projects WHERE account_id = $1 AND name = $2`,
			accountID, project).Scan(&pid)
		if noRows(err) {
			return tidings.ProjectNotFound(project)
		}
		if err != nil {
			return err
		}
		var cid int64
		if channel != "" {
			err := tx.QueryRow(ctx, `SELECT id FROM channels WHERE project_id = $1 AND name = $2`,
				pid, channel).Scan(&cid)
			if noRows(err) {
				return tidings.ChannelNotFound(project, channel)
			}
			if err != nil {
				return err
			}
		}
		if r != nil && r.Mode == tidings.NotifyMembers {
			emails := strings.Split(*setting, ",")
			members, err := query(ctx, tx, func(row pgx.Row) (string, error) {
				var e string
				return e, row.Scan(&e)
			}, `SELECT lower(email) FROM users WHERE account_id = $1 AND lower(email) = ANY($2) FOR SHARE`, accountID, emails)
			if err != nil {
				return err
			}
			var strangers []string
			for _, e := range emails {
				if !slices.Contains(members, e) {
					strangers = append(strangers, e)
				}
			}
			if len(strangers) > 0 {
				return tidings.NotMembers(strangers)
			}
		}
		if channel == "" {
			_, err = tx.Exec(ctx, `UPDATE projects SET notify = $2 WHERE id = $1`, pid, *setting)
		} else {
			_, err = tx.Exec(ctx, `UPDATE channels SET notify = $2 WHERE id = $1`, cid, setting)
		}
		return err
	})
}

// RecipientsOf returns the project's setting (channel "", own true) or the channel's:
// its own (own true) or, when it follows, the project's (own false). One query.
func (db *DB) RecipientsOf(ctx context.Context, accountID int64, project, channel string) (tidings.Recipients, bool, error) {
	var projectSetting string
	if channel == "" {
		err := db.row(ctx, `SELECT notify FROM projects WHERE account_id = $1 AND name = $2`,
			accountID, project).Scan(&projectSetting)
		if noRows(err) {
			return tidings.Recipients{}, false, tidings.ProjectNotFound(project)
		}
		if err != nil {
			return tidings.Recipients{}, false, err
		}
		r, err := storedRecipients(projectSetting)
		return r, true, err
	}
	var found bool
	var own *string
	err := db.row(ctx, `SELECT p.notify, c.id IS NOT NULL, c.notify
		FROM projects p LEFT JOIN channels c ON c.project_id = p.id AND c.name = $3
		WHERE p.account_id = $1 AND p.name = $2`, accountID, project, channel).Scan(&projectSetting, &found, &own)
	if noRows(err) {
		return tidings.Recipients{}, false, tidings.ProjectNotFound(project)
	}
	if err != nil {
		return tidings.Recipients{}, false, err
	}
	if !found {
		return tidings.Recipients{}, false, tidings.ChannelNotFound(project, channel)
	}
	if own != nil {
		r, err := storedRecipients(*own)
		return r, true, err
	}
	r, err := storedRecipients(projectSetting)
	return r, false, err
}

// normalRecipients checks r as SetRecipients takes it, whether or not it came from
// ParseRecipients: a known mode, and for chosen members 1 to MaxRecipients emails of
// the right shape, made lower case, sorted and unique.
func normalRecipients(r tidings.Recipients) (tidings.Recipients, error) {
	switch r.Mode {
	case tidings.NotifyEveryone, tidings.NotifyNobody:
		if len(r.Emails) > 0 {
			var p tidings.Problems
			p.Add("notify", "unexpected", "emails are for chosen members only (mode %q)", r.Mode)
			return tidings.Recipients{}, p.Err()
		}
		return tidings.Recipients{Mode: r.Mode}, nil
	case tidings.NotifyMembers:
		if len(r.Emails) == 0 {
			var p tidings.Problems
			p.Add("notify", "required", "choose at least one member")
			return tidings.Recipients{}, p.Err()
		}
		for _, e := range r.Emails {
			if strings.Contains(e, ",") {
				var p tidings.Problems
				p.Add("notify", "format", "%q is not an email", e)
				return tidings.Recipients{}, p.Err()
			}
		}
		n, err := tidings.ParseRecipients(strings.Join(r.Emails, ","))
		if err != nil {
			return tidings.Recipients{}, err
		}
		if n.Mode != tidings.NotifyMembers { // "everyone" or "nobody" given as an email
			var p tidings.Problems
			p.Add("notify", "format", "%q is not an email", n.String())
			return tidings.Recipients{}, p.Err()
		}
		return n, nil
	}
	var p tidings.Problems
	p.Add("notify", "enum", "must be everyone, nobody or members (got %q)", r.Mode)
	return tidings.Recipients{}, p.Err()
}

// storedRecipients reads a stored setting.
func storedRecipients(s string) (tidings.Recipients, error) {
	return tidings.ParseRecipients(s)
}
