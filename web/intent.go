package web

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"net/url"
	"path"
	"strings"
	"time"

	"github.com/tidings-dev/tidings"
)

// What a card shows of an event's intent (issue 38): its priority's mark, where its
// title goes, its buttons, its acknowledgement, and the earlier versions of its key.

// intentView is the intent part of an event's card.
type intentView struct {
	// Prio is "urgent" or "high" for the card's mark (in words), "" otherwise.
	Prio string
	// Link is the event's url: the title opens it; the time still opens the event page.
	Link, LinkHost string
	// Open is where the title goes: Link, or the event page.
	Open       string
	URLActions []tidings.Action
	IDActions  []actionButton
	// AckURL is the form that acknowledges it, "" unless it asks for acknowledgement.
	AckURL string
	// Back is where a button's form returns: the page the card is on.
	Back string
	// ThreadID names the card's key thread in a feed that folds versions ("" otherwise):
	// the live feed folds a new version's card into the one it replaces.
	ThreadID string
	// Versions is how many versions its key has (the card is the latest); Earlier are
	// some of the others, newest first.
	Versions int
	Earlier  []versionView
	More     int // earlier versions not listed
}

type actionButton struct {
	Label, Post string
}

// versionView is an earlier version of a key, as a card lists it.
type versionView struct {
	ID, Title, URL, Prio string
	Time                 time.Time
}

// maxFolded is how many earlier versions a card lists.
const maxFolded = 10

// intentOf fills what a card shows of ev's intent; back is the page the card is on
// (its buttons return there), fold says the feed folds versions of a key.
func intentOf(ev *tidings.Event, back string, fold bool) intentView {
	v := intentView{Prio: prioMark(ev.Priority), Link: ev.URL, Open: eventURL(ev), Back: back}
	if ev.URL != "" {
		v.Open, v.LinkHost = ev.URL, hostOf(ev.URL)
	}
	for _, a := range ev.Actions {
		switch {
		case a.URL != "":
			v.URLActions = append(v.URLActions, a)
		case a.ID != "":
			v.IDActions = append(v.IDActions, actionButton{Label: a.Label, Post: eventURL(ev) + "/actions/" + url.PathEscape(a.ID)})
		}
	}
	if ev.AsksForAck() {
		v.AckURL = eventURL(ev) + "/ack"
	}
	if t, ok := ev.Thread(); ok && fold {
		v.ThreadID = threadID(t)
	}
	return v
}

// prioMark is the word of a priority worth marking: "urgent", "high", or "".
func prioMark(p tidings.Priority) string {
	if p >= tidings.PriorityHigh {
		return p.String()
	}
	return ""
}

// threadID names a key thread of a project in the page (its channel and key hashed):
// an attribute the live feed matches without quoting the key.
func threadID(t tidings.Thread) string {
	h := sha256.Sum256([]byte(t.Channel + "\x00" + t.Key))
	return "t" + hex.EncodeToString(h[:8])
}

// backTo is where a card's form returns: the page it names when that is a page of the
// project on this server (safeNext's rules, then the project's path), else the event's
// page. A feed returns at the card.
func backTo(raw string, ev *tidings.Event) string {
	prefix := "/p/" + ev.Project
	u, err := url.Parse(safeNext(raw))
	if err != nil || raw == "" || safeNext(raw) == "" || u.Scheme != "" || u.Host != "" || u.Opaque != "" ||
		path.Clean(u.Path) != u.Path || (u.Path != prefix && !strings.HasPrefix(u.Path, prefix+"/")) || strings.Contains(raw, "\\") {
		return eventURL(ev)
	}
	u.Fragment = ""
	if u.Path != eventURL(ev) {
		u.Fragment = "ev-" + ev.ID
	}
	return u.String()
}

// threadFolder folds the versions of a key in one feed page: it asks the store once
// per thread the page shows.
type threadFolder struct {
	s       *Server
	account int64
	project string
	seen    map[tidings.Thread]bool
}

// fold fills the versions of a keyed card and reports whether the card is shown: an
// older version whose latest is elsewhere (on this page or a newer one) is not.
func (f *threadFolder) fold(ctx context.Context, v *eventView) (bool, error) {
	t, ok := v.Event.Thread()
	if !ok {
		return true, nil
	}
	if f.seen[t] {
		return false, nil
	}
	f.seen[t] = true
	versions, total, err := f.s.store.Versions(ctx, f.account, f.project, t, maxFolded+1)
	if err != nil {
		return false, err
	}
	if len(versions) > 0 && versions[0].ID != v.ID {
		return false, nil
	}
	v.Versions = max(total, 1)
	for _, o := range versions[min(1, len(versions)):] {
		if len(v.Earlier) == maxFolded {
			break
		}
		v.Earlier = append(v.Earlier, versionView{ID: o.ID, Title: o.Event, URL: eventURL(o), Prio: prioMark(o.Priority), Time: o.Timestamp})
	}
	v.More = max(0, v.Versions-1-len(v.Earlier))
	return true, nil
}

// eventIntent fills what an event's page shows beside its card: who pressed its
// buttons, and the other versions of its key.
func (s *Server) eventIntent(r *http.Request, d *eventPageData) error {
	account := sessionFrom(r).account.ID
	var err error
	if len(d.IDActions) > 0 {
		if d.Presses, err = s.store.ListPresses(r.Context(), account, d.ID); err != nil {
			return err
		}
	}
	t, ok := d.Event.Thread()
	if !ok {
		return nil
	}
	versions, total, err := s.store.Versions(r.Context(), account, d.Project, t, maxFolded+1)
	if err != nil {
		return err
	}
	d.VersionCount = total
	d.Latest = len(versions) > 0 && versions[0].ID == d.ID
	for _, o := range versions {
		if o.ID != d.ID && len(d.Others) < maxFolded {
			d.Others = append(d.Others, versionView{ID: o.ID, Title: o.Event, URL: eventURL(o), Prio: prioMark(o.Priority), Time: o.Timestamp})
		}
	}
	return nil
}
