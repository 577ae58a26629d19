package main

import (
	"github.com/tidings-dev/tidings/internal/testbackend"

	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"encoding/pem"
	"io"
	"log/slog"
	"math/big"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// selfSigned writes a certificate for 127.0.0.1 and its key into dir.
func selfSigned(t *testing.T, dir string) (certFile, keyFile string, pool *x509.CertPool) {
	t.Helper()
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "tidings test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kb, _ := x509.MarshalECPrivateKey(key)
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600)
	os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb}), 0o600)
	cert, _ := x509.ParseCertificate(der)
	pool = x509.NewCertPool()
	pool.AddCert(cert)
	return certFile, keyFile, pool
}

func TestServesHTTPSWithHSTS(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	certFile, keyFile, pool := selfSigned(t, dir)
	m := startServer(t, filepath.Join(dir, "data"), func(c *Config) { c.TLSCert, c.TLSKey = certFile, keyFile })
	if !strings.HasPrefix(m.URL(), "https://") {
		t.Fatalf("URL = %s", m.URL())
	}
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}, ForceAttemptHTTP2: true}}
	res, err := client.Get(m.URL() + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != 200 || res.ProtoMajor != 2 || !strings.Contains(res.Header.Get("Strict-Transport-Security"), "max-age=") {
		t.Fatalf("HTTPS: %d %s HSTS %q", res.StatusCode, res.Proto, res.Header.Get("Strict-Transport-Security"))
	}
}

// TestAccessLogNeverShowsTheToken: one line per request with route, status, request id
// and account, and never the secret: not a token's, an invitation's or a hook's path.
func TestAccessLogNeverShowsTheToken(t *testing.T) {
	t.Parallel()
	data := testbackend.Location(t)
	token := setupAccount(t, data)
	code, hookOut, errs := runCLI(t, data, "", "hook", "create", "--project", "my-saas", "--channel", "payments", "--source", "github")
	if code != 0 {
		t.Fatal(errs)
	}
	hookPath, hookSecret, _ := strings.Cut(strings.TrimSpace(hookOut), "\n")
	var buf bytes.Buffer
	cfg := DefaultConfig()
	cfg.Addr = "127.0.0.1:0"
	if testbackend.IsURL(data) {
		cfg.DatabaseURL = data
	} else {
		cfg.Data = data
	}
	logw := &syncWriter{w: &buf}
	m := &Main{Config: cfg, Logger: slog.New(slog.NewJSONHandler(logw, nil))}
	if err := m.Run(t.Context()); err != nil {
		t.Fatal(err)
	}
	post(t, m.URL()+"/v1/log", token, `{"project":"my-saas","channel":"payments","event":"x"}`)
	post(t, m.URL()+"/v1/log", token, `{"project":"my-saas"}`)
	// An invitation's secret is in its path: the log names the route instead.
	inviteSecret := "Invite-Secret-0123456789abcdefghijklmnopqrstuv"
	// An unmatched path can hold one too: a reset link with a slash added (the audit).
	resetSecret := "Reset-Secret-0123456789abcdefghijklmnopqrstuvw"
	// Anonymous 404s after the first of a second are counted, not logged one by one
	// (refusedlog.go): the reset link's comes first, so that its line shows the path
	// shortened.
	for _, path := range []string{"/invite/" + inviteSecret, "/reset/" + resetSecret + "/", "/nothing/" + strings.Repeat("x", 5000), hookPath} {
		if res, err := http.Get(m.URL() + path); err == nil {
			res.Body.Close()
		}
	}
	// The refusals above may fall in different periods on a slow machine: repeat one
	// kind back to back until a period has counted one (its line comes at its end).
	for deadline := time.Now().Add(2 * time.Minute); !logw.contains(`"msg":"refused requests"`) && time.Now().Before(deadline); {
		for range 2 {
			if res, err := http.Get(m.URL() + "/nothing/again"); err == nil {
				res.Body.Close()
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	// A hook's path is its credential: a delivery (200), a bad signature (401), another
	// hook's path (404) are logged by route.
	star := []byte(`{"action":"created","starred_at":"2019-05-15T15:20:40Z","repository":{"full_name":"acme/app"},"sender":{"login":"ada"}}`)
	for _, c := range []struct {
		path, secret string
		want         int
	}{{hookPath, hookSecret, 200}, {hookPath, "wrong", 401}, {"/hooks/hk_" + strings.Repeat("Z", 43), hookSecret, 404}} {
		mac := hmac.New(sha256.New, []byte(c.secret))
		mac.Write(star)
		req, _ := http.NewRequest("POST", m.URL()+c.path, bytes.NewReader(star))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("X-GitHub-Event", "star")
		req.Header.Set("X-GitHub-Delivery", "72d3162e-cc78-11e3-81ab-4c9367dc0958")
		req.Header.Set("X-Hub-Signature-256", "sha256="+hex.EncodeToString(mac.Sum(nil)))
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != c.want {
			t.Fatalf("POST %s: %d, want %d", c.path, res.StatusCode, c.want)
		}
	}
	m.Close()
	log := buf.String()
	secret := token[strings.LastIndex(token, "_")+1:]
	if strings.Contains(log, secret) || strings.Contains(log, token) {
		t.Fatal("the access log contains the token")
	}
	if strings.Contains(log, inviteSecret) || strings.Contains(log, resetSecret) {
		t.Fatalf("the access log contains an invitation secret:\n%s", log)
	}
	if strings.Contains(log, strings.TrimPrefix(hookPath, "/hooks/")) || strings.Contains(log, strings.Repeat("Z", 43)) {
		t.Fatalf("the access log contains a hook's path:\n%s", log)
	}
	if strings.Contains(log, strings.Repeat("x", 200)) {
		t.Fatal("an unmatched path of 5,000 characters went into the log whole")
	}
	for _, want := range []string{`"route":"POST /v1/log"`, `"route":"GET /invite/{secret}"`, `"route":"POST /hooks/{id}"`, `"route":"unmatched"`, `"path":"/reset/…"`, `"msg":"refused requests"`, `"status":200`, `"status":400`, `"account":1`, `"request_id":`, `"duration_ms":`} {
		if !strings.Contains(log, want) {
			t.Fatalf("access log lacks %s:\n%s", want, log)
		}
	}
}

type syncWriter struct {
	mu sync.Mutex
	w  io.Writer
}

// contains tells whether what was written so far holds sub.
func (s *syncWriter) contains(sub string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	b, ok := s.w.(*bytes.Buffer)
	return ok && strings.Contains(b.String(), sub)
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}

// TestHTTPSPublicURL: behind a proxy that ends TLS, an https:// public URL is enough:
// every answer carries HSTS and the session cookie is Secure (the audit: neither was).
func TestHTTPSPublicURL(t *testing.T) {
	t.Parallel()
	data := testbackend.Location(t)
	m := startServer(t, data, func(c *Config) { c.PublicURL = "https://tidings.example.com" })
	if code, _, errs := runCLI(t, data, "", "account", "create", "acme"); code != 0 {
		t.Fatal(errs)
	}
	if code, _, errs := runCLI(t, data, "a long password\n", "user", "create", "ada@example.com", "--role", "owner"); code != 0 {
		t.Fatal(errs)
	}
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err := noRedirect.PostForm(m.URL()+"/login", url.Values{"email": {"ada@example.com"}, "password": {"a long password"}})
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	cookie := res.Header.Get("Set-Cookie")
	if res.StatusCode != http.StatusSeeOther || !strings.Contains(cookie, "Secure") || !strings.Contains(res.Header.Get("Strict-Transport-Security"), "max-age=") {
		t.Fatalf("sign-in behind an https public URL: %d, cookie %q, HSTS %q", res.StatusCode, cookie, res.Header.Get("Strict-Transport-Security"))
	}
}
