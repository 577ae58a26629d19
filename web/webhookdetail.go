package web

import (
	"net/http"
)

// webhookData is a webhook's own page: what it sends where, "Send a test", its
// delivery log folded by event, and its deletion in a danger zone.
type webhookData struct {
	Hook   webhookRow
	Secret string // its signing secret, shown once after it was made
	Made   bool   // it was just made (the "created" card)
	Log    []*deliveryGroup
}

func (s *Server) webhookPage(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	account := sessionFrom(r).account.ID
	h, err := s.store.FindWebhook(ctx, account, r.PathValue("id"))
	if err != nil {
		return err
	}
	d := webhookData{Hook: webhookRow{Webhook: h, Host: hostOf(h.URL)}}
	fl := s.takeFlash(w, r)
	if fl != nil && fl.Webhook == h.ID {
		d.Made, d.Secret = true, fl.Secret
	}
	if d.Log, err = s.deliveryLog(ctx, account, h.ID); err != nil {
		return err
	}
	if fl == nil {
		fl = &flash{} // taken here: the layout does not take it again
	}
	return s.render(w, r, "webhook", &view{Title: d.Hook.Label() + " · Webhooks", Tab: "webhooks", Section: "settings", Flash: fl, Data: d})
}
