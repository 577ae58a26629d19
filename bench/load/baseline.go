package main

import (
	"crypto/subtle"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strings"
	"time"
)

// serveBaseline answers the API's write routes as cheaply as a Go service can while
// doing the work every such request needs: check the bearer token, read and decode
// the JSON body into the same fields, and answer with JSON. No storage, no rules.
// It is the ceiling Tidings is measured against in the same run.
func serveBaseline(addr, token string) error {
	want := []byte("Bearer " + token)
	type logBody struct {
		Project     string         `json:"project"`
		Channel     string         `json:"channel"`
		Event       string         `json:"event"`
		Description string         `json:"description"`
		Icon        string         `json:"icon"`
		Notify      bool           `json:"notify"`
		Tags        map[string]any `json:"tags"`
		Parser      string         `json:"parser"`
		UserID      string         `json:"user_id"`
		Timestamp   float64        `json:"timestamp"`
		Title       string         `json:"title"`
		Value       any            `json:"value"`
		Change      string         `json:"change"`
	}
	h := func(w http.ResponseWriter, r *http.Request) {
		if subtle.ConstantTimeCompare([]byte(r.Header.Get("Authorization")), want) != 1 {
			http.Error(w, `{"error":"invalid token"}`, http.StatusUnauthorized)
			return
		}
		data, err := io.ReadAll(io.LimitReader(r.Body, 64<<10))
		if err != nil {
			http.Error(w, `{"error":"body"}`, http.StatusBadRequest)
			return
		}
		var b logBody
		if err := json.Unmarshal(data, &b); err != nil || (b.Project == "" && b.Title == "") {
			http.Error(w, `{"error":"invalid"}`, http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(b)
	}
	mux := http.NewServeMux()
	for _, route := range []string{"POST /v1/log", "POST /v1/insight", "PATCH /v1/insight"} {
		mux.HandleFunc(route, h)
	}
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok\n") })
	ln, err := net.Listen("tcp", strings.TrimPrefix(addr, "http://"))
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	return srv.Serve(ln)
}
