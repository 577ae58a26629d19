package web

import (
	"cmp"
	"context"
	"net/http"
	"strings"

	"github.com/tidings-dev/tidings"
)

// The getting-started checklist of a new team's home page. Each step is read from what
// exists (a project, a channel, a token, an event, a device), so it ticks itself
// whichever way the thing was made: the dashboard, the CLI or the API. The page ticks
// the event step live (app.js listens on the projects' streams) and the device step
// when this browser has a push subscription.

// checklist is the home page's data.
type checklist struct {
	Team    string
	Steps   []*checkStep
	Done    int
	Streams string // the live streams that tick the event step, space-separated ("": done)
	Feed    string // the feed where the first event shows
}

// checkStep is one step. Key names it for app.js and the tests.
type checkStep struct {
	Key, Title, Hint string
	Num              int // its number, from 1
	Done             bool
	Current          bool   // the first step not done: its action stands out
	DoneText         string // what was done, once it is ("Project my-saas")
	URL, Action      string // where the step is done (none: nothing to follow)
	Example          string // the event step's curl
}

// Steps of the checklist, by key.
const (
	stepProject = "project"
	stepChannel = "channel"
	stepToken   = "token"
	stepEvent   = "event"
	stepPush    = "push"
)

// maxChecklistStreams bounds the live streams the page opens to see the first event
// (a session may have DefaultMaxStreamsPerSession): a new team has one or two projects.
const maxChecklistStreams = 3

// checklistOf returns the member's checklist, or nil when it is done or they hid it.
func (s *Server) checklistOf(r *http.Request, sess *session) (*checklist, error) {
	ctx := r.Context()
	acct := sess.account.ID
	hidden, err := s.store.ChecklistHidden(ctx, acct, sess.user.ID)
	if err != nil || hidden {
		return nil, err
	}
	ps, err := s.store.ListProjects(ctx, acct)
	if err != nil {
		return nil, err
	}
	c := &checklist{Team: sess.account.Name}
	owner := sess.user.Role == tidings.UserOwner

	// The project and channel the first event goes to: the first project with a channel.
	var project, channel string
	for _, p := range ps {
		page, err := s.store.PageChannels(ctx, acct, tidings.ChannelQuery{Project: p.Name, Limit: 1})
		if err != nil {
			return nil, err
		}
		if len(page.Channels) > 0 {
			project, channel = p.Name, page.Channels[0].Name
			break
		}
	}
	if owner {
		proj := &checkStep{Key: stepProject, Title: "Create a project",
			Hint: "One project per app or website: its events, channels and insights live in it.",
			URL:  "/settings/projects", Action: "Create a project"}
		if len(ps) > 0 {
			proj.Done, proj.DoneText = true, "Project "+ps[0].Name+" is ready."
		}
		ch := &checkStep{Key: stepChannel, Title: "Create a channel",
			Hint: "Channels sort a project's events: #payments, #signups, #errors.",
			URL:  "/settings/projects", Action: "Create a channel"}
		if channel != "" {
			ch.Done, ch.DoneText = true, "Channel #"+channel+" in "+project+" is ready."
		}
		tok, err := s.tokenStep(ctx, acct)
		if err != nil {
			return nil, err
		}
		c.Steps = append(c.Steps, proj, ch, tok)
	}

	ev := &checkStep{Key: stepEvent, Title: "Send your first event"}
	recent := s.recentProject(ctx, acct, ps)
	switch {
	case recent != "":
		ev.Done, ev.DoneText, ev.URL, ev.Action = true, "Events arrive in "+recent+".", "/p/"+recent, "Open the feed"
	case project != "" && owner:
		ev.Example = s.firstEventExample(r, project, channel)
	case project != "":
		ev.Hint = "Send it with a token from an owner of your team, or wait for your app's first one: this step ticks itself when it arrives."
		ev.URL, ev.Action = "/p/"+project, "Open the feed"
	case owner:
		ev.Hint = "The command that sends it appears here once there is a project and a channel."
	default:
		ev.Hint = "An owner of your team creates the first project; its events then appear here."
	}
	if !ev.Done && len(ps) > 0 {
		var streams []string
		for i, p := range ps {
			if i == maxChecklistStreams {
				break
			}
			streams = append(streams, "/p/"+p.Name+"/stream")
		}
		c.Streams = strings.Join(streams, " ")
		c.Feed = "/p/" + cmp.Or(project, ps[0].Name)
	}
	c.Steps = append(c.Steps, ev)

	if s.vapidPublic != "" { // push is on: this device may receive notifications
		devices, err := s.store.ListPushSubscriptions(ctx, sess.user.ID)
		if err != nil {
			return nil, err
		}
		push := &checkStep{Key: stepPush, Title: "Turn on notifications on this device",
			Hint: "A push notification for the events you choose, on this computer or phone.",
			URL:  "/settings/devices", Action: "Set up notifications"}
		if len(devices) > 0 {
			push.Done, push.DoneText = true, "Notifications are on for "+plural(len(devices), "device")+"."
		}
		c.Steps = append(c.Steps, push)
	}

	for i, st := range c.Steps {
		st.Num = i + 1
		if st.Done && st.Key != stepEvent { // done: nothing left to do there (the event's leads to its feed)
			st.URL, st.Action = "", ""
		}
		if st.Done {
			c.Done++
		} else if c.Done == i {
			st.Current = true
		}
	}
	if c.Done == len(c.Steps) {
		return nil, nil
	}
	return c, nil
}

// tokenStep is done when the account has a token that is not revoked.
func (s *Server) tokenStep(ctx context.Context, acct int64) (*checkStep, error) {
	st := &checkStep{Key: stepToken, Title: "Create an API token",
		Hint: "A full-access token for your server's code; a public one for a website's script.",
		URL:  "/settings/api", Action: "Create a token"}
	ts, err := s.store.ListTokens(ctx, acct)
	if err != nil {
		return nil, err
	}
	for _, t := range ts {
		if !t.Revoked() {
			st.Done, st.DoneText = true, "Token "+t.Name+" ("+t.Access+" access) is ready."
			break
		}
	}
	return st, nil
}

// hideChecklist remembers that the member hid the checklist, and leads to their project.
func (s *Server) hideChecklist(w http.ResponseWriter, r *http.Request) error {
	sess := sessionFrom(r)
	if err := s.store.HideChecklist(r.Context(), sess.account.ID, sess.user.ID, s.now()); err != nil {
		return err
	}
	return s.notice(w, r, s.projectLanding(r.Context(), sess.account.ID, true),
		"The getting-started checklist is hidden. Settings has every step it listed.")
}
