package api_test

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/tidings-dev/tidings"
)

// fill creates n of something at once through create(i), failing on any error.
func fill(t *testing.T, n int, create func(i int) error) {
	t.Helper()
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Go(func() {
			if err := create(i); err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}

// wantCap checks a refusal at a cap: 409 limit_reached whose message says the cap and
// what to do.
func wantCap(t *testing.T, status int, code, msg, what string) {
	t.Helper()
	if status != 409 || code != tidings.ELimitReached || !strings.Contains(msg, what) || !strings.Contains(msg, "delete") {
		t.Fatalf("got %d %s %q, want 409 limit_reached saying %q and what to delete", status, code, msg, what)
	}
}

// TestInsightCap: a public token cannot create insight number MaxInsightsPerProject+1;
// it can still change the existing ones, and a refused key is not remembered.
func TestInsightCap(t *testing.T) {
	t.Parallel()
	e := newEnv(t, noLimits)
	ctx := context.Background()
	fill(t, tidings.MaxInsightsPerProject, func(i int) error {
		_, err := e.store.ApplyInsight(ctx, e.acme.ID, &tidings.InsightChange{Project: "my-saas", Title: fmt.Sprintf("Insight %d", i),
			Value: "1", ValueKind: tidings.KindNumber, Change: tidings.ChangeUpdate})
		return err
	})
	pub := e.token(e.acme, tidings.AccessPublic, "", "")
	body := `{"project":"my-saas","title":"One too many","value":1,"change":"increment"}`
	r := e.do("POST", "/v1/insight", pub, body, "Idempotency-Key", "k-cap")
	wantCap(t, r.status, r.problem.Code, r.problem.Detail, fmt.Sprintf("%d insights", tidings.MaxInsightsPerProject))
	r = e.do("PATCH", "/v1/insight", pub, `{"project":"my-saas","title":"Also new","value":{"$inc":1}}`)
	wantCap(t, r.status, r.problem.Code, r.problem.Detail, "insights")
	for _, b := range []string{`{"project":"my-saas","title":"Insight 7","value":5,"change":"increment"}`,
		`{"project":"my-saas","title":"Insight 8","value":"up","change":"update"}`} {
		if r := e.do("POST", "/v1/insight", pub, b); r.status != 200 {
			t.Fatalf("change of an existing insight: %d %s", r.status, r.body)
		}
	}
	if r := e.do("PATCH", "/v1/insight", pub, `{"project":"my-saas","title":"Insight 9","value":{"$inc":1}}`); r.status != 200 {
		t.Fatalf("increment of an existing insight: %d %s", r.status, r.body)
	}
	// Room made, the same key is a new request: the refusal was not kept.
	if r := e.do("DELETE", "/v1/insights?project=my-saas&title="+url.QueryEscape("Insight 1"), e.full, ""); r.status != 204 {
		t.Fatalf("delete: %d %s", r.status, r.body)
	}
	r = e.do("POST", "/v1/insight", pub, body, "Idempotency-Key", "k-cap")
	if r.status != 200 || r.header.Get("Idempotent-Replayed") != "" {
		t.Fatalf("after a deletion: %d %s", r.status, r.body)
	}
}

// TestChannelCap: with "create channels on first event" on, an event to channel number
// MaxChannelsPerProject+1 is refused, alone in a batch; events to existing channels
// are accepted.
func TestChannelCap(t *testing.T) {
	t.Parallel()
	e := newEnv(t, noLimits)
	ctx := context.Background()
	e.must(e.store.SetAutoCreateChannels(ctx, e.acme.ID, "my-saas", true))
	fill(t, tidings.MaxChannelsPerProject-1, func(i int) error { // "payments" is one
		_, err := e.store.CreateChannel(ctx, e.acme.ID, "my-saas", fmt.Sprintf("c%d", i))
		return err
	})
	pub := e.token(e.acme, tidings.AccessPublic, "", "")
	ev := func(channel string) string {
		return fmt.Sprintf(`{"project":"my-saas","channel":%q,"event":"Signup"}`, channel)
	}
	what := fmt.Sprintf("%d channels", tidings.MaxChannelsPerProject)
	r := e.do("POST", "/v1/log", pub, ev("one-too-many"))
	wantCap(t, r.status, r.problem.Code, r.problem.Detail, what)
	if r := e.do("POST", "/v1/log", pub, ev("c7")); r.status != 200 {
		t.Fatalf("event to an existing channel: %d %s", r.status, r.body)
	}
	got := decode[batchResults](t, e.do("POST", "/v1/log/batch", pub, batchOf(ev("payments"), ev("new-one"), ev("c9"))))
	res := got.Results
	if len(res) != 3 || res[0].Status != 200 || res[2].Status != 200 || res[1].Error == nil {
		t.Fatalf("batch: %+v", got)
	}
	wantCap(t, res[1].Status, res[1].Error.Code, res[1].Error.Validation.Body[0].Message, what)
	if n := e.countEvents(e.acme); n != 3 {
		t.Fatalf("%d events stored, want 3", n)
	}
}
