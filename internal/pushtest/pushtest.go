// Package pushtest is a local Web Push service for tests: it checks every request as a
// real push service would (VAPID JWT per RFC 8292: ES256 signature, audience, expiry,
// subject) and decrypts the aes128gcm body (RFC 8291) with the device's keys.
package pushtest

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/ecdh"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// Push is one message a device received, checked and decrypted.
type Push struct {
	Plaintext []byte
	Header    http.Header
	Size      int // bytes of the encrypted body
	At        time.Time
}

// Device is one subscribed browser: its keys, and what the service answers for it.
type Device struct {
	ID       string
	Endpoint string
	P256dh   string // base64url, as PushSubscription.toJSON() gives it
	Auth     string
	key      *ecdh.PrivateKey
	secret   []byte
	svc      *Service

	mu       sync.Mutex
	statuses []int // answers to give, then 201
	header   http.Header
	hang     chan struct{} // when set, requests wait for it to close
	got      chan Push
}

// Service is the push service.
type Service struct {
	*httptest.Server
	t        testing.TB
	mu       sync.Mutex
	devices  map[string]*Device
	VAPIDKey string // the server's public key: every JWT must verify with it
	Errors   chan error
}

// New starts a push service; it closes with the test.
func New(t testing.TB) *Service {
	s := &Service{t: t, devices: map[string]*Device{}, Errors: make(chan error, 100)}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.Close)
	return s
}

// Device subscribes a new browser.
func (s *Service) Device() *Device {
	key, _ := ecdh.P256().GenerateKey(rand.Reader)
	secret := make([]byte, 16)
	rand.Read(secret)
	idb := make([]byte, 8)
	rand.Read(idb)
	d := &Device{ID: fmt.Sprintf("%x", idb), key: key, secret: secret, svc: s, header: http.Header{}, got: make(chan Push, 100),
		P256dh: base64.RawURLEncoding.EncodeToString(key.PublicKey().Bytes()), Auth: base64.RawURLEncoding.EncodeToString(secret)}
	d.Endpoint = s.URL + "/push/" + d.ID
	s.mu.Lock()
	s.devices[d.ID] = d
	s.mu.Unlock()
	return d
}

// Answer makes the device's next requests get these statuses (with header), then 201.
func (d *Device) Answer(header http.Header, statuses ...int) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.statuses, d.header = statuses, header
}

// Hang makes requests to the device wait until release is closed.
func (d *Device) Hang(release chan struct{}) {
	d.mu.Lock()
	d.hang = release
	d.mu.Unlock()
}

// Next waits for the device's next accepted push.
func (d *Device) Next(t testing.TB, within time.Duration) Push {
	t.Helper()
	select {
	case p := <-d.got:
		return p
	case err := <-d.svc.Errors:
		t.Fatalf("push service: %v", err)
	case <-time.After(within):
		t.Fatalf("device %s got nothing within %v", d.ID, within)
	}
	return Push{}
}

// Quiet fails if the device gets a push within d.
func (d *Device) Quiet(t testing.TB, within time.Duration) {
	t.Helper()
	select {
	case p := <-d.got:
		t.Fatalf("device %s got %s", d.ID, p.Plaintext)
	case err := <-d.svc.Errors:
		t.Fatalf("push service: %v", err)
	case <-time.After(within):
	}
}

// Drain returns what the device got until nothing more came for quiet.
func (d *Device) Drain(quiet time.Duration) []Push {
	var out []Push
	for {
		select {
		case p := <-d.got:
			out = append(out, p)
		case <-time.After(quiet):
			return out
		}
	}
}

func (s *Service) serve(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	d := s.devices[strings.TrimPrefix(r.URL.Path, "/push/")]
	s.mu.Unlock()
	if d == nil {
		http.Error(w, "no such subscription", http.StatusNotFound)
		return
	}
	d.mu.Lock()
	hang := d.hang
	status := http.StatusCreated
	if len(d.statuses) > 0 {
		status, d.statuses = d.statuses[0], d.statuses[1:]
	}
	header := d.header
	d.mu.Unlock()
	if hang != nil {
		<-hang
	}
	body := make([]byte, 0, 4096)
	buf := make([]byte, 4096)
	for {
		n, err := r.Body.Read(buf)
		body = append(body, buf[:n]...)
		if err != nil {
			break
		}
	}
	if err := s.check(r, d.Endpoint); err != nil {
		s.Errors <- err
		http.Error(w, err.Error(), http.StatusUnauthorized)
		return
	}
	plain, err := Decrypt(body, d.key, d.secret)
	if err != nil {
		s.Errors <- fmt.Errorf("decrypt: %w", err)
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	for k, v := range header {
		w.Header()[k] = v
	}
	w.WriteHeader(status)
	if status == http.StatusCreated {
		d.got <- Push{Plaintext: plain, Header: r.Header.Clone(), Size: len(body), At: time.Now()}
	}
}

// check verifies what a push service requires of a request (RFC 8030, 8291, 8292).
func (s *Service) check(r *http.Request, endpoint string) error {
	if r.Method != http.MethodPost || r.Header.Get("Content-Encoding") != "aes128gcm" {
		return fmt.Errorf("want POST with Content-Encoding aes128gcm, got %s %q", r.Method, r.Header.Get("Content-Encoding"))
	}
	if ttl, err := strconv.Atoi(r.Header.Get("TTL")); err != nil || ttl <= 0 {
		return fmt.Errorf("TTL %q", r.Header.Get("TTL"))
	}
	auth := r.Header.Get("Authorization")
	if !strings.HasPrefix(auth, "vapid ") {
		return fmt.Errorf("authorization %q is not vapid", auth)
	}
	var jwt, k string
	for _, part := range strings.Split(strings.TrimPrefix(auth, "vapid "), ",") {
		kv := strings.SplitN(strings.TrimSpace(part), "=", 2)
		if len(kv) == 2 && kv[0] == "t" {
			jwt = kv[1]
		}
		if len(kv) == 2 && kv[0] == "k" {
			k = kv[1]
		}
	}
	if s.VAPIDKey != "" && k != s.VAPIDKey {
		return fmt.Errorf("k=%q is not the server's VAPID key", k)
	}
	return VerifyJWT(jwt, k, endpoint, time.Now())
}

// VerifyJWT checks a VAPID token: ES256 (raw r‖s) with the key k, aud the endpoint's
// origin, exp in the next 24 hours, sub a mailto: or https: contact.
func VerifyJWT(token, k, endpoint string, now time.Time) error {
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		return errors.New("jwt: not three parts")
	}
	var head struct{ Alg, Typ string }
	var claims struct {
		Aud string `json:"aud"`
		Exp int64  `json:"exp"`
		Sub string `json:"sub"`
	}
	hb, err1 := base64.RawURLEncoding.DecodeString(parts[0])
	cb, err2 := base64.RawURLEncoding.DecodeString(parts[1])
	sig, err3 := base64.RawURLEncoding.DecodeString(parts[2])
	if err := errors.Join(err1, err2, err3); err != nil {
		return fmt.Errorf("jwt: %w", err)
	}
	if json.Unmarshal(hb, &head) != nil || head.Alg != "ES256" {
		return fmt.Errorf("jwt: header %s", hb)
	}
	if json.Unmarshal(cb, &claims) != nil {
		return fmt.Errorf("jwt: claims %s", cb)
	}
	pub, err := base64.RawURLEncoding.DecodeString(k)
	if err != nil {
		return fmt.Errorf("k: %w", err)
	}
	key, err := ecdsa.ParseUncompressedPublicKey(ecdhCurve(), pub)
	if err != nil {
		return fmt.Errorf("k: %w", err)
	}
	if len(sig) != 64 {
		return fmt.Errorf("jwt: signature of %d bytes, want 64 (r‖s)", len(sig))
	}
	digest := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
	if !ecdsa.Verify(key, digest[:], bigInt(sig[:32]), bigInt(sig[32:])) {
		return errors.New("jwt: bad signature")
	}
	origin := endpoint[:strings.Index(endpoint[len("https://"):], "/")+len("https://")]
	if strings.HasPrefix(endpoint, "http://") {
		origin = endpoint[:strings.Index(endpoint[len("http://"):], "/")+len("http://")]
	}
	if claims.Aud != origin {
		return fmt.Errorf("jwt: aud %q, want %q", claims.Aud, origin)
	}
	exp := time.Unix(claims.Exp, 0)
	if exp.Before(now) || exp.After(now.Add(24*time.Hour)) {
		return fmt.Errorf("jwt: exp %v not within 24 hours of now", exp)
	}
	if !(strings.HasPrefix(claims.Sub, "mailto:") && !strings.HasPrefix(claims.Sub, "mailto:mailto:") && strings.Contains(claims.Sub, "@") ||
		strings.HasPrefix(claims.Sub, "https://")) {
		return fmt.Errorf("jwt: sub %q is not a mailto: or https: contact", claims.Sub)
	}
	return nil
}

// Decrypt opens an aes128gcm message (RFC 8188) with the device's key and secret as
// RFC 8291 says; one record.
func Decrypt(body []byte, ua *ecdh.PrivateKey, secret []byte) ([]byte, error) {
	if len(body) < 21 {
		return nil, errors.New("too short")
	}
	salt, rs, idlen := body[:16], binary.BigEndian.Uint32(body[16:20]), int(body[20])
	if len(body) < 21+idlen || int(rs) < len(body)-21-idlen {
		return nil, fmt.Errorf("record size %d for %d bytes", rs, len(body))
	}
	asPub, ct := body[21:21+idlen], body[21+idlen:]
	as, err := ecdh.P256().NewPublicKey(asPub)
	if err != nil {
		return nil, err
	}
	shared, err := ua.ECDH(as)
	if err != nil {
		return nil, err
	}
	ikm, err := hkdf.Key(sha256.New, shared, secret, "WebPush: info\x00"+string(ua.PublicKey().Bytes())+string(asPub), 32)
	if err != nil {
		return nil, err
	}
	cek, _ := hkdf.Key(sha256.New, ikm, salt, "Content-Encoding: aes128gcm\x00", 16)
	nonce, _ := hkdf.Key(sha256.New, ikm, salt, "Content-Encoding: nonce\x00", 12)
	block, _ := aes.NewCipher(cek)
	gcm, _ := cipher.NewGCM(block)
	plain, err := gcm.Open(nil, nonce, ct, nil)
	if err != nil {
		return nil, err
	}
	end := len(plain) - 1
	for end >= 0 && plain[end] == 0 {
		end--
	}
	if end < 0 || plain[end] != 2 {
		return nil, errors.New("no last-record delimiter")
	}
	return plain[:end], nil
}

func ecdhCurve() elliptic.Curve { return elliptic.P256() }

func bigInt(b []byte) *big.Int { return new(big.Int).SetBytes(b) }
