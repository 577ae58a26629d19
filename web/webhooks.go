package web

import (
	"context"
	"net/http"
	"net/url"
	"strings"

	"github.com/tidings-dev/tidings"
	"github.com/tidings-dev/tidings/internal/netguard"
)

type webhooksData struct {
	Webhooks []webhookRow
	Projects []projectRow
	Form     tidings.NewWebhook
	Open     bool // the "Add a webhook" form is shown open: none yet, or it was refused
}

type webhookRow struct {
	*tidings.Webhook
	Host string
	Last *deliveryGroup // the latest delivery, nil before the first
}

// Shown is the webhook's URL as the list shows it: without its secrets
// (Webhook.DisplayURL).
func (h webhookRow) Shown() string { return h.DisplayURL() }

// attemptRow is one delivery attempt with the name of the event it carried.
type attemptRow struct {
	*tidings.WebhookAttempt
	EventName string // "" when the event is gone, or was a test message
	EventURL  string
	Test      bool // a test message ("Send a test")
}

func (s *Server) webhooksPage(w http.ResponseWriter, r *http.Request) error {
	return s.renderWebhooks(w, r, http.StatusOK, "", tidings.NewWebhook{Format: tidings.FormatStandard, Events: tidings.WebhookNotify})
}

// renderWebhooks shows the list: one row per webhook with its latest delivery; the
// details and the log are on each webhook's page (webhookdetail.go).
func (s *Server) renderWebhooks(w http.ResponseWriter, r *http.Request, status int, msg string, f tidings.NewWebhook) error {
	ctx := r.Context()
	id := sessionFrom(r).account.ID
	f.Secret = "" // a typed app token is never sent back
	hooks, err := s.store.ListWebhooks(ctx, id)
	if err != nil {
		return err
	}
	d := webhooksData{Form: f, Open: msg != "" || len(hooks) == 0}
	for _, h := range hooks {
		row := webhookRow{Webhook: h, Host: hostOf(h.URL)}
		log, err := s.deliveryLog(ctx, id, h.ID)
		if err != nil {
			return err
		}
		if len(log) > 0 {
			row.Last = log[0]
		}
		d.Webhooks = append(d.Webhooks, row)
	}
	if d.Projects, err = s.projectChoices(ctx, id); err != nil {
		return err
	}
	if d.Form.Project == "" {
		d.Form.Project = s.currentProject(r, d.Projects)
	}
	return s.render(w, r, "webhooks", &view{Title: "Webhooks", Tab: "webhooks", Section: "settings", Status: status, Error: msg, Data: d})
}

func (s *Server) createWebhook(w http.ResponseWriter, r *http.Request) error {
	f := tidings.NewWebhook{Project: r.PostFormValue("project"), Channel: formChannel(r),
		URL: strings.TrimSpace(r.PostFormValue("url")), Format: r.PostFormValue("format"), Events: r.PostFormValue("events"),
		Name: strings.TrimSpace(r.PostFormValue("name")), ChatID: strings.TrimSpace(r.PostFormValue("chat_id")),
		UserKey: strings.TrimSpace(r.PostFormValue("user_key")), Secret: strings.TrimSpace(r.PostFormValue("secret"))}
	if f.Format != tidings.FormatTelegram && f.Format != "" {
		f.ChatID = "" // typed for another format before this one was picked: not this one's
	}
	if f.Format != tidings.FormatPushover {
		f.UserKey, f.Secret = "", ""
	}
	var p tidings.Problems
	f.Check(&p)
	if err := p.Err(); err != nil {
		f.Secret = "" // never sent back to the browser
		return s.renderWebhooks(w, r, http.StatusBadRequest, webhookMessage(err), f)
	}
	if !s.allowPrivate && netguard.PrivateURL(f.URL) {
		return s.renderWebhooks(w, r, http.StatusBadRequest, "url: "+hostOf(f.URL)+
			" is a loopback or private address, which webhooks may not reach (the server would need --allow-private-targets)", f)
	}
	hook := &tidings.Webhook{ID: tidings.NewID("wh_"), Project: f.Project, Channel: f.Channel, URL: f.URL,
		Format: f.Format, Events: f.Events, Name: f.Name, ChatID: f.ChatID, UserKey: f.UserKey, Secret: f.Secret}
	if hook.Format == tidings.FormatStandard {
		hook.Secret = tidings.NewWebhookSecret()
	}
	if err := s.store.CreateWebhook(r.Context(), sessionFrom(r).account.ID, hook); err != nil {
		switch tidings.ErrorCode(err) {
		case tidings.EProjectNotFound, tidings.EChannelNotFound:
			return s.renderWebhooks(w, r, http.StatusBadRequest, tidings.ErrorMessage(err), f)
		}
		return err
	}
	// Shown once by the page the browser is sent to: a reload does not make another.
	// A chat service's token was typed by the owner: it is not shown back.
	shown := ""
	if hook.Format == tidings.FormatStandard {
		shown = hook.Secret
	}
	if err := s.setFlash(w, r, flash{Webhook: hook.ID, Secret: shown}); err != nil {
		return err
	}
	// Its own page: the secret, then "Send a test" and the log.
	return redirect(w, r, "/settings/webhooks/"+hook.ID+"#webhook-created")
}

// webhookMessage says a refused webhook's problems with the form's names for its fields.
func webhookMessage(err error) string {
	return strings.NewReplacer("chat_id:", "Chat id:", "user_key:", "User key:", "secret:", "App token:").Replace(tidings.ErrorMessage(err))
}

// Label names the webhook in titles and confirmations: its name, or its host.
func (h webhookRow) Label() string {
	if h.Name != "" {
		return h.Name
	}
	return h.Host
}

// hostOf is the host of a URL: a webhook's name in lists when it has none.
func hostOf(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return raw
	}
	return u.Hostname()
}

func (s *Server) deleteWebhook(w http.ResponseWriter, r *http.Request) error {
	id := sessionFrom(r).account.ID
	h, err := s.store.FindWebhook(r.Context(), id, r.PathValue("id"))
	if err != nil {
		return err
	}
	hook := webhookRow{Webhook: h, Host: hostOf(h.URL)}
	if err := s.store.DeleteWebhook(r.Context(), id, h.ID); err != nil {
		return err
	}
	return s.notice(w, r, "/settings/webhooks", "Webhook “"+hook.Label()+"” deleted, with its pending deliveries.")
}

// testWebhook queues a test message; the page shows its outcome among the deliveries.
func (s *Server) testWebhook(w http.ResponseWriter, r *http.Request) error {
	id := sessionFrom(r).account.ID
	hook, err := s.store.FindWebhook(r.Context(), id, r.PathValue("id"))
	if err != nil {
		return err
	}
	if err := s.store.EnqueueDelivery(r.Context(), &tidings.Delivery{Kind: tidings.DeliverTest, AccountID: id,
		EventID: "test", Target: hook.ID, MessageID: tidings.NewID("msg_")}); err != nil {
		return err
	}
	return s.notice(w, r, "/settings/webhooks/"+hook.ID+"#deliveries", "A test message is on its way: its result appears in the deliveries below in a moment.")
}

// attemptRow names the event an attempt carried, reading each event once per page.
func (s *Server) attemptRow(ctx context.Context, account int64, a *tidings.WebhookAttempt, names map[string]*tidings.Event) (attemptRow, error) {
	if a.EventID == "test" {
		return attemptRow{WebhookAttempt: a, Test: true}, nil
	}
	ev, seen := names[a.EventID]
	if !seen {
		var err error
		ev, err = s.store.FindEventByID(ctx, account, a.EventID)
		if tidings.ErrorCode(err) == tidings.ENotFound {
			ev, err = nil, nil // deleted, or a test message
		}
		if err != nil {
			return attemptRow{}, err
		}
		names[a.EventID] = ev
	}
	row := attemptRow{WebhookAttempt: a}
	if ev != nil {
		row.EventName, row.EventURL = ev.Event, eventURL(ev)
	}
	return row, nil
}
