package api

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/tidings-dev/tidings/internal/metrics"
)

// BenchmarkMiddleware measures what every request pays around its handler: the request
// id, the access-log line (text, as serve writes it, to a discarding writer) and the
// metrics. Compare ns/op and allocs/op:
//
//	go test -run '^$' -bench Middleware -benchmem -count 5 ./api
func BenchmarkMiddleware(b *testing.B) {
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/log", func(w http.ResponseWriter, r *http.Request) {
		infoFrom(r.Context()).accountID = 7
		w.WriteHeader(http.StatusOK)
	})
	h := Middleware(mux, log, metrics.New())
	req := httptest.NewRequest("POST", "/v1/log", nil)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
	}
}
