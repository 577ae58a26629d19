package deliver

import (
	"fmt"
	"html/template"
	"strings"
	"time"

	"github.com/tidings-dev/tidings"
)

// digestMessage is the digest mail of a project's period, its times in the member's
// zone.
func digestMessage(c *tidings.DigestContent, every, to string, loc *time.Location, l mailLinks) *tidings.MailMessage {
	kind := "Daily"
	if every == tidings.DigestWeekly {
		kind = "Weekly"
	}
	events := plural(c.Events, "event", "events")
	subject := oneLine(fmt.Sprintf("%s digest of %s: %s", kind, c.Project, events))
	period := c.From.In(loc).Format("Mon 2 Jan 15:04") + " – " + c.To.In(loc).Format("Mon 2 Jan 15:04") + " (" + loc.String() + ")"
	type row struct {
		Name, Icon, Link string
		Count            int
	}
	type insight struct {
		Title, Value, Icon, At string
	}
	d := struct {
		Subject, Project, Period, Events, ProjectPage, InsightsPage string
		Channels, Top                                               []row
		Insights                                                    []insight
		NewUsers                                                    string
		NewUserIDs                                                  []string
		Footer                                                      footer
	}{Subject: subject, Project: c.Project, Period: period, Events: events, ProjectPage: l.url("/p/" + c.Project),
		InsightsPage: l.url("/p/" + c.Project + "/insights"), NewUserIDs: c.NewUserIDs,
		Footer: footer{Why: "You get this digest because you chose a " + strings.ToLower(kind) + " digest of " + c.Project + " in Tidings.",
			Settings: l.url("/settings/notifications"), Unsubscribe: l.unsubscribe, Project: c.Project}}
	if c.NewUsers > 0 {
		d.NewUsers = plural(c.NewUsers, "new user", "new users")
	}
	var t strings.Builder
	t.WriteString(subject + "\n" + period + "\n")
	if d.ProjectPage != "" {
		t.WriteString(d.ProjectPage + "\n")
	}
	if len(c.Channels) > 0 {
		t.WriteString("\nEvents per channel\n")
		for _, ch := range c.Channels {
			d.Channels = append(d.Channels, row{Name: "#" + ch.Name, Count: ch.Count, Link: l.url("/p/" + c.Project + "/c/" + ch.Name)})
			fmt.Fprintf(&t, "  #%s: %d\n", ch.Name, ch.Count)
		}
	}
	if len(c.TopEvents) > 0 {
		t.WriteString("\nTop events\n")
		for _, ev := range c.TopEvents {
			d.Top = append(d.Top, row{Name: ev.Name, Icon: ev.Icon, Count: ev.Count})
			name := ev.Name
			if ev.Icon != "" {
				name = ev.Icon + " " + name
			}
			fmt.Fprintf(&t, "  %s: %d\n", name, ev.Count)
		}
	}
	if len(c.Insights) > 0 {
		t.WriteString("\nInsights that changed\n")
		for _, in := range c.Insights {
			v := in.Prefix + in.Value + in.Suffix
			at := in.UpdatedAt.In(loc).Format("Mon 15:04")
			d.Insights = append(d.Insights, insight{Title: in.Title, Value: v, Icon: in.Icon, At: at})
			fmt.Fprintf(&t, "  %s: %s (%s)\n", strings.TrimSpace(in.Icon+" "+in.Title), v, at)
		}
	}
	if d.NewUsers != "" {
		t.WriteString("\n" + d.NewUsers)
		if len(c.NewUserIDs) > 0 {
			t.WriteString(": " + strings.Join(c.NewUserIDs, ", "))
			if c.NewUsers > len(c.NewUserIDs) {
				t.WriteString(", …")
			}
		}
		t.WriteString("\n")
	}
	t.WriteString(d.Footer.text())
	return &tidings.MailMessage{To: to, Subject: subject, Text: t.String(), HTML: render(digestHTML, d), ListUnsubscribe: l.unsubscribe}
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

const cell = `padding:4px 12px 4px 0;border-bottom:1px solid #f4f4f5`

var digestHTML = template.Must(template.New("digest").Parse(mailFoot + mailHead + `
<h1 style="margin:0 0 4px;font-size:20px">{{.Subject}}</h1>
<p style="margin:0 0 16px;font-size:14px;color:#52525b">{{.Period}}</p>
{{if .Channels}}<h2 style="margin:20px 0 8px;font-size:16px">Events per channel</h2>
<table style="border-collapse:collapse;font-size:14px;width:100%">{{range .Channels}}
<tr><td style="` + cell + `">{{if .Link}}<a href="{{.Link}}" style="color:#4f46e5">{{.Name}}</a>{{else}}{{.Name}}{{end}}</td><td style="` + cell + `;text-align:right">{{.Count}}</td></tr>{{end}}
</table>{{end}}
{{if .Top}}<h2 style="margin:20px 0 8px;font-size:16px">Top events</h2>
<table style="border-collapse:collapse;font-size:14px;width:100%">{{range .Top}}
<tr><td style="` + cell + `">{{if .Icon}}{{.Icon}} {{end}}{{.Name}}</td><td style="` + cell + `;text-align:right">{{.Count}}</td></tr>{{end}}
</table>{{end}}
{{if .Insights}}<h2 style="margin:20px 0 8px;font-size:16px">Insights that changed</h2>
<table style="border-collapse:collapse;font-size:14px;width:100%">{{range .Insights}}
<tr><td style="` + cell + `">{{if .Icon}}{{.Icon}} {{end}}{{.Title}}</td><td style="` + cell + `;text-align:right"><strong>{{.Value}}</strong></td><td style="` + cell + `;text-align:right;color:#71717a">{{.At}}</td></tr>{{end}}
</table>{{end}}
{{if .NewUsers}}<h2 style="margin:20px 0 8px;font-size:16px">{{.NewUsers}}</h2>
{{if .NewUserIDs}}<p style="margin:0;font-size:14px;color:#52525b">{{range $i, $u := .NewUserIDs}}{{if $i}}, {{end}}{{$u}}{{end}}</p>{{end}}{{end}}
{{if .ProjectPage}}<p style="margin:20px 0"><a href="{{.ProjectPage}}" style="` + buttonStyle + `">Open {{.Project}}</a></p>{{end}}
{{template "footer" .Footer}}
</div></body></html>
`))
