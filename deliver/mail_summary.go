package deliver

import (
	"context"
	"fmt"
	"html/template"
	"strings"
	"time"

	"github.com/tidings-dev/tidings"
)

// The quiet-hours summary mail: at the end of a member's quiet hours, one mail lists
// the events their mail held (the first maxSummaryEvents, oldest first) and says how
// many there were. Its unsubscribe link stops the member's email of every project: a
// summary stands for several.

// maxSummaryEvents bounds the events a summary lists; it counts them all.
const maxSummaryEvents = 20

// summaryMail is the summary of a job's quiet period, or nil when the member's mail
// held nothing in it.
func (r *Runner) summaryMail(ctx context.Context, j *tidings.Delivery, uid int64, to string, prefs *tidings.NotifyPrefs) (*tidings.MailMessage, error) {
	st := r.cfg.Store
	// The quiet records of the day before the period's end (CreatedAt): the previous
	// period ended then.
	ids, n, err := st.RecordedEvents(ctx, uid, j.Target, tidings.PushQuiet, j.CreatedAt.Add(-24*time.Hour), maxSummaryEvents)
	if err != nil || n == 0 {
		return nil, err
	}
	var evs []*tidings.Event
	for _, id := range ids {
		ev, err := st.FindEventByID(ctx, j.AccountID, id)
		if tidings.ErrorCode(err) == tidings.ENotFound {
			continue // deleted since: still counted, as it arrived
		}
		if err != nil {
			return nil, err
		}
		evs = append(evs, ev)
	}
	links, err := r.links(ctx, uid, tidings.UnsubscribeAll)
	if err != nil {
		return nil, err
	}
	loc := time.UTC
	if prefs != nil {
		loc = zone(prefs.TimeZone)
	}
	return summaryMessage(n, evs, to, loc, links), nil
}

// summaryMessage is the summary mail of n events, listing evs (at most
// maxSummaryEvents of them) with their times in the member's zone.
func summaryMessage(n int, evs []*tidings.Event, to string, loc *time.Location, l mailLinks) *tidings.MailMessage {
	subject := plural(n, "event", "events") + " arrived during your quiet hours"
	type item struct{ Title, Where, At, Link string }
	d := struct {
		Subject, More, Home string
		Items               []item
		Footer              footer
	}{Subject: subject, Home: l.url("/"), Footer: footer{
		Why:      "You get this mail because you chose email for some of your projects in Tidings, and quiet hours.",
		Settings: l.url("/settings/notifications"), Unsubscribe: l.unsubscribe}}
	var t strings.Builder
	t.WriteString(subject + ".\n\n")
	for _, ev := range evs {
		it := item{Title: oneLine(title(ev)), Where: ev.Project + " / #" + ev.Channel, At: ev.Timestamp.In(loc).Format("Mon 15:04"),
			Link: l.url(eventPath(ev))}
		d.Items = append(d.Items, it)
		fmt.Fprintf(&t, "- %s\n  %s · %s\n", it.Title, it.Where, it.At)
		if it.Link != "" {
			t.WriteString("  " + it.Link + "\n")
		}
	}
	if more := n - len(evs); more > 0 && len(evs) > 0 {
		d.More = fmt.Sprintf("and %d more", more)
		t.WriteString("… " + d.More + ".\n")
	}
	if d.Home != "" {
		t.WriteString("\nOpen Tidings to see them all: " + d.Home + "\n")
	}
	t.WriteString("\n-- \n" + d.Footer.Why + "\n")
	if d.Footer.Settings != "" {
		t.WriteString("Your notification settings: " + d.Footer.Settings + "\n")
	}
	if d.Footer.Unsubscribe != "" {
		t.WriteString("Stop all email from Tidings: " + d.Footer.Unsubscribe + "\n")
	}
	return &tidings.MailMessage{To: to, Subject: subject, Text: t.String(), HTML: render(summaryHTML, d), ListUnsubscribe: l.unsubscribe}
}

var summaryHTML = template.Must(template.New("summary").Parse(mailHead + `
<h1 style="margin:0 0 16px;font-size:20px">{{.Subject}}</h1>
{{if .Items}}<ul style="margin:0 0 16px;padding:0;list-style:none">{{range .Items}}
<li style="padding:8px 0;border-bottom:1px solid #f4f4f5"><div style="font-size:15px;font-weight:600;overflow-wrap:anywhere">
{{- if .Link}}<a href="{{.Link}}" style="color:#18181b;text-decoration:none">{{.Title}}</a>{{else}}{{.Title}}{{end}}</div>
<div style="font-size:13px;color:#71717a">{{.Where}} · {{.At}}</div></li>{{end}}
</ul>{{end}}
{{if .More}}<p style="margin:0 0 16px;font-size:14px">… {{.More}}.</p>{{end}}
{{if .Home}}<p style="margin:16px 0"><a href="{{.Home}}" style="` + buttonStyle + `">Open Tidings</a></p>{{end}}
<p style="margin:24px 0 0;padding-top:12px;border-top:1px solid #e4e4e7;font-size:12px;color:#71717a">{{.Footer.Why}}
{{- if .Footer.Settings}} <a href="{{.Footer.Settings}}" style="color:#71717a">Your notification settings</a>.{{end}}
{{- if .Footer.Unsubscribe}} <a href="{{.Footer.Unsubscribe}}" style="color:#71717a">Stop all email from Tidings</a>.{{end}}</p>
</div></body></html>
`))
