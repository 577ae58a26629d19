package main

import (
	"bytes"
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/tidings-dev/tidings/internal/testbackend"
)

func TestHealthURL(t *testing.T) {
	testbackend.Once(t)
	for _, tc := range []struct {
		addr  string
		https bool
		want  string
	}{
		{"127.0.0.1:8080", false, "http://127.0.0.1:8080/readyz"},
		{"0.0.0.0:8080", false, "http://127.0.0.1:8080/readyz"},
		{":9090", false, "http://127.0.0.1:9090/readyz"},
		{"[::]:8080", true, "https://[::1]:8080/readyz"},
		{"tidings.internal:8443", true, "https://tidings.internal:8443/readyz"},
	} {
		t.Run(tc.addr, func(t *testing.T) {
			got, err := healthURL(tc.addr, tc.https)
			if err != nil || got != tc.want {
				t.Fatalf("healthURL(%q, %v) = %q, %v; want %q", tc.addr, tc.https, got, err, tc.want)
			}
		})
	}
	if _, err := healthURL("8080", false); err == nil {
		t.Fatal("an address without a port: no error")
	}
}

// TestHealth runs `tidings health` against a server that is ready, one that is not,
// and an address nobody listens on; the address comes from --addr or TIDINGS_ADDR, as
// serve takes it.
func TestHealth(t *testing.T) {
	testbackend.Once(t)
	var notReady atomic.Bool
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/readyz" {
			http.NotFound(w, r)
			return
		}
		if notReady.Load() {
			http.Error(w, "store unreachable", http.StatusServiceUnavailable)
		}
	}))
	defer srv.Close()
	addr := srv.Listener.Addr().String()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := ln.Addr().String()
	ln.Close()

	check := func(t *testing.T, args []string, wantCode int, wantErr string) {
		t.Helper()
		var out, errs bytes.Buffer
		code := run(context.Background(), args, nil, &out, &errs)
		if code != wantCode || !strings.Contains(errs.String(), wantErr) {
			t.Fatalf("%v: exit %d, stdout %q, stderr %q; want exit %d and %q", args, code, out.String(), errs.String(), wantCode, wantErr)
		}
	}
	t.Run("ready", func(t *testing.T) { check(t, []string{"health", "--addr", addr}, 0, "") })
	t.Run("ready, TIDINGS_ADDR", func(t *testing.T) {
		t.Setenv("TIDINGS_ADDR", addr)
		check(t, []string{"health"}, 0, "")
	})
	t.Run("not ready", func(t *testing.T) {
		notReady.Store(true)
		defer notReady.Store(false)
		check(t, []string{"health", "--addr", addr}, 1, "503 Service Unavailable")
	})
	t.Run("nobody listens", func(t *testing.T) { check(t, []string{"health", "--addr", closed}, 1, "not ready") })
}
