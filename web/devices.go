package web

import (
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/tidings-dev/tidings"
)

type devicesData struct {
	Devices  []*tidings.PushSubscription
	Enabled  bool // the server can push
	MaxNames int
}

func (s *Server) devicesPage(w http.ResponseWriter, r *http.Request) error {
	subs, err := s.store.ListPushSubscriptions(r.Context(), sessionFrom(r).user.ID)
	if err != nil {
		return err
	}
	return s.render(w, r, "devices", &view{Title: "Devices", Tab: "devices", Section: "settings",
		Data: devicesData{Devices: subs, Enabled: s.vapidPublic != "", MaxNames: maxDeviceName}})
}

func (s *Server) renameDevice(w http.ResponseWriter, r *http.Request) error {
	name := strings.TrimSpace(r.PostFormValue("name"))
	if utf8.RuneCountInString(name) > maxDeviceName || strings.ContainsFunc(name, isControl) {
		return s.renderDevice(w, r, http.StatusBadRequest, "A device name has at most 64 characters.")
	}
	if err := s.store.RenamePushSubscription(r.Context(), sessionFrom(r).user.ID, r.PathValue("id"), name); err != nil {
		return err
	}
	msg := "Device renamed to “" + name + "”."
	if name == "" {
		msg = "Device name cleared: it is shown by its browser."
	}
	return s.notice(w, r, "/settings/devices/"+r.PathValue("id"), msg)
}

func (s *Server) removeDevice(w http.ResponseWriter, r *http.Request) error {
	if err := s.store.DeletePushSubscription(r.Context(), sessionFrom(r).user.ID, r.PathValue("id")); err != nil {
		return err
	}
	return s.notice(w, r, "/settings/devices", "Device removed: it gets no more notifications.")
}

func (s *Server) testDevice(w http.ResponseWriter, r *http.Request) error {
	if err := s.queueTest(r); err != nil {
		return err
	}
	return s.notice(w, r, "/settings/devices/"+r.PathValue("id"), "A test notification is on its way to this device.")
}

// Notifications: mutes and quiet hours, per user.

type notificationsData struct {
	Projects   []mutableProject
	QuietOn    bool
	QuietStart string // "22:00"
	QuietEnd   string
	TimeZone   string
	Saved      bool
	// MoreChannels: a project has channels the list leaves out; one is muted by name.
	MoreChannels bool
	Listed       int
	Routes       []routesProject // how the member is notified of each project
	MailOff      bool            // no SMTP: email cannot be chosen
}

type mutableProject struct {
	Name       string
	Muted      bool
	UrgentOnly bool
	Channels   []mutableChannel // the first sidebarChannels and the muted ones
	More       int              // channels not listed
}

type mutableChannel struct {
	Name       string
	Muted      bool
	UrgentOnly bool // only its urgent events notify
}

func clock(minutes int) string {
	return strconv.Itoa(minutes/60/10) + strconv.Itoa(minutes/60%10) + ":" + strconv.Itoa(minutes%60/10) + strconv.Itoa(minutes%10)
}

func parseClock(s string) (int, bool) {
	t, err := time.Parse("15:04", s)
	if err != nil {
		return 0, false
	}
	return t.Hour()*60 + t.Minute(), true
}

func (s *Server) notificationsPage(w http.ResponseWriter, r *http.Request) error {
	return s.renderNotifications(w, r, http.StatusOK, "", r.URL.Query().Get("saved") != "")
}

func (s *Server) renderNotifications(w http.ResponseWriter, r *http.Request, status int, msg string, saved bool) error {
	sess := sessionFrom(r)
	ctx := r.Context()
	prefs, err := s.store.NotifyPrefs(ctx, sess.user.ID)
	if err != nil {
		return err
	}
	d := notificationsData{QuietOn: prefs.QuietStart != prefs.QuietEnd, QuietStart: clock(prefs.QuietStart),
		QuietEnd: clock(prefs.QuietEnd), TimeZone: prefs.TimeZone, Saved: saved, Listed: sidebarChannels}
	if !d.QuietOn {
		d.QuietStart, d.QuietEnd = "22:00", "07:00"
	}
	ps, err := s.store.ListProjects(ctx, sess.account.ID)
	if err != nil {
		return err
	}
	for _, p := range ps {
		mp := mutableProject{Name: p.Name, Muted: prefs.Mutes(p.Name, ""), UrgentOnly: contains(prefs.UrgentOnly, p.Name)}
		cs, err := s.store.PageChannels(ctx, sess.account.ID, tidings.ChannelQuery{Project: p.Name, Limit: sidebarChannels})
		if err != nil {
			return err
		}
		for _, c := range cs.Channels {
			mp.Channels = append(mp.Channels, mutableChannel{Name: c.Name, Muted: contains(prefs.Muted, p.Name+"/"+c.Name),
				UrgentOnly: contains(prefs.UrgentOnly, p.Name+"/"+c.Name)})
		}
		// The first sidebarChannels, and the muted and urgent-only ones whether or not
		// among them: saving the form keeps only the choices it lists.
		for _, m := range append(slices.Clip(prefs.Muted), prefs.UrgentOnly...) {
			if c, ok := strings.CutPrefix(m, p.Name+"/"); ok && !slices.ContainsFunc(mp.Channels, func(x mutableChannel) bool { return x.Name == c }) {
				mp.Channels = append(mp.Channels, mutableChannel{Name: c, Muted: contains(prefs.Muted, m), UrgentOnly: contains(prefs.UrgentOnly, m)})
			}
		}
		mp.More = cs.Total - len(cs.Channels)
		d.MoreChannels = d.MoreChannels || mp.More > 0
		d.Projects = append(d.Projects, mp)
	}
	if d.Routes, err = s.routesOf(ctx, sess.account.ID, sess.user.ID, ps); err != nil {
		return err
	}
	d.MailOff = s.mailer == nil
	return s.render(w, r, "notifications", &view{Title: "Notifications", Section: "settings", Status: status, Error: msg, Data: d})
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func (s *Server) saveNotifications(w http.ResponseWriter, r *http.Request) error {
	p := &tidings.NotifyPrefs{TimeZone: strings.TrimSpace(r.PostFormValue("time_zone")), Muted: r.PostForm["mute"], UrgentOnly: r.PostForm["urgent_only"]}
	if more := strings.TrimSpace(r.PostFormValue("mute_more")); more != "" { // a channel not in the list
		p.Muted = append(p.Muted, more)
	}
	if r.PostFormValue("quiet") != "" {
		start, ok1 := parseClock(r.PostFormValue("quiet_start"))
		end, ok2 := parseClock(r.PostFormValue("quiet_end"))
		if !ok1 || !ok2 {
			return s.renderNotifications(w, r, http.StatusBadRequest, "Quiet hours need a start and an end time, like 22:00 and 07:00.", false)
		}
		p.QuietStart, p.QuietEnd = start, end
	}
	var pr tidings.Problems
	p.Check(&pr)
	if err := pr.Err(); err != nil {
		return s.renderNotifications(w, r, http.StatusBadRequest, tidings.ErrorMessage(err), false)
	}
	for _, m := range p.Muted {
		if !validScope(m) {
			return s.renderNotifications(w, r, http.StatusBadRequest, "Unknown project or channel to mute.", false)
		}
	}
	for _, m := range p.UrgentOnly {
		if !validScope(m) {
			return s.renderNotifications(w, r, http.StatusBadRequest, "Unknown project or channel for “urgent only”.", false)
		}
	}
	if err := s.store.SetNotifyPrefs(r.Context(), sessionFrom(r).user.ID, p); err != nil {
		return err
	}
	return redirect(w, r, "/settings/notifications?saved=1")
}

// validScope reports whether m names a project, or a project's channel as project/channel.
func validScope(m string) bool {
	project, channel, _ := strings.Cut(m, "/")
	return tidings.ValidName(project) && (channel == "" || tidings.ValidName(channel))
}
