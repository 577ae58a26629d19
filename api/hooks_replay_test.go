package api_test

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/tidings-dev/tidings"
	"github.com/tidings-dev/tidings/api"
)

// newRealHookEnv is newHookEnv with every source the real one (json included).
func newRealHookEnv(t *testing.T, limits api.Limits, opts ...func(*api.Config)) *hookEnv {
	t.Helper()
	var hs *hookStore
	e := newEnvWith(t, limits, nil, func(s tidings.Store) tidings.Store {
		hs = &hookStore{Store: s}
		return hs
	}, opts...)
	return &hookEnv{env: e, hooks: hs}
}

// TestHookSameDeliveryIDDifferentBody: for a provider's hook the delivery id alone
// decides: a delivery with an id seen before is a replay (200, the first answer,
// nothing stored) even when its body differs, as Grafana's repeat notifications
// (valueString, values), Alertmanager's (templated annotations) and a GitHub
// redelivery may. A json hook's id is the sender's Idempotency-Key or X-Request-Id:
// the same with another body is a 422 that names that header.
func TestHookSameDeliveryIDDifferentBody(t *testing.T) {
	t.Parallel()
	read := func(t *testing.T, name string) string {
		b, err := os.ReadFile("../hooks/testdata/" + name)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	changed := func(t *testing.T, body, old, new string) string {
		t.Helper()
		if !strings.Contains(body, old) {
			t.Fatalf("the sample has no %q", old)
		}
		return strings.Replace(body, old, new, 1)
	}
	for _, c := range []struct {
		source, sample string
		repeat         func(t *testing.T, body string) string
		header         func(body string) []string
	}{
		{source: tidings.HookGrafana, sample: "grafana/firing.json", repeat: func(t *testing.T, b string) string {
			b = changed(t, b, `"B": 44.23943737541908`, `"B": 61.5`)
			return changed(t, b, "value=44.23943737541908 ]", "value=61.5 ]")
		}},
		{source: tidings.HookAlertmanager, sample: "alertmanager/firing.json", repeat: func(t *testing.T, b string) string {
			return changed(t, b, "has been down for more than 5 minutes.", "has been down for more than 4 hours.")
		}},
		{source: tidings.HookGitHub, sample: "github/star.created.json", repeat: func(t *testing.T, b string) string {
			return changed(t, b, `"stargazers_count": 1,`, `"stargazers_count": 2,`)
		}, header: func(body string) []string {
			m := hmac.New(sha256.New, []byte("gh-secret"))
			m.Write([]byte(body))
			return []string{"X-GitHub-Event", "star", "X-GitHub-Delivery", "72d3162e-cc78-11e3-81ab-4c9367dc0958",
				"X-Hub-Signature-256", "sha256=" + hex.EncodeToString(m.Sum(nil))}
		}},
	} {
		t.Run(c.source, func(t *testing.T) {
			t.Parallel()
			e := newRealHookEnv(t, noLimits)
			secret := ""
			if c.source == tidings.HookGitHub {
				secret = "gh-secret"
			}
			path, h := e.hook(t, c.source, secret)
			send := func(body string) hookResponse {
				var header []string
				if c.header != nil {
					header = c.header(body)
				}
				return e.deliver(t, path, strings.NewReader(body), header...)
			}
			body := read(t, c.sample)
			first := send(body)
			if first.status != http.StatusOK {
				t.Fatalf("%d %s", first.status, first.body)
			}
			stored := len(e.events(t))
			repeat := send(c.repeat(t, body))
			if repeat.status != http.StatusOK || repeat.body != first.body || repeat.header.Get("Idempotent-Replayed") != "true" {
				t.Fatalf("the same delivery id with another body: %d %q %s; first %s",
					repeat.status, repeat.header.Get("Idempotent-Replayed"), repeat.body, first.body)
			}
			if n := len(e.events(t)); n != stored || n == 0 {
				t.Fatalf("%d events stored after the repeat, %d before", n, stored)
			}
			if log := e.attempts(t, h); len(log) != 2 || log[0].Status != 200 || log[0].Events != 0 || log[0].DeliveryID != log[1].DeliveryID {
				t.Fatalf("log %+v", log)
			}
		})
	}

	t.Run("json", func(t *testing.T) {
		t.Parallel()
		e := newRealHookEnv(t, noLimits)
		path, h := e.hook(t, tidings.HookJSON, "")
		for _, header := range []string{"Idempotency-Key", "X-Request-Id"} {
			first := e.deliver(t, path, strings.NewReader(`{"event":"Build failed"}`), header, "build-"+header)
			if first.status != http.StatusOK {
				t.Fatalf("%d %s", first.status, first.body)
			}
			if again := e.deliver(t, path, strings.NewReader(`{"event":"Build failed"}`), header, "build-"+header); again.status != 200 || again.body != first.body {
				t.Fatalf("a retry: %d %s", again.status, again.body)
			}
			other := e.deliver(t, path, strings.NewReader(`{"event":"Build passed"}`), header, "build-"+header)
			if other.status != http.StatusUnprocessableEntity || !strings.Contains(other.body, tidings.EKeyReused) ||
				!strings.Contains(other.body, "delivery's "+header+" header") {
				t.Fatalf("%s again with another body: %d %s", header, other.status, other.body)
			}
			if log := e.attempts(t, h); log[0].Status != 422 || !strings.Contains(log[0].Error, header) {
				t.Fatalf("log %+v", log[0])
			}
		}
		if n := len(e.events(t)); n != 2 {
			t.Fatalf("%d events stored, want 2", n)
		}
	})
}
