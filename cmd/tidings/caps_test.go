package main

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/tidings-dev/tidings"
	"github.com/tidings-dev/tidings/internal/testbackend"
)

// TestCLIChannelCap: `tidings channel create` refuses channel number
// MaxChannelsPerProject+1 with a one-line error that says the cap and what to do.
func TestCLIChannelCap(t *testing.T) {
	t.Parallel()
	data := testbackend.Location(t)
	s := testbackend.Open(t, data)
	ctx := context.Background()
	a, err := s.CreateAccount(ctx, "acme")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.CreateProject(ctx, a.ID, "my-saas"); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, tidings.MaxChannelsPerProject)
	for i := range tidings.MaxChannelsPerProject - 1 {
		wg.Go(func() {
			if _, err := s.CreateChannel(ctx, a.ID, "my-saas", fmt.Sprintf("c%d", i)); err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if code, _, errs := runCLI(t, data, "", "channel", "create", "my-saas", "last"); code != 0 {
		t.Fatalf("channel number %d: exit %d: %s", tidings.MaxChannelsPerProject, code, errs)
	}
	code, out, stderr := runCLI(t, data, "", "channel", "create", "my-saas", "one-too-many")
	want := fmt.Sprintf(`project "my-saas" has %d channels, the most a project may have`, tidings.MaxChannelsPerProject)
	if code != 1 || out != "" || !strings.Contains(stderr, want) || !strings.Contains(stderr, "tidings channel delete my-saas NAME") ||
		strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
		t.Fatalf("exit %d, stdout %q, stderr %q; want 1 and one line saying %q and what to do", code, out, stderr, want)
	}
	if code, _, errs := runCLI(t, data, "", "channel", "delete", "my-saas", "c7", "--yes"); code != 0 {
		t.Fatalf("channel delete: exit %d: %s", code, errs)
	}
	if code, _, errs := runCLI(t, data, "", "channel", "create", "my-saas", "one-too-many"); code != 0 {
		t.Fatalf("after a deletion: exit %d: %s", code, errs)
	}
}
