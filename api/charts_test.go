package api_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"
	"time"

	"github.com/tidings-dev/tidings"
	"github.com/tidings-dev/tidings/api"
	"github.com/tidings-dev/tidings/charts"
	"github.com/tidings-dev/tidings/inmem"
)

type chartAnswer struct {
	Measure string `json:"measure"`
	Bucket  string `json:"bucket"`
	TZ      string `json:"tz"`
	Series  []struct {
		Key    *string `json:"key"`
		Other  bool    `json:"other"`
		Points []struct {
			Start string  `json:"start"`
			Value *string `json:"value"`
		} `json:"points"`
	} `json:"series"`
}

type funnelAnswer struct {
	Steps []struct {
		Q             string   `json:"q"`
		Users         int      `json:"users"`
		MedianSeconds *int64   `json:"median_seconds"`
		Dropped       []string `json:"dropped"`
	} `json:"steps"`
}

// chartEvents publishes through the API: two users sign up, one pays twice.
func chartEvents(e *env, day time.Time) {
	e.t.Helper()
	for i, ev := range []string{
		`{"project":"my-saas","channel":"payments","event":"Signed up","user_id":"ada","timestamp":%d}`,
		`{"project":"my-saas","channel":"payments","event":"Signed up","user_id":"bob","timestamp":%d}`,
		`{"project":"my-saas","channel":"payments","event":"Paid","user_id":"ada","tags":{"amount":12.5,"plan":"pro"},"timestamp":%d}`,
		`{"project":"my-saas","channel":"payments","event":"Paid","user_id":"ada","tags":{"amount":7.25,"plan":"free"},"timestamp":%d}`,
	} {
		r := e.do("POST", "/v1/log", e.full, fmt.Sprintf(ev, day.Add(time.Duration(i)*time.Hour).Unix()))
		if r.status != http.StatusOK {
			e.t.Fatalf("publish: %d %s", r.status, r.body)
		}
	}
}

func TestChartQuery(t *testing.T) {
	now := time.Now().UTC()
	day := time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, time.UTC).AddDate(0, 0, -2)
	e := newEnv(t, noLimits)
	chartEvents(e, day)
	r := e.do("GET", "/v1/charts/query?project=my-saas&q="+url.QueryEscape(`event:"Paid"`)+"&measure=sum:amount", e.full, "")
	if r.status != http.StatusOK {
		t.Fatalf("%d %s", r.status, r.body)
	}
	a := decode[chartAnswer](t, r)
	if a.Measure != "sum:amount" || a.Bucket != "day" || a.TZ != "UTC" || len(a.Series) != 1 || a.Series[0].Key != nil || len(a.Series[0].Points) != 30 {
		t.Fatalf("%s", r.body)
	}
	got := map[string]string{}
	for _, p := range a.Series[0].Points {
		if p.Value == nil {
			t.Fatalf("a sum's empty bucket is null: %s", r.body)
		}
		got[p.Start] = *p.Value
	}
	if got[day.Format(time.RFC3339)] != "19.75" || got[day.AddDate(0, 0, 1).Format(time.RFC3339)] != "0" {
		t.Fatalf("sums: %v", got)
	}
	// Split by tag, unique users, and a zone.
	r = e.do("GET", "/v1/charts/query?project=my-saas&measure=users&split=tag:plan&tz=Europe/Paris&bucket=week", e.full, "")
	a = decode[chartAnswer](t, r)
	if r.status != http.StatusOK || a.TZ != "Europe/Paris" || len(a.Series) != 3 || *a.Series[0].Key != "free" || !a.Series[2].Other {
		t.Fatalf("%d %s", r.status, r.body)
	}
	// Funnels.
	r = e.do("GET", "/v1/funnels/query?project=my-saas&step="+url.QueryEscape(`event:"Signed up"`)+"&step="+url.QueryEscape(`event:"Paid"`)+"&window=1d", e.full, "")
	f := decode[funnelAnswer](t, r)
	if r.status != http.StatusOK || len(f.Steps) != 2 || f.Steps[0].Users != 2 || f.Steps[1].Users != 1 ||
		f.Steps[1].MedianSeconds == nil || *f.Steps[1].MedianSeconds != 7200 || len(f.Steps[0].Dropped) != 1 || f.Steps[0].Dropped[0] != "bob" {
		t.Fatalf("%d %s", r.status, r.body)
	}
}

func TestChartQueryRefuses(t *testing.T) {
	e := newEnv(t, noLimits)
	public := e.token(e.acme, tidings.AccessPublic, "", "")
	limited := e.token(e.acme, tidings.AccessFull, "my-saas", "payments")
	_, err := e.store.CreateProject(context.Background(), e.acme.ID, "other")
	e.must(err)
	other := e.token(e.acme, tidings.AccessFull, "other", "")
	for _, c := range []struct {
		query, token string
		status       int
		code, field  string
	}{
		{"project=my-saas", public, 403, "forbidden", ""},
		{"project=my-saas", "", 401, "missing_token", ""},
		{"project=my-saas", other, 403, "forbidden", ""},
		{"project=my-saas", limited, 403, "forbidden", ""},
		{"project=my-saas&q=channel:payments", limited, 200, "", ""},
		{"project=nope", e.full, 404, "project_not_found", ""},
		{"project=my-saas&q=channel:nope", e.full, 404, "channel_not_found", ""},
		{"project=", e.full, 400, "validation_failed", "project"},
		{"project=my-saas&measure=median", e.full, 400, "validation_failed", "measure"},
		{"project=my-saas&bucket=minute", e.full, 400, "validation_failed", "bucket"},
		{"project=my-saas&split=region", e.full, 400, "validation_failed", "split"},
		{"project=my-saas&tz=Mars", e.full, 400, "validation_failed", "tz"},
		{"project=my-saas&from=2026-11-20T00:00:00Z&to=2026-11-01T00:00:00Z", e.full, 400, "validation_failed", "to"},
		{"project=my-saas&bucket=hour&from=2025-01-01T00:00:00Z&to=2026-01-01T00:00:00Z", e.full, 400, "validation_failed", "bucket"},
		{"project=my-saas&q=since:soon", e.full, 400, "validation_failed", "q"},
	} {
		r := e.do("GET", "/v1/charts/query?"+c.query, c.token, "")
		if c.status == 200 {
			if r.status != 200 {
				t.Errorf("%s: %d %s", c.query, r.status, r.body)
			}
			continue
		}
		if r.status != c.status || r.problem.Code != c.code || c.field != "" && !r.has(c.field, "") {
			t.Errorf("%s: %d %s, want %d %s at %q", c.query, r.status, r.body, c.status, c.code, c.field)
		}
	}
	for _, c := range []struct{ query, field string }{
		{"step=a", "step"},
		{"step=a&step=b&step=c&step=d&step=e&step=f&step=g&step=h&step=i", "step"},
		{"step=a&step=b&window=30m", "window"},
		{"step=a&step=b&window=91d", "window"},
		{"step=a&step=b&from=2026-11-20&to=2026-11-01", "to"},
		{"step=a&step=", "step[1]"},
	} {
		r := e.do("GET", "/v1/funnels/query?project=my-saas&"+c.query, e.full, "")
		if r.status != 400 || !r.has(c.field, "") {
			t.Errorf("%s: %d %s, want 400 at %q", c.query, r.status, r.body, c.field)
		}
	}
	r := e.do("GET", "/v1/funnels/query?project=my-saas&step=a&step=b", public, "")
	e.want(r, 403, "forbidden")
	r = e.do("GET", "/v1/funnels/query?project=my-saas&step=channel:payments&step=b", limited, "")
	e.want(r, 403, "forbidden")
	r = e.do("GET", "/v1/funnels/query?project=my-saas&step=channel:payments&step=channel:payments+paid", limited, "")
	if r.status != 200 {
		t.Errorf("a channel-limited token's funnel in its channel: %d %s", r.status, r.body)
	}
	// A sum over a tag that holds text names the measure.
	e.do("POST", "/v1/log", e.full, `{"project":"my-saas","channel":"payments","event":"Odd","tags":{"amount":"lots"}}`)
	r = e.do("GET", "/v1/charts/query?project=my-saas&measure=sum:amount", e.full, "")
	if r.status != 400 || !r.has("measure", "not_number") {
		t.Errorf("sum of a text tag: %d %s", r.status, r.body)
	}
}

// TestQuestionsOfOneTeamDoNotStallAnother: while one account has its question under
// way, its next one is refused at once (429), and another account's questions and feed
// are answered.
func TestQuestionsOfOneTeamDoNotStallAnother(t *testing.T) {
	gate := charts.NewGate(1, 2)
	e := newEnv(t, noLimits)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	srv := api.New(api.Config{Store: e.store, Broker: inmem.NewBroker(0), Logger: log, Questions: gate})
	mux := http.NewServeMux()
	srv.Register(mux)
	e.srv = httptest.NewServer(api.Middleware(mux, log, nil))
	t.Cleanup(e.srv.Close)
	globex := e.account("globex")
	theirs := e.token(globex, tidings.AccessFull, "", "")

	leave, err := gate.Enter(context.Background(), e.acme.ID) // acme's slow question, under way
	if err != nil {
		t.Fatal(err)
	}
	r := e.do("GET", "/v1/charts/query?project=my-saas", e.full, "")
	e.want(r, http.StatusTooManyRequests, "rate_limited")
	for range 3 {
		if r := e.do("GET", "/v1/charts/query?project=my-saas&measure=users", theirs, ""); r.status != 200 {
			t.Fatalf("another team's chart: %d %s", r.status, r.body)
		}
		if r := e.do("GET", "/v1/events?project=my-saas", theirs, ""); r.status != 200 {
			t.Fatalf("another team's feed: %d %s", r.status, r.body)
		}
	}
	leave()
	if r := e.do("GET", "/v1/charts/query?project=my-saas", e.full, ""); r.status != 200 {
		t.Fatalf("after its question: %d %s", r.status, r.body)
	}
	if n := gate.Accounts(); n != 0 {
		t.Fatalf("the gate remembers %d accounts with nothing under way", n)
	}
}

// TestEventsSearchFields: the read API's q= knows channel:, event:, user: and
// tag:KEY:VALUE, and refuses a channel: that contradicts channel=.
func TestEventsSearchFields(t *testing.T) {
	e := newEnv(t, noLimits)
	chartEvents(e, time.Now().UTC().Add(-6*time.Hour))
	e.do("POST", "/v1/log", e.full, `{"project":"my-saas","channel":"payments","event":"Tagged","tags":{"user":"ada"}}`)
	for q, want := range map[string]int{
		`event:"Paid"`:              2,
		`event:"paid"`:              0,
		`user:ada`:                  3,
		`user:ada event:"Paid"`:     2,
		`tag:user:ada`:              1,
		`channel:payments`:          5,
		`channel:payments user:bob`: 1,
	} {
		r := e.do("GET", "/v1/events?project=my-saas&q="+url.QueryEscape(q), e.full, "")
		page := decode[struct {
			Events []struct{ Event string } `json:"events"`
		}](t, r)
		if r.status != 200 || len(page.Events) != want {
			t.Errorf("q=%s: %d, %d events, want %d: %s", q, r.status, len(page.Events), want, r.body)
		}
	}
	r := e.do("GET", "/v1/events?project=my-saas&channel=payments&q=channel:signups", e.full, "")
	if r.status != 400 || !r.has("q", "channel") {
		t.Errorf("contradicting channels: %d %s", r.status, r.body)
	}
}
