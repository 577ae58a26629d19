package web

import (
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/tidings-dev/tidings"
)

// Who is notified of a project's events, and of each channel's where it differs:
// everyone, nobody or chosen members (tidings.Recipients). Owners change it; members
// see it.

// notifyChannels is how many channels the page offers a setting for: the project's
// first, as the projects page lists them. The CLI sets any channel.
const notifyChannels = 100

type recipientsData struct {
	Project  string
	Members  []string     // the account's members' emails, sorted
	Own      recipientRow // the project's setting
	Channels []recipientRow
	More     int // channels not offered here
	// EscalateMinutes: urgent events reach everyone this long after they arrive
	// without an acknowledgement (0: never); Escalate says it in words, Repeat says
	// the repeats beside it ("are pushed once").
	EscalateMinutes  int
	Escalate, Repeat string
}

// recipientRow is one form: the project's (Channel "") or a channel's.
type recipientRow struct {
	Channel string
	Follows bool // a channel without its own setting
	R       tidings.Recipients
	Chosen  []memberChoice
	Gone    []string // chosen emails that are no longer members: not notified
	Summary string
}

type memberChoice struct {
	Email   string
	Checked bool
}

func (s *Server) recipientsPage(w http.ResponseWriter, r *http.Request) error {
	return s.renderRecipients(w, r, http.StatusOK, "")
}

func (s *Server) renderRecipients(w http.ResponseWriter, r *http.Request, status int, msg string) error {
	ctx, id, project := r.Context(), sessionFrom(r).account.ID, r.PathValue("project")
	rs, _, err := s.store.RecipientsOf(ctx, id, project, "")
	if err != nil {
		return err
	}
	us, err := s.store.ListUsers(ctx, id)
	if err != nil {
		return err
	}
	p, err := s.store.FindProject(ctx, id, project)
	if err != nil {
		return err
	}
	d := recipientsData{Project: project, EscalateMinutes: int(p.EscalateAfter / time.Minute), Escalate: escalateText(p.EscalateAfter),
		Repeat: strings.TrimPrefix(escalationText(p.RepeatUrgentEvery, p.RepeatUrgentTimes), "Urgent events ")}
	for _, u := range us {
		d.Members = append(d.Members, strings.ToLower(u.Email))
	}
	slices.Sort(d.Members)
	d.Own = recipientRowOf("", rs, false, d.Members)
	cs, err := s.store.PageChannels(ctx, id, tidings.ChannelQuery{Project: project, Limit: notifyChannels})
	if err != nil {
		return err
	}
	d.More = cs.Total - len(cs.Channels)
	for _, c := range cs.Channels {
		cr, own, err := s.store.RecipientsOf(ctx, id, project, c.Name)
		if err != nil {
			return err
		}
		d.Channels = append(d.Channels, recipientRowOf(c.Name, cr, !own, d.Members))
	}
	return s.render(w, r, "recipients", &view{Title: "Who is notified: " + project, Section: "settings",
		Status: status, Error: msg, Data: d})
}

func recipientRowOf(channel string, rs tidings.Recipients, follows bool, members []string) recipientRow {
	row := recipientRow{Channel: channel, Follows: follows, R: rs, Summary: recipientsText(rs)}
	if follows {
		row.Summary = "as the project (" + row.Summary + ")"
	}
	for _, m := range members {
		row.Chosen = append(row.Chosen, memberChoice{Email: m, Checked: !follows && rs.Mode == tidings.NotifyMembers && slices.Contains(rs.Emails, m)})
	}
	if rs.Mode == tidings.NotifyMembers {
		for _, e := range rs.Emails {
			if !slices.Contains(members, e) {
				row.Gone = append(row.Gone, e)
			}
		}
	}
	return row
}

// recipientsText says a setting in words: "everyone", "nobody", "ada@…, bob@…".
func recipientsText(rs tidings.Recipients) string {
	if rs.Mode == tidings.NotifyMembers {
		return strings.Join(rs.Emails, ", ")
	}
	return rs.String()
}

// setRecipients saves the form of the project (no channel field) or of one channel:
// notify = everyone, nobody, members (with member = email, …) or, for a channel,
// project (follow the project again). A refused setting saves nothing.
func (s *Server) setRecipients(w http.ResponseWriter, r *http.Request) error {
	project := r.PathValue("project")
	channel := strings.TrimSpace(r.PostFormValue("channel"))
	where := "the project " + project
	if channel != "" {
		where = "#" + channel
	}
	var set *tidings.Recipients
	switch mode := r.PostFormValue("notify"); mode {
	case "project":
		if channel == "" {
			return s.renderRecipients(w, r, http.StatusBadRequest, "Notify: a project cannot follow itself: choose everyone, nobody or chosen members.")
		}
	case tidings.NotifyEveryone, tidings.NotifyNobody, tidings.NotifyMembers:
		text := mode
		if mode == tidings.NotifyMembers {
			r.ParseForm()
			text = strings.Join(r.PostForm["member"], ",")
			if strings.TrimSpace(text) == "" {
				return s.renderRecipients(w, r, http.StatusBadRequest, "Notify "+where+": choose at least one member, or nobody.")
			}
		}
		rs, err := tidings.ParseRecipients(text)
		if err != nil {
			return s.recipientsError(w, r, err, where)
		}
		set = &rs
	default:
		return s.renderRecipients(w, r, http.StatusBadRequest, "Notify "+where+": choose everyone, nobody or chosen members.")
	}
	if err := s.store.SetRecipients(r.Context(), sessionFrom(r).account.ID, project, channel, set); err != nil {
		return s.recipientsError(w, r, err, where)
	}
	words := "as the project"
	if set != nil {
		words = recipientsText(*set)
	}
	anchor := "notify-project"
	if channel != "" {
		anchor = "notify-c-" + channel
	}
	return s.notice(w, r, "/settings/projects/"+project+"/notify#"+anchor, "Notify "+where+": "+words+".")
}

// recipientsError shows a refused setting (a non-member's email, a malformed one, an
// unknown channel) on the page, as the projects page shows its forms' problems.
func (s *Server) recipientsError(w http.ResponseWriter, r *http.Request, err error, where string) error {
	switch code := tidings.ErrorCode(err); code {
	case tidings.EValidation:
		msg := strings.TrimPrefix(tidings.ErrorMessage(err), "notify: ")
		return s.renderRecipients(w, r, http.StatusBadRequest, "Notify "+where+": "+msg)
	case tidings.EChannelNotFound:
		return s.renderRecipients(w, r, http.StatusBadRequest, tidings.ErrorMessage(err))
	}
	return err
}
