package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/tidings-dev/tidings"
)

// testChecklist: hiding the getting-started checklist is remembered per user, is
// nobody else's business (another user, another account), and goes with the user.
func testChecklist(t *testing.T, open Opener) {
	ctx := context.Background()
	f := setup(t, open)
	ada := &tidings.User{AccountID: f.account.ID, Email: "ada@example.com", PasswordHash: "h", Role: tidings.UserOwner}
	bob := &tidings.User{AccountID: f.account.ID, Email: "bob@example.com", PasswordHash: "h", Role: tidings.UserMember}
	must(t, f.s.CreateUser(ctx, ada))
	must(t, f.s.CreateUser(ctx, bob))
	other := newAccount(t, f.s, "globex")

	hidden := func(u *tidings.User) bool {
		t.Helper()
		h, err := f.s.ChecklistHidden(ctx, u.AccountID, u.ID)
		must(t, err)
		return h
	}
	if hidden(ada) || hidden(bob) {
		t.Fatal("a new user's checklist is hidden")
	}
	must(t, f.s.HideChecklist(ctx, f.account.ID, ada.ID, epoch))
	must(t, f.s.HideChecklist(ctx, f.account.ID, ada.ID, epoch.Add(time.Hour))) // again: no change, no error
	if !hidden(ada) || hidden(bob) {
		t.Fatalf("after ada hid it: ada %v, bob %v", hidden(ada), hidden(bob))
	}

	// Another account names ada's ID in vain, both ways.
	wantCode(t, f.s.HideChecklist(ctx, other.ID, bob.ID, epoch), tidings.ENotFound)
	_, err := f.s.ChecklistHidden(ctx, other.ID, ada.ID)
	wantCode(t, err, tidings.ENotFound)
	if hidden(bob) {
		t.Fatal("another account's request hid bob's checklist")
	}
	wantCode(t, f.s.HideChecklist(ctx, f.account.ID, 1<<40, epoch), tidings.ENotFound)

	// A removed member's choice goes with them.
	must(t, f.s.DeleteUser(ctx, f.account.ID, ada.ID))
	_, err = f.s.ChecklistHidden(ctx, f.account.ID, ada.ID)
	wantCode(t, err, tidings.ENotFound)
}
