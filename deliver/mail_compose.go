package deliver

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"html/template"
	"net/url"
	"strings"

	"github.com/tidings-dev/tidings"
	md "github.com/tidings-dev/tidings/internal/markdown"
)

// Notification mail: a text part a person can read in any client, and an HTML part
// with inline styles only (mail clients drop <style> and block external images).
// Everything that came from a sender goes through html/template or is text.

// maxMailText bounds the description in a mail's text part.
const maxMailText = 10000

// mailHost is the host of the Message-IDs the runner makes: the public URL's, else
// "tidings.invalid" (RFC 6761: never a real host).
func mailHost(publicURL string) string {
	if u, err := url.Parse(publicURL); err == nil && u.Hostname() != "" {
		return u.Hostname()
	}
	return "tidings.invalid"
}

// newMailID is a Message-ID of a notification mail: made once when its job is written,
// so every retry of that delivery carries it.
func newMailID(host string) string {
	b := make([]byte, 12)
	rand.Read(b)
	return "<m." + hex.EncodeToString(b) + "@" + host + ">"
}

// mailLinks are the links of one member's mail of a project: none without a public URL.
type mailLinks struct {
	base        string // the public URL without its trailing slash; "" = no links
	unsubscribe string // tidings.UnsubscribeURL of the member and project
}

func (l mailLinks) url(path string) string {
	if l.base == "" {
		return ""
	}
	return l.base + path
}

// oneLine keeps a header's text on one line: a sender's event name cannot add headers.
func oneLine(s string) string {
	return strings.Join(strings.FieldsFunc(s, func(r rune) bool { return r == '\r' || r == '\n' || r == '\t' }), " ")
}

// eventSubject is "💰 New Subscription · #payments" (no icon: the event first); a
// collapsed mail, which stands for more events of the channel beyond the member's
// limit (this one among them), adds "and N more".
func eventSubject(ev *tidings.Event, more int) string {
	s := title(ev) + " · #" + ev.Channel
	if more > 1 {
		s += fmt.Sprintf(" and %d more", more-1)
	}
	return oneLine(s)
}

// mailDescription is the description for the text part: Markdown reduced to its words.
func mailDescription(ev *tidings.Event) string {
	if ev.Parser == tidings.ParserMarkdown {
		return PlainText(ev, maxMailText)
	}
	if r := []rune(ev.Description); len(r) > maxMailText {
		return string(r[:maxMailText-1]) + "…"
	}
	return ev.Description
}

// eventMail is the mail of ev to a member; more > 0 makes it a collapsed mail that
// also stands for more events of the channel beyond the member's limit.
func eventMail(ev *tidings.Event, to string, more int, l mailLinks) *tidings.MailMessage {
	page := l.url(eventPath(ev))
	channelPage := l.url("/p/" + ev.Project + "/c/" + ev.Channel)
	var t strings.Builder
	t.WriteString(title(ev) + "\n")
	t.WriteString(ev.Project + " / #" + ev.Channel)
	if ev.Priority != tidings.PriorityDefault && ev.Priority != 0 {
		t.WriteString(" · " + ev.Priority.String() + " priority")
	}
	t.WriteString("\n")
	if d := mailDescription(ev); d != "" {
		t.WriteString("\n" + d + "\n")
	}
	if len(ev.Tags) > 0 {
		t.WriteString("\n")
		for _, tag := range ev.Tags {
			t.WriteString(tag.Key + ": " + tag.Value + "\n")
		}
	}
	if page != "" {
		t.WriteString("\nOpen in Tidings: " + page + "\n")
	}
	if more > 0 {
		fmt.Fprintf(&t, "\n%s beyond your limit of %d mails a minute; this is the latest", plural(more, "event", "events"), tidings.PushesPerMinute)
		if channelPage != "" {
			t.WriteString(". See them all: " + channelPage)
		}
		t.WriteString("\n")
	}
	t.WriteString(newFooter(ev.Project, l).text())

	data := struct {
		Ev          *tidings.Event
		Title       string
		Priority    string
		Description template.HTML
		Page        string
		More        string
		Limit       int
		ChannelPage string
		Footer      footer
	}{ev, title(ev), "", md.Description(ev), page, "", tidings.PushesPerMinute, channelPage, newFooter(ev.Project, l)}
	if more > 0 {
		data.More = plural(more, "event", "events")
	}
	if ev.Priority != tidings.PriorityDefault && ev.Priority != 0 {
		data.Priority = ev.Priority.String() + " priority"
	}
	return &tidings.MailMessage{To: to, Subject: eventSubject(ev, more), Text: t.String(),
		HTML: render(eventHTML, data), ListUnsubscribe: l.unsubscribe}
}

// footer says why the member gets the mail and how to stop it.
type footer struct {
	Why, Settings, Unsubscribe, Project string
}

func newFooter(project string, l mailLinks) footer {
	return footer{Why: "You get this mail because you chose email for " + project + " in Tidings.",
		Settings: l.url("/settings/notifications"), Unsubscribe: l.unsubscribe, Project: project}
}

func (f footer) text() string {
	s := "\n-- \n" + f.Why + "\n"
	if f.Settings != "" {
		s += "Your notification settings: " + f.Settings + "\n"
	}
	if f.Unsubscribe != "" {
		s += "Stop email about " + f.Project + ": " + f.Unsubscribe + "\n"
	}
	return s
}

func render(t *template.Template, data any) string {
	var b bytes.Buffer
	if err := t.Execute(&b, data); err != nil {
		// The templates are ours and their data typed: a failure is a bug. The text
		// part still goes.
		return ""
	}
	return b.String()
}

// The styles are inline: mail clients drop <style> elements and classes.
const mailHead = `<!DOCTYPE html>
<html><head><meta charset="utf-8"><meta name="viewport" content="width=device-width"></head>
<body style="margin:0;padding:24px 12px;background:#f4f4f5;font-family:-apple-system,BlinkMacSystemFont,'Segoe UI',Roboto,Helvetica,Arial,sans-serif;color:#18181b;line-height:1.5">
<div style="max-width:560px;margin:0 auto;background:#ffffff;border:1px solid #e4e4e7;border-radius:8px;padding:24px">`

const mailFoot = `{{define "footer"}}<p style="margin:24px 0 0;padding-top:12px;border-top:1px solid #e4e4e7;font-size:12px;color:#71717a">{{.Why}}
{{- if .Settings}} <a href="{{.Settings}}" style="color:#71717a">Your notification settings</a>.{{end}}
{{- if .Unsubscribe}} <a href="{{.Unsubscribe}}" style="color:#71717a">Stop email about {{.Project}}</a>.{{end}}</p>{{end}}`

const buttonStyle = `display:inline-block;background:#4f46e5;color:#ffffff;text-decoration:none;padding:10px 18px;border-radius:6px;font-weight:600`

var eventHTML = template.Must(template.New("event").Parse(mailFoot + mailHead + `
<h1 style="margin:0 0 4px;font-size:20px">{{.Title}}</h1>
<p style="margin:0 0 16px;font-size:14px;color:#52525b">{{.Ev.Project}} / #{{.Ev.Channel}}{{if .Priority}} · <strong>{{.Priority}}</strong>{{end}}</p>
{{if .Description}}<div style="font-size:15px;margin:0 0 16px;overflow-wrap:anywhere">{{.Description}}</div>{{end}}
{{if .Ev.Tags}}<table style="border-collapse:collapse;font-size:14px;margin:0 0 16px">{{range .Ev.Tags}}
<tr><td style="padding:2px 12px 2px 0;color:#71717a">{{.Key}}</td><td style="padding:2px 0">{{.Value}}</td></tr>{{end}}
</table>{{end}}
{{if .Page}}<p style="margin:16px 0"><a href="{{.Page}}" style="` + buttonStyle + `">Open in Tidings</a></p>{{end}}
{{if .More}}<p style="margin:16px 0;font-size:14px">{{.More}} beyond your limit of {{.Limit}} mails a minute; this is the latest.{{if .ChannelPage}} <a href="{{.ChannelPage}}" style="color:#4f46e5">See them all in #{{.Ev.Channel}}</a>.{{end}}</p>{{end}}
{{template "footer" .Footer}}
</div></body></html>
`))
