package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/tidings-dev/tidings"
	"github.com/tidings-dev/tidings/internal/testbackend"
)

// inviteSecret returns the secret of an invitation link (a whole URL or the path).
func inviteSecret(t *testing.T, link string) string {
	t.Helper()
	i := strings.Index(link, "/invite/")
	if i < 0 || strings.ContainsAny(link, " \t\n") {
		t.Fatalf("not an invitation link: %q", link)
	}
	return link[i+len("/invite/"):]
}

// TestCLIInvite: invite create makes an invitation that works (in the name of the
// account's first owner), with its role and email, and prints its link alone on
// standard output, a whole one with --public-url or TIDINGS_PUBLIC_URL, the path and
// a note without; without SMTP an --email is recorded, not mailed, and says so.
// invite list shows the pending ones; invite revoke ends one. Every wrong input is a
// one-line error that makes no invitation.
func TestCLIInvite(t *testing.T) {
	t.Parallel()
	loc := testbackend.Location(t)
	s := testbackend.Open(t, loc)
	f := testbackend.Seed(t, s, "acme")
	ctx := context.Background()
	c := cliCase{t, loc}
	pending := func() []*tidings.Invite {
		t.Helper()
		invs, err := s.ListInvites(ctx, f.Account.ID, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		return invs
	}

	// An account without an owner cannot invite yet.
	c.fails(1, "account acme has no owner yet", "invite", "create")
	c.ok("correct horse battery\n", "user", "create", "bob@example.com", "--role", "member")
	c.fails(1, "account acme has no owner yet", "invite", "create", "--email", "carol@example.com")
	if n := len(pending()); n != 0 {
		t.Fatalf("%d invitations made by refused commands", n)
	}
	c.ok("correct horse battery\n", "user", "create", "ada@example.com", "--role", "owner")
	c.ok("correct horse battery\n", "user", "create", "eve@example.com", "--role", "owner")
	ada, err := s.FindUserByEmail(ctx, "ada@example.com")
	if err != nil {
		t.Fatal(err)
	}

	// Without --public-url: the path, and a note.
	code, out, errs := runCLI(t, loc, "", "invite", "create")
	if code != 0 || !strings.HasPrefix(out, "/invite/") || strings.Count(out, "\n") != 1 ||
		errs != "note: without --public-url (TIDINGS_PUBLIC_URL) this is only the link's path: put the dashboard's address before it\n" {
		t.Fatalf("invite create: %d %q %q", code, out, errs)
	}
	plain := inviteSecret(t, strings.TrimSpace(out))
	inv, err := s.FindInvite(ctx, tidings.HashSecret(plain), time.Now())
	if err != nil {
		t.Fatalf("the invitation does not work: %v", err)
	}
	if inv.AccountID != f.Account.ID || inv.Role != tidings.UserMember || inv.CreatedBy != ada.ID || inv.ResetUser != 0 ||
		inv.ExpiresAt.Sub(inv.CreatedAt) != 7*24*time.Hour || inv.Email != "" {
		t.Fatalf("stored %+v", inv)
	}

	// With --public-url, an owner's, and an email recorded without SMTP.
	code, out, errs = runCLI(t, loc, "", "invite", "create", "--role", "owner", "--email", "Carol@Example.com", "--public-url", "https://tidings.example.com/")
	if code != 0 || !strings.HasPrefix(out, "https://tidings.example.com/invite/") || strings.Count(out, "\n") != 1 ||
		errs != "not mailed (no --smtp-url): send the link to Carol@Example.com yourself\n" {
		t.Fatalf("invite create --email: %d %q %q", code, out, errs)
	}
	owner := inviteSecret(t, strings.TrimSpace(out))
	if inv, err := s.FindInvite(ctx, tidings.HashSecret(owner), time.Now()); err != nil || inv.Role != tidings.UserOwner || inv.Email != "Carol@Example.com" {
		t.Fatalf("stored %+v, %v", inv, err)
	}
	if owner == plain {
		t.Fatal("two invitations with one secret")
	}
	// invite list: newest first, with a reset link the dashboard made.
	_, hash := tidings.NewSecret()
	if err := s.CreateInvite(ctx, &tidings.Invite{Hash: hash, AccountID: f.Account.ID, ResetUser: ada.ID, CreatedBy: ada.ID,
		CreatedAt: time.Now().Add(time.Second), ExpiresAt: time.Now().Add(24 * time.Hour)}); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(c.ok("", "invite", "list")), "\n")
	if len(lines) != 3 {
		t.Fatalf("invite list:\n%s", strings.Join(lines, "\n"))
	}
	for i, want := range []struct{ id, email, role string }{
		{tidings.InviteID(hash), "ada@example.com", "reset"},
		{tidings.InviteID(tidings.HashSecret(owner)), "Carol@Example.com", "owner"},
		{tidings.InviteID(tidings.HashSecret(plain)), "-", "member"},
	} {
		fs := strings.Fields(lines[i])
		if len(fs) != 4 || fs[0] != want.id || fs[1] != want.email || fs[2] != want.role {
			t.Fatalf("invite list line %d: %q, want %v", i, lines[i], want)
		}
		if exp, err := time.Parse(time.RFC3339, fs[3]); err != nil || exp.Before(time.Now()) {
			t.Fatalf("invite list line %d expires %q: %v", i, fs[3], err)
		}
	}

	// invite revoke: the link stops working; an unknown id is said.
	if out := c.ok("", "invite", "revoke", tidings.InviteID(tidings.HashSecret(plain))); out != "revoked "+tidings.InviteID(tidings.HashSecret(plain))+"\n" {
		t.Fatalf("invite revoke: %q", out)
	}
	if _, err := s.FindInvite(ctx, tidings.HashSecret(plain), time.Now()); tidings.ErrorCode(err) != tidings.ENotFound {
		t.Fatalf("a revoked invitation still works: %v", err)
	}
	c.fails(1, "no pending invitation with the id "+tidings.InviteID(tidings.HashSecret(plain))+" (tidings invite list shows them)",
		"invite", "revoke", tidings.InviteID(tidings.HashSecret(plain)))
	c.fails(1, "no pending invitation with the id nope", "invite", "revoke", "nope")
	c.fails(2, "missing INVITE_ID", "invite", "revoke")

	// Every wrong input: one line, exit 1, no invitation.
	before := len(pending())
	c.ok("", "account", "create", "globex")
	c.ok("correct horse battery\n", "user", "create", "zed@example.com", "--account", "globex", "--role", "owner")
	for _, tc := range []struct {
		want string
		args []string
	}{
		{`--role must be member or owner, not "admin"`, []string{"--role", "admin"}},
		{`--role must be member or owner, not ""`, []string{"--role", ""}},
		{`--email must be an email address, like bob@example.com, not "carol"`, []string{"--email", "carol"}},
		{`--email must be an email address`, []string{"--email", "Carol <carol@example.com>"}},
		{`--email must be an email address`, []string{"--email", "carol@example.com, dan@example.com"}},
		{"bob@example.com is a member of account acme already", []string{"--email", "bob@example.com"}},
		{"ada@example.com is a member of account acme already", []string{"--email", "ADA@example.com"}},
		{"zed@example.com is a user of another account already", []string{"--email", "zed@example.com"}},
		{"--public-url must be an http:// or https:// address", []string{"--public-url", "tidings.example.com"}},
		{"--public-url must be an http:// or https:// address", []string{"--public-url", "ftp://tidings.example.com"}},
		{`no account named "initech"`, []string{"--account", "initech"}},
	} {
		args := append([]string{"invite", "create"}, tc.args...)
		if !strings.Contains(strings.Join(tc.args, " "), "--account") {
			args = append(args, "--account", "acme")
		}
		c.fails(1, tc.want, args...)
	}
	c.fails(2, "takes no arguments", "invite", "create", "carol@example.com", "--account", "acme")
	c.fails(1, "2 accounts exist", "invite", "create")
	if after := len(pending()); after != before {
		t.Fatalf("refused commands made %d invitations", after-before)
	}
	// Another account's list is its own.
	if out := c.ok("", "invite", "list", "--account", "globex"); out != "" {
		t.Fatalf("globex lists acme's invitations: %q", out)
	}

	// The help says what each flag is for.
	if code, out, _ := runCLI(t, "", "", "invite", "create", "--help"); code != 0 || !strings.Contains(out, "--email address") ||
		!strings.Contains(out, "--public-url") || !strings.Contains(out, "--role") {
		t.Fatalf("invite create --help: %d\n%s", code, out)
	}
	if code, out, _ := runCLI(t, "", "", "invite", "--help"); code != 0 || !strings.Contains(out, "tidings invite list") || !strings.Contains(out, "tidings invite revoke INVITE_ID") {
		t.Fatalf("invite --help: %d\n%s", code, out)
	}
}

// TestCLIInvitePublicURLFromEnv: without --public-url, invite create builds the link
// on TIDINGS_PUBLIC_URL, and a mail setting of the environment that cannot be read
// stops it (not parallel: it sets the process's environment).
func TestCLIInvitePublicURLFromEnv(t *testing.T) {
	loc := testbackend.Location(t)
	s := testbackend.Open(t, loc)
	f := testbackend.Seed(t, s, "acme")
	c := cliCase{t, loc}
	c.ok("correct horse battery\n", "user", "create", "ada@example.com", "--role", "owner")
	t.Setenv("TIDINGS_PUBLIC_URL", "https://env.example.com")
	code, out, errs := runCLI(t, loc, "", "invite", "create")
	if code != 0 || !strings.HasPrefix(out, "https://env.example.com/invite/") || errs != "" {
		t.Fatalf("invite create: %d %q %q", code, out, errs)
	}
	if _, err := s.FindInvite(context.Background(), tidings.HashSecret(inviteSecret(t, strings.TrimSpace(out))), time.Now()); err != nil {
		t.Fatal(err)
	}
	// The flag wins.
	if code, out, _ := runCLI(t, loc, "", "invite", "create", "--public-url", "http://127.0.0.1:8080"); code != 0 || !strings.HasPrefix(out, "http://127.0.0.1:8080/invite/") {
		t.Fatalf("invite create --public-url: %d %q", code, out)
	}
	// A mail setting of the environment that cannot be read is said, and nothing made.
	t.Setenv("TIDINGS_SMTP_INSECURE", "maybe")
	c.fails(1, `TIDINGS_SMTP_INSECURE="maybe": use true or false`, "invite", "create", "--email", "bob@example.com")
	if invs, err := s.ListInvites(context.Background(), f.Account.ID, time.Now()); err != nil || len(invs) != 2 {
		t.Fatalf("%d invitations, %v", len(invs), err)
	}
}
