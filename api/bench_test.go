package api_test

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/tidings-dev/tidings/api"
	"github.com/tidings-dev/tidings/internal/metrics"
)

// BenchmarkPublishHTTP measures POST /v1/log through the whole API (auth, decoding,
// validation, group commit) against GET /healthz through the same stack: compare ns/op.
//
//	go test -run '^$' -bench PublishHTTP -count 5 ./api
func BenchmarkPublishHTTP(b *testing.B) {
	e := newEnv(b, noLimits)
	body := `{"project":"my-saas","channel":"payments","event":"New Subscription","icon":"💰","tags":{"plan":"premium","seats":3}}`
	for _, c := range []struct{ name, method, path, body string }{
		{"healthz", "GET", "/healthz", ""},
		{"log", "POST", "/v1/log", body},
	} {
		b.Run(c.name, func(b *testing.B) {
			client := e.srv.Client()
			client.Transport.(*http.Transport).MaxIdleConnsPerHost = 64
			b.SetParallelism(32)
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					req, _ := http.NewRequest(c.method, e.srv.URL+c.path, strings.NewReader(c.body))
					req.Header.Set("Content-Type", "application/json")
					req.Header.Set("Authorization", "Bearer "+e.full)
					res, err := client.Do(req)
					if err != nil {
						b.Error(err)
						return
					}
					res.Body.Close()
					if res.StatusCode != 200 {
						b.Errorf("status %d", res.StatusCode)
						return
					}
				}
			})
		})
	}
}

// BenchmarkLogHandler runs POST /v1/log through the server's whole handler — the
// middleware with its access-log line (discarded) and metrics, the mux, the API, the
// group commit on a real store — without the network, from 32 goroutines, and reports
// the allocations of one publish, the committer's share included:
//
//	go test -run '^$' -bench LogHandler -benchmem -count 5 ./api
func BenchmarkLogHandler(b *testing.B) {
	e := newEnv(b, noLimits)
	mux := http.NewServeMux()
	e.api.Register(mux)
	h := api.Middleware(mux, slog.New(slog.NewTextHandler(io.Discard, nil)), metrics.New())
	body := `{"project":"my-saas","channel":"payments","event":"New Subscription","description":"user@example.com paid","icon":"💰","user_id":"user-42","tags":{"plan":"premium","seats":3,"trial":false,"region":"eu-west"}}`
	auth := "Bearer " + e.full
	b.ReportAllocs()
	b.SetParallelism(32)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			req := httptest.NewRequest("POST", "/v1/log", strings.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Authorization", auth)
			w := httptest.NewRecorder()
			h.ServeHTTP(w, req)
			if w.Code != 200 {
				b.Errorf("status %d: %s", w.Code, w.Body)
				return
			}
		}
	})
}
