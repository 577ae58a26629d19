package web

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"encoding/json"
	"net/http"
	"time"
)

// flash is what the page after a form shows once: a notice ("Channel #orders
// created"), or a secret the form made (a token, an invitation link). It crosses the
// redirect in the session (post/redirect/get: reloading shows the page, it does not
// post again), sealed with a key that only the session's cookie gives, so the store
// never holds a readable secret; it is gone once shown, and after flashLifetime.
type flash struct {
	Notice     string    `json:"n,omitempty"`
	Token      string    `json:"t,omitempty"`  // the secret of the token just made
	TokenID    string    `json:"ti,omitempty"` // and its ID
	Invite     string    `json:"i,omitempty"`  // the invitation link just made
	Role       string    `json:"r,omitempty"`  // and the role it grants
	MailTo     string    `json:"mt,omitempty"` // the address the invitation was to be mailed to
	MailErr    string    `json:"me,omitempty"` // and why it was not: the mail server's reply
	Reset      string    `json:"rl,omitempty"` // a password reset link just made
	ResetFor   string    `json:"rf,omitempty"` // and whose it is
	Webhook    string    `json:"w,omitempty"`  // the ID of the webhook just made
	Secret     string    `json:"ws,omitempty"` // and its signing secret
	Hook       string    `json:"h,omitempty"`  // the ID of the inbound hook just made
	HookPath   string    `json:"hp,omitempty"` // and its path's secret (hk_…)
	HookSecret string    `json:"hs,omitempty"` // and the signature secret the server made
	At         time.Time `json:"at"`
}

const (
	// flashHint is a cookie that says a flash waits, so that other pages do not ask
	// the store for one.
	flashHint     = "tidings_flash"
	flashLifetime = 2 * time.Minute
)

func flashAEAD(cookie string) cipher.AEAD {
	key := sha256.Sum256([]byte("tidings flash\x00" + cookie))
	block, _ := aes.NewCipher(key[:]) // a 32-byte key cannot fail
	aead, _ := cipher.NewGCM(block)
	return aead
}

// setFlash keeps f for the session's next page.
func (s *Server) setFlash(w http.ResponseWriter, r *http.Request, f flash) error {
	sess := sessionFrom(r)
	c, err := r.Cookie(cookieName)
	if sess == nil || err != nil {
		return nil // no session: nothing to carry it in
	}
	f.At = s.now()
	plain, err := json.Marshal(f)
	if err != nil {
		return err
	}
	aead := flashAEAD(c.Value)
	nonce := make([]byte, aead.NonceSize())
	rand.Read(nonce)
	if err := s.store.SetFlash(r.Context(), sess.hash, aead.Seal(nonce, nonce, plain, sess.hash)); err != nil {
		return err
	}
	http.SetCookie(w, &http.Cookie{Name: flashHint, Value: "1", Path: "/", MaxAge: int(flashLifetime.Seconds()),
		HttpOnly: true, Secure: s.isHTTPS(r), SameSite: http.SameSiteLaxMode})
	return nil
}

// takeFlash returns the session's flash, once; nil when there is none (or it is too
// old, or was sealed for another cookie).
func (s *Server) takeFlash(w http.ResponseWriter, r *http.Request) *flash {
	sess := sessionFrom(r)
	if _, err := r.Cookie(flashHint); err != nil || sess == nil {
		return nil
	}
	http.SetCookie(w, &http.Cookie{Name: flashHint, Value: "", Path: "/", MaxAge: -1, HttpOnly: true, Secure: s.isHTTPS(r), SameSite: http.SameSiteLaxMode})
	sealed, err := s.store.TakeFlash(r.Context(), sess.hash)
	c, cerr := r.Cookie(cookieName)
	if err != nil || cerr != nil || sealed == nil {
		return nil
	}
	aead := flashAEAD(c.Value)
	if len(sealed) < aead.NonceSize() {
		return nil
	}
	plain, err := aead.Open(nil, sealed[:aead.NonceSize()], sealed[aead.NonceSize():], sess.hash)
	if err != nil {
		return nil
	}
	var f flash
	if json.Unmarshal(plain, &f) != nil || s.now().Sub(f.At) > flashLifetime {
		return nil
	}
	return &f
}

// notice sends the browser to url with a message for that page ("Channel #orders
// created"): the success feedback of a form.
func (s *Server) notice(w http.ResponseWriter, r *http.Request, url, msg string) error {
	if err := s.setFlash(w, r, flash{Notice: msg}); err != nil {
		return err
	}
	return redirect(w, r, url)
}
