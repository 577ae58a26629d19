package postgres_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/tidings-dev/tidings"
	"github.com/tidings-dev/tidings/postgres"
)

// board lists the titles of a project's cards, checking that their positions are
// dense from 0.
func board(t *testing.T, db *postgres.DB, accountID int64, project string) []string {
	t.Helper()
	cards, err := db.ListCards(context.Background(), accountID, project)
	if err != nil {
		t.Fatal(err)
	}
	titles := []string{}
	for i, c := range cards {
		if c.Position != i || c.Project != project {
			t.Fatalf("card %d (%q) of %q at position %d, project %q", i, c.Title, project, c.Position, c.Project)
		}
		titles = append(titles, c.Title)
	}
	return titles
}

func TestBoardCards(t *testing.T) {
	t.Parallel()
	db := open(t)
	ctx := context.Background()
	a, _ := db.CreateAccount(ctx, "acme")
	db.CreateProject(ctx, a.ID, "shop")
	db.CreateProject(ctx, a.ID, "blog")
	if got := board(t, db, a.ID, "shop"); len(got) != 0 {
		t.Fatalf("a new board holds %v", got)
	}
	var ids []int64
	for i, title := range []string{"A", "B", "C", "D"} {
		c, err := db.AddCard(ctx, a.ID, "shop", &tidings.Card{Kind: tidings.CardChart, Title: title,
			Params: "q=event%3A%22Signed+up%22&bucket=day", Wide: i%2 == 0})
		if err != nil {
			t.Fatal(err)
		}
		if c.ID == 0 || c.Position != i || c.Project != "shop" || c.Title != title || c.CreatedAt.IsZero() {
			t.Fatalf("added %+v", c)
		}
		ids = append(ids, c.ID)
	}
	if _, err := db.AddCard(ctx, a.ID, "blog", &tidings.Card{Kind: tidings.CardFunnel, Title: "F", Params: "steps=a"}); err != nil {
		t.Fatal(err)
	}
	cards, _ := db.ListCards(ctx, a.ID, "shop")
	if c := cards[0]; c.ID != ids[0] || c.Kind != tidings.CardChart || c.Params != "q=event%3A%22Signed+up%22&bucket=day" || !c.Wide || cards[1].Wide {
		t.Fatalf("stored %+v", c)
	}
	if err := db.UpdateCard(ctx, a.ID, "shop", &tidings.Card{ID: ids[1], Title: "B2", Params: "measure=users", Wide: true}); err != nil {
		t.Fatal(err)
	}
	cards, _ = db.ListCards(ctx, a.ID, "shop")
	if c := cards[1]; c.Title != "B2" || c.Params != "measure=users" || !c.Wide || c.Kind != tidings.CardChart || c.Position != 1 {
		t.Fatalf("updated %+v", c)
	}
	steps := []struct {
		id   int64
		by   int
		want string
	}{
		{ids[2], -1, "[A C B2 D]"},
		{ids[2], -1, "[C A B2 D]"},
		{ids[2], -1, "[C A B2 D]"}, // first: it stays
		{ids[3], 1, "[C A B2 D]"},  // last: it stays
		{ids[0], 1, "[C B2 A D]"},
		{ids[0], 1, "[C B2 D A]"},
	}
	for _, s := range steps {
		if err := db.MoveCard(ctx, a.ID, "shop", s.id, s.by); err != nil {
			t.Fatal(err)
		}
		if got := fmt.Sprint(board(t, db, a.ID, "shop")); got != s.want {
			t.Fatalf("moved %d by %d: %s, want %s", s.id, s.by, got, s.want)
		}
	}
	if err := db.DeleteCard(ctx, a.ID, "shop", ids[1]); err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(board(t, db, a.ID, "shop")); got != "[C D A]" {
		t.Fatalf("after a delete: %s", got)
	}
	c, err := db.AddCard(ctx, a.ID, "shop", &tidings.Card{Kind: tidings.CardChart, Title: "E", Params: ""})
	if err != nil || c.Position != 3 {
		t.Fatalf("added after a delete: %+v, %v", c, err)
	}
	if got := fmt.Sprint(board(t, db, a.ID, "shop")); got != "[C D A E]" {
		t.Fatalf("after an add: %s", got)
	}
	if err := db.DeleteCard(ctx, a.ID, "shop", ids[1]); tidings.ErrorCode(err) != tidings.ENotFound {
		t.Fatalf("deleted twice: %v", err)
	}
	// Deleting the project deletes its board.
	if err := db.DeleteProject(ctx, a.ID, "blog"); err != nil {
		t.Fatal(err)
	}
	if _, err := db.ListCards(ctx, a.ID, "blog"); tidings.ErrorCode(err) != tidings.EProjectNotFound {
		t.Fatalf("a deleted project's board: %v", err)
	}
}

// TestBoardTenancy: a card is found only on its own project's board, of its own
// account; a project of another account is not found.
func TestBoardTenancy(t *testing.T) {
	t.Parallel()
	db := open(t)
	ctx := context.Background()
	a, _ := db.CreateAccount(ctx, "acme")
	b, _ := db.CreateAccount(ctx, "globex")
	db.CreateProject(ctx, a.ID, "shop")
	db.CreateProject(ctx, a.ID, "blog")
	db.CreateProject(ctx, b.ID, "shop")
	mine, err := db.AddCard(ctx, a.ID, "shop", &tidings.Card{Kind: tidings.CardChart, Title: "Mine", Params: "x=1"})
	if err != nil {
		t.Fatal(err)
	}
	theirs, err := db.AddCard(ctx, b.ID, "shop", &tidings.Card{Kind: tidings.CardChart, Title: "Theirs", Params: "x=2"})
	if err != nil {
		t.Fatal(err)
	}
	db.AddCard(ctx, b.ID, "shop", &tidings.Card{Kind: tidings.CardChart, Title: "Theirs too", Params: "x=3"})
	for _, c := range []struct {
		account int64
		project string
		id      int64
		code    string
	}{
		{b.ID, "shop", mine.ID, tidings.ENotFound},   // another account's card, by the same project name
		{a.ID, "blog", mine.ID, tidings.ENotFound},   // another project's card
		{a.ID, "shop", theirs.ID, tidings.ENotFound}, // another account's card, by id
		{b.ID, "blog", mine.ID, tidings.EProjectNotFound},
	} {
		errs := map[string]error{
			"update": db.UpdateCard(ctx, c.account, c.project, &tidings.Card{ID: c.id, Title: "Hacked", Params: "x=9"}),
			"move":   db.MoveCard(ctx, c.account, c.project, c.id, 1),
			"delete": db.DeleteCard(ctx, c.account, c.project, c.id),
		}
		for op, err := range errs {
			if tidings.ErrorCode(err) != c.code {
				t.Errorf("%s card %d in %d/%s: %v, want %s", op, c.id, c.account, c.project, err, c.code)
			}
		}
	}
	if _, err := db.AddCard(ctx, b.ID, "blog", &tidings.Card{Kind: tidings.CardChart, Title: "X"}); tidings.ErrorCode(err) != tidings.EProjectNotFound {
		t.Errorf("add to another account's project: %v", err)
	}
	if _, err := db.ListCards(ctx, b.ID, "blog"); tidings.ErrorCode(err) != tidings.EProjectNotFound {
		t.Errorf("list another account's project: %v", err)
	}
	if got := fmt.Sprint(board(t, db, a.ID, "shop")); got != "[Mine]" {
		t.Errorf("acme's board: %s", got)
	}
	if got := fmt.Sprint(board(t, db, b.ID, "shop")); got != "[Theirs Theirs too]" {
		t.Errorf("globex's board: %s", got)
	}
}

// TestBoardCap: a board holds at most MaxBoardCards, also when two instances add at
// once (the project's row lock serialises them), and its positions stay dense.
func TestBoardCap(t *testing.T) {
	t.Parallel()
	p := newPair(t)
	ctx := context.Background()
	const over = 20
	var added, refused atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, tidings.MaxBoardCards+over)
	for i := range tidings.MaxBoardCards + over {
		db := p.a
		if i%2 == 1 {
			db = p.b
		}
		wg.Go(func() {
			_, err := db.AddCard(ctx, p.account.ID, "my-saas", &tidings.Card{Kind: tidings.CardChart, Title: fmt.Sprint(i), Params: "x=1"})
			switch tidings.ErrorCode(err) {
			case "":
				added.Add(1)
			case tidings.ELimitReached:
				refused.Add(1)
			default:
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if added.Load() != tidings.MaxBoardCards || refused.Load() != over {
		t.Fatalf("%d added, %d refused; want %d and %d", added.Load(), refused.Load(), tidings.MaxBoardCards, over)
	}
	titles := board(t, p.b, p.account.ID, "my-saas")
	if len(titles) != tidings.MaxBoardCards {
		t.Fatalf("the board holds %d cards", len(titles))
	}
	// Full: one more is refused; one deleted makes room for one.
	cards, _ := p.a.ListCards(ctx, p.account.ID, "my-saas")
	if _, err := p.a.AddCard(ctx, p.account.ID, "my-saas", &tidings.Card{Kind: tidings.CardFunnel, Title: "more"}); tidings.ErrorCode(err) != tidings.ELimitReached {
		t.Fatalf("a full board took a card: %v", err)
	}
	if err := p.b.DeleteCard(ctx, p.account.ID, "my-saas", cards[10].ID); err != nil {
		t.Fatal(err)
	}
	if c, err := p.a.AddCard(ctx, p.account.ID, "my-saas", &tidings.Card{Kind: tidings.CardFunnel, Title: "more"}); err != nil || c.Position != tidings.MaxBoardCards-1 {
		t.Fatalf("after a delete: %+v, %v", c, err)
	}
	// Moves and deletes at once on both instances keep the positions dense.
	cards, _ = p.a.ListCards(ctx, p.account.ID, "my-saas")
	for i, c := range cards {
		db := p.a
		if i%2 == 1 {
			db = p.b
		}
		wg.Go(func() {
			var err error
			if i%7 == 3 {
				err = db.DeleteCard(ctx, p.account.ID, "my-saas", c.ID)
			} else {
				err = db.MoveCard(ctx, p.account.ID, "my-saas", c.ID, []int{-1, 1}[i%2])
			}
			if err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if n := len(board(t, p.a, p.account.ID, "my-saas")); n != tidings.MaxBoardCards-7 {
		t.Fatalf("%d cards left, want %d", n, tidings.MaxBoardCards-7)
	}
}
