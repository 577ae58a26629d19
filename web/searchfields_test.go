package web_test

import (
	"context"
	"net/url"
	"strings"
	"testing"

	"github.com/tidings-dev/tidings"
)

// TestFeedSearchFields: the feed's search box takes channel:, event: and user:; a
// channel: that is not the page's channel says so and lists nothing.
func TestFeedSearchFields(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	c := e.owner()
	acme := e.account("acme")
	_, err := e.store.CreateChannel(context.Background(), acme.ID, "my-saas", "signups")
	if err != nil {
		t.Fatal(err)
	}
	e.publish(acme, tidings.NewEvent{Event: "Paid by ada", UserID: "ada"})
	e.publish(acme, tidings.NewEvent{Event: "Paid by bob", UserID: "bob"})
	e.publish(acme, tidings.NewEvent{Project: "my-saas", Channel: "signups", Event: "Signed up ada", UserID: "ada"})
	for q, want := range map[string][]string{
		"channel:signups":           {"Signed up ada"},
		"user:ada":                  {"Paid by ada", "Signed up ada"},
		`event:"Paid by bob"`:       {"Paid by bob"},
		"channel:payments user:ada": {"Paid by ada"},
	} {
		p := c.get("/p/my-saas?q=" + url.QueryEscape(q))
		p.want(t, 200)
		for _, name := range []string{"Paid by ada", "Paid by bob", "Signed up ada"} {
			if in, wanted := strings.Contains(p.body, name), contains(want, name); in != wanted {
				t.Errorf("q=%s: %q listed %v, want %v", q, name, in, wanted)
			}
		}
	}
	p := c.get("/p/my-saas/c/payments?q=" + url.QueryEscape("channel:signups"))
	p.want(t, 200, "the search asks for channel:signups")
	if strings.Contains(p.body, "Signed up ada") || strings.Contains(p.body, "Paid by ada") {
		t.Error("a contradicting channel: lists events")
	}
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
