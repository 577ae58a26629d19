package storetest

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/tidings-dev/tidings"
)

// testChannelPages: paging through a project's channels, all or those a search
// matches, returns each once, by name, with the count of all that match.
func testChannelPages(t *testing.T, open Opener) {
	ctx := context.Background()
	f := setup(t, open) // with "payments"
	want := []string{"payments"}
	for i := range 120 {
		name := fmt.Sprintf("ch-%03d", i)
		if i%10 == 0 {
			name = fmt.Sprintf("deploy-%03d", i)
		}
		_, err := f.s.CreateChannel(ctx, f.account.ID, "my-saas", name)
		must(t, err)
		want = append(want, name)
	}
	slices.Sort(want)
	walk := func(search string, limit int) (names []string, total int) {
		t.Helper()
		q := tidings.ChannelQuery{Project: "my-saas", Search: search, Limit: limit}
		for range 200 {
			page, err := f.s.PageChannels(ctx, f.account.ID, q)
			must(t, err)
			if len(page.Channels) > limit || (page.Next != "" && len(page.Channels) != limit) {
				t.Fatalf("page of %d with next %q (limit %d)", len(page.Channels), page.Next, limit)
			}
			for _, c := range page.Channels {
				names = append(names, c.Name)
			}
			total = page.Total
			if page.Next == "" {
				return names, total
			}
			q.After = page.Next
		}
		t.Fatal("paging does not end")
		return nil, 0
	}
	names, total := walk("", 50)
	if !slices.Equal(names, want) || total != len(want) {
		t.Fatalf("got %d channels (total %d), want %d in order", len(names), total, len(want))
	}
	names, total = walk("deploy", 5)
	if len(names) != 12 || total != 12 || names[0] != "deploy-000" || names[11] != "deploy-110" {
		t.Fatalf("search deploy: %v (total %d)", names, total)
	}
	// A first page that holds every match counts them itself.
	if names, total = walk("deploy", 50); len(names) != 12 || total != 12 {
		t.Fatalf("search deploy on one page: %d channels, total %d", len(names), total)
	}
	if names, total = walk("", 500); len(names) != len(want) || total != len(want) {
		t.Fatalf("all on one page: %d channels, total %d, want %d", len(names), total, len(want))
	}
	if names, total = walk("%", 5); len(names) != 0 || total != 0 {
		t.Fatalf("search %%: %v", names)
	}
	_, err := f.s.PageChannels(ctx, f.account.ID, tidings.ChannelQuery{Project: "nope", Limit: 5})
	wantCode(t, err, tidings.EProjectNotFound)
}
