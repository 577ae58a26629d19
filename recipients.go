package tidings

import (
	"context"
	"slices"
	"strings"
)

// Who is notified of a project's events (api-contract.md, "Recipients, email and chat
// services"): everyone (the default), nobody, or chosen members. A channel without its
// own setting follows its project. Each member's mutes, "urgent only" and quiet hours
// still apply to those chosen.

// Recipient modes.
const (
	NotifyEveryone = "everyone"
	NotifyNobody   = "nobody"
	NotifyMembers  = "members" // the members of Emails
)

// MaxRecipients bounds a chosen list.
const MaxRecipients = 100

// PushNotRecipient is the push record of a device whose user is not among the
// recipients of the event's channel.
const PushNotRecipient = "not-recipient"

// Recipients is who is notified of events: Mode, and for NotifyMembers their emails
// (lower case, sorted, unique).
type Recipients struct {
	Mode   string
	Emails []string
}

// Everyone is the default: every member of the account.
var Everyone = Recipients{Mode: NotifyEveryone}

// ParseRecipients reads the CLI's and the form's "everyone", "nobody", or a
// comma-separated list of member emails. It checks the shape only; that the emails
// are members of the account is the store's to check (SetRecipients).
func ParseRecipients(s string) (Recipients, error) {
	s = strings.TrimSpace(s)
	switch s {
	case NotifyEveryone, "":
		return Everyone, nil
	case NotifyNobody:
		return Recipients{Mode: NotifyNobody}, nil
	}
	var p Problems
	var emails []string
	for _, e := range strings.Split(s, ",") {
		e = strings.ToLower(strings.TrimSpace(e))
		if e == "" {
			continue
		}
		if len(e) > 254 || !strings.Contains(e, "@") || strings.ContainsFunc(e, func(r rune) bool { return isControl(r) || r == ' ' }) {
			p.Add("notify", "format", `must be "everyone", "nobody", or members' emails separated by commas (got %q)`, e)
			return Recipients{}, p.Err()
		}
		emails = append(emails, e)
	}
	slices.Sort(emails)
	emails = slices.Compact(emails)
	if len(emails) > MaxRecipients {
		p.Add("notify", "too_many", "at most %d recipients (got %d)", MaxRecipients, len(emails))
		return Recipients{}, p.Err()
	}
	if len(emails) == 0 {
		p.Add("notify", "format", `must be "everyone", "nobody", or members' emails separated by commas`)
		return Recipients{}, p.Err()
	}
	return Recipients{Mode: NotifyMembers, Emails: emails}, nil
}

// String is the setting as ParseRecipients reads it.
func (r Recipients) String() string {
	switch r.Mode {
	case NotifyNobody:
		return NotifyNobody
	case NotifyMembers:
		return strings.Join(r.Emails, ",")
	}
	return NotifyEveryone
}

// Includes reports whether the member with this email is notified.
func (r Recipients) Includes(email string) bool {
	switch r.Mode {
	case NotifyNobody:
		return false
	case NotifyMembers:
		_, found := slices.BinarySearch(r.Emails, strings.ToLower(email))
		return found
	}
	return true
}

// RecipientStore keeps who is notified of each project and channel.
type RecipientStore interface {
	// SetRecipients sets who is notified of the project's events (channel "") or of
	// one channel's; r nil makes the channel follow its project again (for a project:
	// Everyone). Every email must be a member of the account: EValidation (field
	// "notify") naming the one that is not, and nothing is saved.
	// Errors: EProjectNotFound, EChannelNotFound, EValidation.
	SetRecipients(ctx context.Context, accountID int64, project, channel string, r *Recipients) error
	// RecipientsOf returns the project's setting (channel "") or the channel's own
	// (own false when it follows its project: r is then the project's).
	// Errors: EProjectNotFound, EChannelNotFound.
	RecipientsOf(ctx context.Context, accountID int64, project, channel string) (r Recipients, own bool, err error)
}

// NotMembers is every store's error for recipients that are not members of the
// account (field "notify", type "not_member"), naming all of them.
func NotMembers(emails []string) error {
	var p Problems
	p.Add("notify", "not_member", "not a member of the account: %s", strings.Join(emails, ", "))
	return p.Err()
}
