package mail

import (
	"fmt"
	"html/template"
	"strings"
	"time"

	"github.com/tidings-dev/tidings"
)

// Account mail: the invitation and password reset links that an owner would
// otherwise copy by hand. Short, plain, with the link on a line of its own.

var accountHTML = template.Must(template.New("account").Parse(`<!doctype html>
<html><body style="margin:0;padding:24px;background:#f6f7f9;font-family:-apple-system,BlinkMacSystemFont,'Segoe UI',Roboto,sans-serif;color:#1f2328">
<div style="max-width:520px;margin:0 auto;background:#ffffff;border:1px solid #d8dee4;border-radius:8px;padding:24px">
<p style="margin:0 0 16px;font-size:16px;line-height:1.5">{{.Lead}}</p>
<p style="margin:0 0 16px"><a href="{{.Link}}" style="display:inline-block;background:#1f6feb;color:#ffffff;text-decoration:none;padding:10px 16px;border-radius:6px;font-weight:600">{{.Button}}</a></p>
<p style="margin:0 0 8px;font-size:13px;color:#59636e;line-height:1.5">{{.Note}}</p>
<p style="margin:0;font-size:12px;color:#59636e;word-break:break-all">{{.Link}}</p>
</div></body></html>`))

type accountMail struct{ Lead, Button, Note, Link string }

func accountMessage(to, subject string, m accountMail) *tidings.MailMessage {
	var h strings.Builder
	if err := accountHTML.Execute(&h, m); err != nil {
		panic(err) // the template and its fields are ours
	}
	text := m.Lead + "\n\n" + m.Button + ":\n" + m.Link + "\n\n" + m.Note + "\n"
	return &tidings.MailMessage{To: to, Subject: subject, Text: text, HTML: h.String()}
}

// InviteMessage is the mail of an invitation to join account as role, made by
// inviter (an email), with its link, which works until expires.
func InviteMessage(to, account, inviter, role, link string, expires time.Time) *tidings.MailMessage {
	as := "a member"
	if role == tidings.UserOwner {
		as = "an owner"
	}
	lead := fmt.Sprintf("%s invites you to join %s on Tidings as %s.", inviter, account, as)
	if inviter == "" {
		lead = fmt.Sprintf("You are invited to join %s on Tidings as %s.", account, as)
	}
	return accountMessage(to, "Join "+account+" on Tidings", accountMail{
		Lead:   lead,
		Button: "Accept the invitation",
		Note: "The link works once, until " + expires.UTC().Format("2 January 2006 15:04 MST") +
			". If you did not expect it, ignore this mail.",
		Link: link,
	})
}

// ResetMessage is the mail of a password reset link asked for on the sign-in page.
func ResetMessage(to, link string, expires time.Time) *tidings.MailMessage {
	return accountMessage(to, "Choose a new Tidings password", accountMail{
		Lead:   "Someone (we hope you) asked to choose a new password for " + to + " on Tidings.",
		Button: "Choose a new password",
		Note: "The link works once, until " + expires.UTC().Format("2 January 2006 15:04 MST") +
			". If you did not ask for it, ignore this mail: your password stays as it is.",
		Link: link,
	})
}
