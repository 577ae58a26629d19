package api_test

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"os"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/tidings-dev/tidings"
)

// BenchmarkHookHTTP: what a provider's delivery costs against a publish of the same
// event size, in one run on one store. "log" is POST /v1/log with a full token (the
// baseline) and "log-keyed" the same with an Idempotency-Key; "github" is a signed GitHub star delivery to POST /hooks/{id}, each with
// its own X-GitHub-Delivery (so each is kept as an idempotency key and stores one
// event); "github-retry" sends one delivery again and again (the replay path). Compare
// ns/op of each with "log":
//
//	go test -run '^$' -bench HookHTTP -count 5 ./api
//	taskset -c 1 go test -run '^$' -bench HookHTTP -count 5 ./api
func BenchmarkHookHTTP(b *testing.B) {
	e := newHookEnv(b, noLimits)
	const secret = "bench-secret-0123456789"
	path, _ := e.hook(b, tidings.HookGitHub, secret)
	star, err := os.ReadFile("../hooks/testdata/github/star.created.json")
	if err != nil {
		b.Fatal(err)
	}
	m := hmac.New(sha256.New, []byte(secret))
	m.Write(star)
	signature := "sha256=" + hex.EncodeToString(m.Sum(nil))
	logBody := `{"project":"my-saas","channel":"payments","event":"New star","icon":"⭐","tags":{"repository":"octo-org/octo-repo","stars":42}}`
	var seq atomic.Int64
	for _, c := range []struct {
		name, path, body string
		header           func(h http.Header)
	}{
		{"log", "/v1/log", logBody, func(h http.Header) { h.Set("Authorization", "Bearer "+e.full) }},
		{"log-keyed", "/v1/log", logBody, func(h http.Header) {
			h.Set("Authorization", "Bearer "+e.full)
			h.Set("Idempotency-Key", fmt.Sprintf("bench-%d", seq.Add(1)))
		}},
		{"github", path, string(star), func(h http.Header) {
			h.Set("X-GitHub-Event", "star")
			h.Set("X-GitHub-Delivery", fmt.Sprintf("bench-%d", seq.Add(1)))
			h.Set("X-Hub-Signature-256", signature)
		}},
		{"github-retry", path, string(star), func(h http.Header) {
			h.Set("X-GitHub-Event", "star")
			h.Set("X-GitHub-Delivery", "bench-retried")
			h.Set("X-Hub-Signature-256", signature)
		}},
	} {
		b.Run(c.name, func(b *testing.B) {
			client := e.srv.Client()
			client.Transport.(*http.Transport).MaxIdleConnsPerHost = 64
			b.SetParallelism(32)
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					req, _ := http.NewRequest("POST", e.srv.URL+c.path, strings.NewReader(c.body))
					req.Header.Set("Content-Type", "application/json")
					c.header(req.Header)
					res, err := client.Do(req)
					if err != nil {
						b.Error(err)
						return
					}
					res.Body.Close()
					// A retry racing its own first delivery may be told 409 (in progress).
					if res.StatusCode != 200 && res.StatusCode != http.StatusConflict {
						b.Errorf("status %d", res.StatusCode)
						return
					}
				}
			})
		})
	}
}
