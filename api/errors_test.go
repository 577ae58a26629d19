package api_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/tidings-dev/tidings/api"
	"github.com/tidings-dev/tidings/internal/testbackend"
)

func TestWriteError(t *testing.T) {
	testbackend.Once(t)
	t.Parallel()
	var logs bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))

	// A client that hung up is not the server's fault: no 500, no error in the log.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	w := httptest.NewRecorder()
	api.WriteError(w, httptest.NewRequest("POST", "/v1/log", nil).WithContext(ctx), log, fmt.Errorf("submit: %w", context.Canceled))
	if w.Code != 499 || strings.Contains(logs.String(), "level=ERROR") {
		t.Fatalf("client gone: status %d, log %q", w.Code, logs.String())
	}

	// A fault of the server: 500, a generic message, the details only in the log.
	logs.Reset()
	w = httptest.NewRecorder()
	api.WriteError(w, httptest.NewRequest("POST", "/v1/log", nil), log, errors.New("disk I/O error at /var/lib/secret.db"))
	if w.Code != 500 || strings.Contains(w.Body.String(), "secret.db") || !strings.Contains(logs.String(), "secret.db") {
		t.Fatalf("internal: status %d, body %q, log %q", w.Code, w.Body.String(), logs.String())
	}
}
