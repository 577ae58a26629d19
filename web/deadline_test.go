package web

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// deadlineRecorder is a ResponseWriter that records the write deadline set on it, as
// http.ResponseController sets it on a real connection.
type deadlineRecorder struct {
	*httptest.ResponseRecorder
	deadline time.Time
}

func (d *deadlineRecorder) SetWriteDeadline(t time.Time) error {
	d.deadline = t
	return nil
}

// TestPagesHaveAWriteDeadline: every dashboard answer is written under a deadline (the
// audit: a client that never read held 2.8 MB and a connection for minutes).
func TestPagesHaveAWriteDeadline(t *testing.T) {
	t.Parallel()
	s := &Server{}
	w := &deadlineRecorder{ResponseRecorder: httptest.NewRecorder()}
	before := time.Now()
	s.wrap(func(w http.ResponseWriter, r *http.Request) error {
		_, err := w.Write([]byte("a page"))
		return err
	}).ServeHTTP(w, httptest.NewRequest("GET", "/p/my-saas", nil))
	if w.deadline.Before(before) || w.deadline.After(before.Add(pageWriteTimeout+time.Minute)) {
		t.Fatalf("write deadline %v (now %v)", w.deadline, before)
	}
}
