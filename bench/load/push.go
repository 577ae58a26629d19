package main

import (
	"crypto/ecdh"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"time"
)

// slowPushService stands in for the push services of many devices: it answers 201
// after delay, as a slow real one would, and counts what it was sent.
type slowPushService struct {
	url      string
	received atomic.Int64
	srv      *http.Server
}

func startSlowPushService(delay time.Duration) (*slowPushService, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	s := &slowPushService{url: "http://" + ln.Addr().String()}
	s.srv = &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		time.Sleep(delay)
		s.received.Add(1)
		w.WriteHeader(http.StatusCreated)
	})}
	go s.srv.Serve(ln)
	return s, nil
}

// subscribeDevices signs in users (load-1@example.com…, 20 devices each, the most a
// user may have) and subscribes n devices whose endpoints are on the slow service.
func subscribeDevices(base, password string, svc *slowPushService, n int) error {
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	var cookie *http.Cookie
	for i := 0; i < n; i++ {
		if i%20 == 0 {
			user := i/20 + 1
			form := url.Values{"email": {fmt.Sprintf("load-%d@example.com", user)}, "password": {password}}
			req, _ := http.NewRequest("POST", base+"/login", strings.NewReader(form.Encode()))
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			req.Header.Set("X-Forwarded-For", fmt.Sprintf("198.19.%d.%d", user/250, user%250+1))
			res, err := noRedirect.Do(req)
			if err != nil {
				return err
			}
			res.Body.Close()
			cookie = nil
			for _, c := range res.Cookies() {
				if c.Name == "tidings_session" {
					cookie = c
				}
			}
			if cookie == nil {
				return fmt.Errorf("sign-in of load-%d@example.com: %s (load.sh creates %d users)", user, res.Status, 60)
			}
		}
		key, _ := ecdh.P256().GenerateKey(rand.Reader)
		secret := make([]byte, 16)
		rand.Read(secret)
		body := fmt.Sprintf(`{"endpoint":"%s/push/%d","keys":{"p256dh":"%s","auth":"%s"},"name":"load device %d"}`, svc.url, i,
			base64.RawURLEncoding.EncodeToString(key.PublicKey().Bytes()), base64.RawURLEncoding.EncodeToString(secret), i)
		req, _ := http.NewRequest("POST", base+"/push/subscriptions", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.AddCookie(cookie)
		res, err := noRedirect.Do(req)
		if err != nil {
			return err
		}
		res.Body.Close()
		if res.StatusCode != http.StatusCreated {
			return fmt.Errorf("subscribing device %d: %s", i, res.Status)
		}
	}
	return nil
}
