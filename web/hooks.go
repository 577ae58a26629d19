package web

import (
	"net/http"
	"strings"
	"time"

	"github.com/tidings-dev/tidings"
)

// Settings → Hooks: inbound hooks (hook.go), secret URLs that turn a provider's
// webhooks (Stripe, GitHub, Alertmanager, Grafana, any JSON through a template) into
// events. Owners create and delete them; members see the list and the delivery logs.
// The path is shown once, like a token; a secret the server made is shown with it.

type hooksData struct {
	Hooks    []hookRow
	Projects []projectRow
	Created  *createdHook
	Form     hookForm
	Tried    []*tidings.NewEvent // the events the template makes of the sample body
	TryError string              // or why it makes none
	HasTried bool
	Notice   string
}

// hookForm is the create form as typed: a NewHook with its template's fields and the
// sample body the template is tried on.
type hookForm struct {
	tidings.NewHook
	T      tidings.HookTemplate
	Sample string
}

type hookRow struct {
	*tidings.Hook
	Attempts []*tidings.HookAttempt
	// URL and Secret are never known again after the hook was made: the setup hint
	// says "the hook's URL" and "SECRET" (and the hook's Secret is hidden by this one).
	URL, Secret string
}

// Last is the hook's latest delivery, nil when none came.
func (h hookRow) Last() *tidings.HookAttempt {
	if len(h.Attempts) == 0 {
		return nil
	}
	return h.Attempts[0]
}

// createdHook is the hook just made, with its path (and a secret the server made),
// shown this once.
type createdHook struct {
	*tidings.Hook
	URL    string
	Secret string // "" when the owner typed it (Stripe's comes from its dashboard)
}

func (s *Server) hooksPage(w http.ResponseWriter, r *http.Request) error {
	var created *createdHook
	notice := ""
	if fl := s.takeFlash(w, r); fl != nil && fl.Hook != "" {
		if h, err := s.store.FindHook(r.Context(), sessionFrom(r).account.ID, fl.Hook); err == nil {
			created = &createdHook{Hook: h, URL: s.baseURL(r) + "/hooks/" + fl.HookPath, Secret: fl.HookSecret}
		}
	} else if fl != nil {
		notice = fl.Notice
	}
	f := hookForm{NewHook: tidings.NewHook{Source: tidings.HookStripe, UserIDFrom: "customer"}}
	return s.renderHooks(w, r, http.StatusOK, "", created, f, notice, nil)
}

func (s *Server) renderHooks(w http.ResponseWriter, r *http.Request, status int, msg string, created *createdHook, f hookForm, notice string, tried *hooksData) error {
	ctx := r.Context()
	id := sessionFrom(r).account.ID
	f.Secret = "" // a typed secret is never sent back
	list, err := s.store.ListHooks(ctx, id)
	if err != nil {
		return err
	}
	d := hooksData{Created: created, Form: f, Notice: notice}
	if tried != nil {
		d.Tried, d.TryError, d.HasTried = tried.Tried, tried.TryError, true
	}
	for _, h := range list {
		attempts, err := s.store.ListHookAttempts(ctx, id, h.ID)
		if err != nil {
			return err
		}
		d.Hooks = append(d.Hooks, hookRow{Hook: h, Attempts: attempts})
	}
	if d.Projects, err = s.projectChoices(ctx, id); err != nil {
		return err
	}
	return s.render(w, r, "hooks", &view{Title: "Hooks", Section: "settings", Status: status, Error: msg, Flash: &flash{}, Data: d})
}

// readHookForm reads the create form.
func readHookForm(r *http.Request) hookForm {
	v := func(k string) string { return strings.TrimSpace(r.PostFormValue(k)) }
	f := hookForm{NewHook: tidings.NewHook{Project: v("project"), Channel: formChannel(r), Source: v("source"),
		Name: v("name"), Secret: v("secret")}, Sample: r.PostFormValue("sample")}
	if f.Source == tidings.HookStripe {
		f.UserIDFrom = "customer"
		if v("user_id_from") == "none" {
			f.UserIDFrom = "none"
		}
	}
	f.T = tidings.HookTemplate{Event: r.PostFormValue("t_event"), Description: r.PostFormValue("t_description"),
		Icon: r.PostFormValue("t_icon"), Tags: r.PostFormValue("t_tags"), UserID: r.PostFormValue("t_user_id"),
		Notify: r.PostFormValue("t_notify")}
	if f.Source == tidings.HookJSON {
		t := f.T
		f.Template = &t
	}
	return f
}

func (s *Server) createHook(w http.ResponseWriter, r *http.Request) error {
	f := readHookForm(r)
	if r.PostFormValue("try") != "" {
		return s.tryHook(w, r, f)
	}
	var p tidings.Problems
	f.Check(&p)
	if f.Source == tidings.HookStripe && f.Secret == "" {
		p.Add("secret", "required", "is required for Stripe: the endpoint's signing secret (whsec_…) from Stripe's dashboard")
	}
	err := p.Err()
	if err == nil && f.Template != nil {
		err = checkTemplate(f.Template)
	}
	if err != nil {
		return s.renderHooks(w, r, http.StatusBadRequest, hookMessage(err), nil, f, "", nil)
	}
	if f.UserIDFrom == "none" {
		f.UserIDFrom = "" // as tidings.Hook keeps it: no user
	}
	made := ""
	if f.Secret == "" && f.Source != tidings.HookStripe {
		made, _ = tidings.NewSecret()
		f.Secret = made
	}
	path, hash := tidings.NewHookPath()
	h := &tidings.Hook{ID: tidings.HookID(hash), PathHash: hash, AccountID: sessionFrom(r).account.ID,
		Project: f.Project, Channel: f.Channel, Source: f.Source, Name: f.Name, Secret: f.Secret,
		UserIDFrom: f.UserIDFrom, Template: f.Template, CreatedAt: time.Now()}
	if err := s.store.CreateHook(r.Context(), h); err != nil {
		switch tidings.ErrorCode(err) {
		case tidings.EProjectNotFound, tidings.EChannelNotFound, tidings.ELimitReached:
			return s.renderHooks(w, r, http.StatusBadRequest, tidings.ErrorMessage(err), nil, f, "", nil)
		}
		return err
	}
	// Shown once by the page the browser is sent to: a reload does not make another.
	if err := s.setFlash(w, r, flash{Hook: h.ID, HookPath: path, HookSecret: made}); err != nil {
		return err
	}
	return redirect(w, r, "/settings/hooks#hook-"+h.ID)
}

// tryHook runs the form's template on its sample body and shows the events it makes,
// saving nothing.
func (s *Server) tryHook(w http.ResponseWriter, r *http.Request, f hookForm) error {
	res := &hooksData{}
	t := f.T
	switch {
	case strings.TrimSpace(f.Sample) == "":
		res.TryError = "Paste a sample body first: a delivery your service sends, as JSON."
	case len(f.Sample) > tidings.MaxHookBody:
		res.TryError = "The sample body is larger than a delivery may be (1 MiB)."
	default:
		evs, err := tryTemplate(&t, []byte(f.Sample))
		if err != nil {
			res.TryError = tryMessage(err)
		}
		for _, e := range evs {
			e.Project, e.Channel = f.Project, f.Channel
		}
		res.Tried = evs
	}
	f.Source = tidings.HookJSON
	return s.renderHooks(w, r, http.StatusOK, "", nil, f, "", res)
}

// hookMessage says a refused hook's problems with the form's names for its fields.
func hookMessage(err error) string {
	return strings.NewReplacer("secret:", "Secret:", "template.event:", "Event template:",
		"template.description:", "Description template:", "template.icon:", "Icon template:",
		"template.tags:", "Tags template:", "template.user_id:", "User id template:",
		"template.notify:", "Notify template:", "template:", "Template:").Replace(tidings.ErrorMessage(err))
}

func (s *Server) deleteHook(w http.ResponseWriter, r *http.Request) error {
	if err := s.store.DeleteHook(r.Context(), sessionFrom(r).account.ID, r.PathValue("id")); err != nil {
		return err
	}
	return s.notice(w, r, "/settings/hooks", "Hook deleted: its URL answers 404 from now on.")
}
