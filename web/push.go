package web

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"unicode/utf8"

	"github.com/tidings-dev/tidings"
)

// The Web Push endpoints of the contract: the VAPID key, and a signed-in user's own
// subscriptions (devices). They answer JSON; errors are problem details.

func writeJSON(w http.ResponseWriter, status int, v any) error {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	return json.NewEncoder(w).Encode(v)
}

// writeProblem answers the dashboard's JSON calls (push subscriptions) with problem
// details: the status and title of the code are the domain's, as the API's are.
func writeProblem(w http.ResponseWriter, code, detail string) error {
	status := tidings.HTTPStatus(code)
	w.Header().Set("Content-Type", "application/problem+json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	return json.NewEncoder(w).Encode(map[string]any{"status": status, "title": tidings.ErrorTitle(code), "code": code, "detail": detail, "message": detail})
}

func (s *Server) vapidKey(w http.ResponseWriter, r *http.Request) error {
	if s.vapidPublic == "" {
		return writeProblem(w, tidings.EUnavailable, "push notifications are not configured on this server")
	}
	return writeJSON(w, http.StatusOK, map[string]string{"key": s.vapidPublic})
}

// subscriptionBody is what PushSubscription.toJSON() gives, plus a name.
type subscriptionBody struct {
	Endpoint       string          `json:"endpoint"`
	ExpirationTime json.RawMessage `json:"expirationTime"`
	Keys           struct {
		P256dh string `json:"p256dh"`
		Auth   string `json:"auth"`
	} `json:"keys"`
	Name string `json:"name"`
}

const maxDeviceName = 64

func (s *Server) subscribe(w http.ResponseWriter, r *http.Request) error {
	sess := sessionFrom(r)
	var b subscriptionBody
	dec := json.NewDecoder(r.Body)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&b); err != nil || dec.Decode(&struct{}{}) != io.EOF {
		return writeProblem(w, tidings.EInvalidJSON, "send the subscription as JSON: what PushSubscription.toJSON() gives, with an optional name")
	}
	b.Name = strings.TrimSpace(b.Name)
	var problems []string
	if err := tidings.CheckPushEndpoint(b.Endpoint, s.allowPrivate); err != nil {
		problems = append(problems, err.Error())
	}
	if err := tidings.CheckPushKeys(b.Keys.P256dh, b.Keys.Auth); err != nil {
		problems = append(problems, err.Error())
	}
	if utf8.RuneCountInString(b.Name) > maxDeviceName || strings.ContainsFunc(b.Name, isControl) {
		problems = append(problems, "name: at most 64 characters, no control characters")
	}
	if len(problems) > 0 {
		return writeProblem(w, tidings.EValidation, strings.Join(problems, "; "))
	}
	sub := &tidings.PushSubscription{AccountID: sess.account.ID, UserID: sess.user.ID, Endpoint: b.Endpoint,
		P256dh: b.Keys.P256dh, Auth: b.Keys.Auth, Name: b.Name, Browser: browserOf(r.UserAgent())}
	created, err := s.store.SavePushSubscription(r.Context(), sub)
	if tidings.ErrorCode(err) == tidings.EConflict {
		return writeProblem(w, tidings.EConflict, tidings.ErrorMessage(err))
	}
	if err != nil {
		return err
	}
	status := http.StatusOK
	if created {
		status = http.StatusCreated
	}
	return writeJSON(w, status, map[string]string{"id": sub.ID})
}

type subscriptionJSON struct {
	ID            string  `json:"id"`
	Name          string  `json:"name"`
	Browser       string  `json:"browser"`
	EndpointHost  string  `json:"endpoint_host"`
	CreatedAt     string  `json:"created_at"`
	LastSuccessAt *string `json:"last_success_at"`
}

func (s *Server) listSubscriptions(w http.ResponseWriter, r *http.Request) error {
	subs, err := s.store.ListPushSubscriptions(r.Context(), sessionFrom(r).user.ID)
	if err != nil {
		return err
	}
	out := []subscriptionJSON{}
	for _, sub := range subs {
		j := subscriptionJSON{ID: sub.ID, Name: sub.Name, Browser: sub.Browser, EndpointHost: sub.EndpointHost(),
			CreatedAt: sub.CreatedAt.UTC().Format("2006-01-02T15:04:05.000Z07:00")}
		if !sub.LastSuccessAt.IsZero() {
			t := sub.LastSuccessAt.UTC().Format("2006-01-02T15:04:05.000Z07:00")
			j.LastSuccessAt = &t
		}
		out = append(out, j)
	}
	return writeJSON(w, http.StatusOK, map[string]any{"subscriptions": out})
}

func (s *Server) unsubscribe(w http.ResponseWriter, r *http.Request) error {
	err := s.store.DeletePushSubscription(r.Context(), sessionFrom(r).user.ID, r.PathValue("id"))
	if tidings.ErrorCode(err) == tidings.ENotFound {
		return writeProblem(w, tidings.ENotFound, "no such device of yours")
	}
	if err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// queueTest sends a test notification to one of the user's devices.
func (s *Server) queueTest(r *http.Request) error {
	sess := sessionFrom(r)
	sub, err := s.store.FindPushSubscription(r.Context(), r.PathValue("id"))
	if err != nil || sub.UserID != sess.user.ID {
		return tidings.Errorf(tidings.ENotFound, "There is no such device among yours.")
	}
	return s.store.EnqueueDelivery(r.Context(), &tidings.Delivery{Kind: tidings.DeliverPushTest, AccountID: sess.account.ID,
		Target: sub.ID, MessageID: tidings.NewID("push_")})
}

func (s *Server) testSubscription(w http.ResponseWriter, r *http.Request) error {
	err := s.queueTest(r)
	if tidings.ErrorCode(err) == tidings.ENotFound {
		return writeProblem(w, tidings.ENotFound, tidings.ErrorMessage(err))
	}
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusAccepted, map[string]string{"status": "queued"})
}

// browserOf names the browser and system of a User-Agent, for the devices list.
func browserOf(ua string) string {
	browser := "Browser"
	for _, b := range []struct{ token, name string }{{"Edg/", "Edge"}, {"OPR/", "Opera"}, {"Firefox/", "Firefox"},
		{"SamsungBrowser/", "Samsung Internet"}, {"Chrome/", "Chrome"}, {"Safari/", "Safari"}} {
		if strings.Contains(ua, b.token) {
			browser = b.name
			break
		}
	}
	for _, o := range []struct{ token, name string }{{"Android", "Android"}, {"iPhone", "iPhone"}, {"iPad", "iPad"},
		{"Mac OS X", "macOS"}, {"Windows", "Windows"}, {"CrOS", "ChromeOS"}, {"Linux", "Linux"}} {
		if strings.Contains(ua, o.token) {
			return browser + " on " + o.name
		}
	}
	return browser
}

func isControl(r rune) bool { return r < 0x20 || r >= 0x7f && r <= 0x9f }
