package web

import (
	"context"
	"maps"
	"net/http"
	"slices"
	"strings"

	"github.com/tidings-dev/tidings"
)

// How a member is notified of each project, and of a channel where it differs: push,
// email, both or nothing (tidings.Routes), and the project's digest. Each member sets
// their own on Settings → Notifications, one form per project.

// routesProject is one project's form.
type routesProject struct {
	Name     string
	By       string // the project's routes: push, email, push,email or none
	Digest   string // off, daily or weekly
	Channels []routesChannel
	More     int // channels not listed: the CLI sets them
}

// routesChannel is one channel's choice: By "" follows the project.
type routesChannel struct {
	Name string
	By   string
}

// routeChoices are the ways a member may be notified, in the order the form offers them.
var routeChoices = []choice{
	{tidings.RoutePush, "Push"}, {tidings.RouteEmail, "Email"}, {"push,email", "Push and email"}, {tidings.RouteNone, "Nothing"},
}

// digestChoices are the digests a member may choose of a project.
var digestChoices = []choice{{tidings.DigestOff, "Off"}, {tidings.DigestDaily, "Daily"}, {tidings.DigestWeekly, "Weekly"}}

// routesOf fills each project's routes and digest of the signed-in member.
func (s *Server) routesOf(ctx context.Context, accountID, userID int64, ps []*tidings.Project) ([]routesProject, error) {
	saved, err := s.store.AccountRoutes(ctx, accountID)
	if err != nil {
		return nil, err
	}
	digests, err := s.store.MemberDigests(ctx, accountID, userID)
	if err != nil {
		return nil, err
	}
	var out []routesProject
	for _, p := range ps {
		rp := routesProject{Name: p.Name, By: tidings.RoutesFor(saved, userID, p.Name, "").String(), Digest: tidings.DigestOff}
		if d := digests[p.Name]; d != "" {
			rp.Digest = d
		}
		cs, err := s.store.PageChannels(ctx, accountID, tidings.ChannelQuery{Project: p.Name, Limit: sidebarChannels})
		if err != nil {
			return nil, err
		}
		own := map[string]string{} // the channels with a choice of their own
		for _, m := range saved {
			if m.UserID == userID && m.Project == p.Name && m.Channel != "" {
				own[m.Channel] = m.Routes.String()
			}
		}
		for _, c := range cs.Channels {
			rp.Channels = append(rp.Channels, routesChannel{Name: c.Name, By: own[c.Name]})
			delete(own, c.Name)
		}
		// Channels beyond the list that have a choice of their own are listed too:
		// saving the form keeps what it shows.
		for _, name := range slices.Sorted(maps.Keys(own)) {
			rp.Channels = append(rp.Channels, routesChannel{Name: name, By: own[name]})
		}
		rp.More = cs.Total - len(cs.Channels)
		out = append(out, rp)
	}
	return out, nil
}

// saveRoutes saves one project's form: by (the project's routes), c:CHANNEL (a
// channel's, "" as the project) and digest. Only what changed is written; a refused
// choice saves nothing.
func (s *Server) saveRoutes(w http.ResponseWriter, r *http.Request) error {
	sess := sessionFrom(r)
	ctx, account, user := r.Context(), sess.account.ID, sess.user.ID
	project := r.PostFormValue("project")
	if !tidings.ValidName(project) {
		return s.renderNotifications(w, r, http.StatusBadRequest, "How you’re notified: unknown project.", false)
	}
	fail := func(msg string) error {
		return s.renderNotifications(w, r, http.StatusBadRequest, "How you’re notified of "+project+": "+msg, false)
	}
	mailOff := s.mailer == nil
	// A choice the page showed disabled (email, on a server that lost its SMTP) is
	// not sent: the field is missing, and the saved choice stays as it is.
	keepBy, keepDigest := !r.PostForm.Has("by"), !r.PostForm.Has("digest")
	var by tidings.Routes
	if !keepBy {
		var err error
		if by, err = tidings.ParseRoutes(r.PostFormValue("by")); err != nil {
			return fail("choose push, email, push and email, or nothing.")
		}
		if by.Email && mailOff {
			return fail(noMailReason)
		}
	}
	channels := map[string]*tidings.Routes{}
	for key, vs := range r.PostForm {
		c, ok := strings.CutPrefix(key, "c:")
		if !ok {
			continue
		}
		if !tidings.ValidName(c) {
			return fail("unknown channel.")
		}
		if len(vs) == 0 || vs[0] == "" {
			channels[c] = nil
			continue
		}
		cr, err := tidings.ParseRoutes(vs[0])
		if err != nil {
			return fail("#" + c + ": choose as the project, push, email, push and email, or nothing.")
		}
		if cr.Email && mailOff {
			return fail(noMailReason)
		}
		channels[c] = &cr
	}
	digest, err := tidings.ParseDigest(r.PostFormValue("digest"))
	if err != nil {
		return fail("the digest is off, daily or weekly.")
	}
	if digest != tidings.DigestOff && mailOff && !keepDigest {
		return fail(noMailReason)
	}
	// The member's time zone, the digest's (and quiet hours'): the field the page's
	// script fills with the browser's zone when none is saved. A form without it
	// keeps the saved one.
	prefs, err := s.store.NotifyPrefs(ctx, user)
	if err != nil {
		return err
	}
	zone := prefs.TimeZone
	if r.PostForm.Has("time_zone") {
		zone = strings.TrimSpace(r.PostFormValue("time_zone"))
		if zone != prefs.TimeZone {
			var pr tidings.Problems
			changed := *prefs
			changed.TimeZone = zone
			if changed.Check(&pr); pr.Has("time_zone") {
				return fail("your time zone is not one this server knows: write one like Europe/Berlin, or leave it empty for UTC.")
			}
		}
	}

	if _, err := s.store.FindProject(ctx, account, project); err != nil {
		return s.routesError(w, r, err, project)
	}
	saved, err := s.store.AccountRoutes(ctx, account)
	if err != nil {
		return err
	}
	current := func(channel string) *tidings.Routes {
		for _, m := range saved {
			if m.UserID == user && m.Project == project && m.Channel == channel {
				return &m.Routes
			}
		}
		return nil
	}
	type write struct {
		channel string
		r       *tidings.Routes
	}
	var writes []write
	if keepBy {
		if by = tidings.DefaultRoutes; current("") != nil {
			by = *current("")
		}
	} else if old := current(""); old == nil && by != tidings.DefaultRoutes || old != nil && *old != by {
		writes = append(writes, write{"", &by})
	}
	for _, c := range slices.Sorted(maps.Keys(channels)) {
		old, set := current(c), channels[c]
		if old == nil && set == nil || old != nil && set != nil && *old == *set {
			continue
		}
		// Every channel first: a refused one saves nothing of the form.
		if _, _, err := s.store.RecipientsOf(ctx, account, project, c); err != nil {
			return s.routesError(w, r, err, project)
		}
		writes = append(writes, write{c, set})
	}
	for _, wr := range writes {
		if err := s.store.SetRoutes(ctx, account, user, project, wr.channel, wr.r); err != nil {
			return s.routesError(w, r, err, project)
		}
	}
	digests, err := s.store.MemberDigests(ctx, account, user)
	if err != nil {
		return err
	}
	if keepDigest {
		if digest = digests[project]; digest == "" {
			digest = tidings.DigestOff
		}
	} else if old := digests[project]; old != digest && !(old == "" && digest == tidings.DigestOff) {
		if err := s.store.SetDigest(ctx, account, user, project, digest); err != nil {
			return s.routesError(w, r, err, project)
		}
	}
	msg := "How you’re notified of " + project + ": " + routesWords(by) + "; digest " + digest + "."
	if zone != prefs.TimeZone {
		// Saved last: what the form refused saved nothing.
		prefs.TimeZone = zone
		if err := s.store.SetNotifyPrefs(ctx, user, prefs); err != nil {
			return err
		}
		msg += " Your time zone: " + zoneName(zone) + "."
	}
	return s.notice(w, r, "/settings/notifications#routes-"+project, msg)
}

// zoneName is a member's time zone for people: "" is UTC.
func zoneName(zone string) string {
	if zone == "" {
		return "UTC"
	}
	return zone
}

// noMailReason says why email cannot be chosen.
const noMailReason = "email is not set up on this server (an operator sets --smtp-url)."

// routesWords says routes in words: "push", "email", "push and email", "nothing".
func routesWords(r tidings.Routes) string {
	for _, c := range routeChoices {
		if c.Value == r.String() {
			return strings.ToLower(c.Text)
		}
	}
	return r.String()
}

// routesError shows a refused choice (a project or channel deleted meanwhile) on the page.
func (s *Server) routesError(w http.ResponseWriter, r *http.Request, err error, project string) error {
	switch tidings.ErrorCode(err) {
	case tidings.EProjectNotFound, tidings.EChannelNotFound, tidings.EValidation:
		return s.renderNotifications(w, r, http.StatusBadRequest, "How you’re notified of "+project+": "+tidings.ErrorMessage(err), false)
	}
	return err
}
