package sqlite

import (
	"fmt"
	"slices"
	"testing"

	"github.com/tidings-dev/tidings"
)

// boardTitles lists the board's titles by position, checking the positions are 0..n-1.
func boardTitles(t *testing.T, db *DB, accountID int64, project string) []string {
	t.Helper()
	cards, err := db.ListCards(t.Context(), accountID, project)
	if err != nil {
		t.Fatal(err)
	}
	titles := []string{}
	for i, c := range cards {
		if c.Position != i || c.Project != project {
			t.Fatalf("card %d of %s at position %d, project %q", i, project, c.Position, c.Project)
		}
		titles = append(titles, c.Title)
	}
	return titles
}

func wantTitles(t *testing.T, got []string, want ...string) {
	t.Helper()
	if !slices.Equal(got, want) {
		t.Fatalf("board %q, want %q", got, want)
	}
}

// A board's cards keep their order, dense: added last, moved by one, deleted closing
// the gap; and what is saved is read back as written.
func TestBoardCards(t *testing.T) {
	db, a := openShop(t)
	ctx := t.Context()
	wantTitles(t, boardTitles(t, db, a.ID, "shop"))
	var ids []int64
	for _, title := range []string{"A", "B", "C"} {
		c, err := db.AddCard(ctx, a.ID, "shop", &tidings.Card{Kind: tidings.CardChart, Title: title, Params: "measure=count&q=" + title, Wide: title == "B"})
		if err != nil {
			t.Fatal(err)
		}
		if c.ID == 0 || c.Project != "shop" || c.Position != len(ids) || c.CreatedAt.IsZero() {
			t.Fatalf("added %+v", c)
		}
		ids = append(ids, c.ID)
	}
	wantTitles(t, boardTitles(t, db, a.ID, "shop"), "A", "B", "C")
	cards, _ := db.ListCards(ctx, a.ID, "shop")
	if b := cards[1]; b.ID != ids[1] || b.Kind != tidings.CardChart || b.Params != "measure=count&q=B" || !b.Wide || cards[0].Wide {
		t.Fatalf("card B read back as %+v", b)
	}
	if err := db.UpdateCard(ctx, a.ID, "shop", &tidings.Card{ID: ids[1], Title: "B2", Params: "measure=users", Wide: false}); err != nil {
		t.Fatal(err)
	}
	cards, _ = db.ListCards(ctx, a.ID, "shop")
	if b := cards[1]; b.Title != "B2" || b.Params != "measure=users" || b.Wide || b.Kind != tidings.CardChart {
		t.Fatalf("card B updated to %+v", b)
	}
	for _, m := range []struct {
		id    int64
		by    int
		after []string
	}{
		{ids[0], -1, []string{"A", "B2", "C"}}, // first stays first
		{ids[2], +1, []string{"A", "B2", "C"}}, // last stays last
		{ids[2], -1, []string{"A", "C", "B2"}},
		{ids[0], +1, []string{"C", "A", "B2"}},
		{ids[0], +1, []string{"C", "B2", "A"}},
		{ids[1], 0, []string{"C", "B2", "A"}},
	} {
		if err := db.MoveCard(ctx, a.ID, "shop", m.id, m.by); err != nil {
			t.Fatal(err)
		}
		wantTitles(t, boardTitles(t, db, a.ID, "shop"), m.after...)
	}
	if err := db.DeleteCard(ctx, a.ID, "shop", ids[2]); err != nil {
		t.Fatal(err)
	}
	wantTitles(t, boardTitles(t, db, a.ID, "shop"), "B2", "A")
	for _, err := range []error{
		db.DeleteCard(ctx, a.ID, "shop", ids[2]),
		db.MoveCard(ctx, a.ID, "shop", ids[2], 1),
		db.UpdateCard(ctx, a.ID, "shop", &tidings.Card{ID: ids[2], Title: "x"}),
	} {
		if tidings.ErrorCode(err) != tidings.ENotFound {
			t.Fatalf("a deleted card: %v", err)
		}
	}
	if _, err := db.ListCards(ctx, a.ID, "nope"); tidings.ErrorCode(err) != tidings.EProjectNotFound {
		t.Fatalf("unknown project: %v", err)
	}
	if _, err := db.AddCard(ctx, a.ID, "nope", &tidings.Card{Kind: tidings.CardChart, Title: "x"}); tidings.ErrorCode(err) != tidings.EProjectNotFound {
		t.Fatalf("unknown project: %v", err)
	}
	// Deleting the project deletes its board.
	if err := db.DeleteProject(ctx, a.ID, "shop"); err != nil {
		t.Fatal(err)
	}
	var n int
	if err := db.read.QueryRowContext(ctx, `SELECT count(*) FROM cards`).Scan(&n); err != nil || n != 0 {
		t.Fatalf("%d cards left after the project's deletion (%v)", n, err)
	}
}

// A board holds at most MaxBoardCards; a delete makes room again.
func TestBoardCap(t *testing.T) {
	db, a := openShop(t)
	ctx := t.Context()
	var first int64
	for i := range tidings.MaxBoardCards {
		c, err := db.AddCard(ctx, a.ID, "shop", &tidings.Card{Kind: tidings.CardFunnel, Title: fmt.Sprint(i), Params: "steps=a"})
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			first = c.ID
		}
	}
	if _, err := db.AddCard(ctx, a.ID, "shop", &tidings.Card{Kind: tidings.CardChart, Title: "one more"}); tidings.ErrorCode(err) != tidings.ELimitReached {
		t.Fatalf("a card past the cap: %v", err)
	}
	if err := db.DeleteCard(ctx, a.ID, "shop", first); err != nil {
		t.Fatal(err)
	}
	c, err := db.AddCard(ctx, a.ID, "shop", &tidings.Card{Kind: tidings.CardChart, Title: "one more"})
	if err != nil || c.Position != tidings.MaxBoardCards-1 {
		t.Fatalf("after a delete: %+v, %v", c, err)
	}
	if got := boardTitles(t, db, a.ID, "shop"); len(got) != tidings.MaxBoardCards || got[0] != "1" || got[len(got)-1] != "one more" {
		t.Fatalf("board %q", got)
	}
}

// A card is its project's: another project's or another account's board cannot read,
// change, move or delete it, whatever its ID.
func TestBoardTenancy(t *testing.T) {
	db, a := openShop(t)
	ctx := t.Context()
	b, err := db.CreateAccount(ctx, "rival")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []struct {
		account int64
		name    string
	}{{b.ID, "shop"}, {a.ID, "blog"}} {
		if _, err := db.CreateProject(ctx, p.account, p.name); err != nil {
			t.Fatal(err)
		}
	}
	mine, err := db.AddCard(ctx, a.ID, "shop", &tidings.Card{Kind: tidings.CardChart, Title: "mine", Params: "q=secret"})
	if err != nil {
		t.Fatal(err)
	}
	theirs, err := db.AddCard(ctx, b.ID, "shop", &tidings.Card{Kind: tidings.CardChart, Title: "theirs"})
	if err != nil {
		t.Fatal(err)
	}
	if theirs.Position != 0 {
		t.Fatalf("another account's first card at %d", theirs.Position)
	}
	for _, o := range []struct {
		account int64
		project string
	}{{b.ID, "shop"}, {a.ID, "blog"}} {
		wantTitles(t, boardTitles(t, db, o.account, o.project), map[string][]string{"shop": {"theirs"}, "blog": {}}[o.project]...)
		for _, err := range []error{
			db.UpdateCard(ctx, o.account, o.project, &tidings.Card{ID: mine.ID, Title: "taken", Params: "q="}),
			db.MoveCard(ctx, o.account, o.project, mine.ID, -1),
			db.MoveCard(ctx, o.account, o.project, mine.ID, 1),
			db.DeleteCard(ctx, o.account, o.project, mine.ID),
		} {
			if tidings.ErrorCode(err) != tidings.ENotFound {
				t.Fatalf("account %d project %s on another's card: %v", o.account, o.project, err)
			}
		}
	}
	// Their board's move does not reach into mine either.
	if err := db.MoveCard(ctx, b.ID, "shop", theirs.ID, -1); err != nil {
		t.Fatal(err)
	}
	cards, err := db.ListCards(ctx, a.ID, "shop")
	if err != nil || len(cards) != 1 || cards[0].Title != "mine" || cards[0].Params != "q=secret" || cards[0].Position != 0 {
		t.Fatalf("my board after the others tried: %+v, %v", cards, err)
	}
	wantTitles(t, boardTitles(t, db, b.ID, "shop"), "theirs")
}

// The dump holds the board with the neutral (PostgreSQL) table's columns.
func TestBoardDump(t *testing.T) {
	db, a := openShop(t)
	ctx := t.Context()
	c, err := db.AddCard(ctx, a.ID, "shop", &tidings.Card{Kind: tidings.CardChart, Title: "t", Params: "q=", Wide: true})
	if err != nil {
		t.Fatal(err)
	}
	d, err := db.Dump(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	rows := 0
	err = d.Rows(ctx, "cards", func(cols []string, row []any) error {
		rows++
		got := map[string]any{}
		for i, col := range cols {
			got[col] = row[i]
		}
		for col, want := range map[string]any{"id": c.ID, "kind": "chart", "title": "t", "params": "q=", "wide": int64(1),
			"position": int64(0), "created_at": c.CreatedAt.UnixMilli()} {
			if v, ok := got[col].([]byte); ok {
				got[col] = string(v)
			}
			if got[col] != want {
				t.Errorf("column %s = %#v, want %#v", col, got[col], want)
			}
		}
		if _, ok := got["project_id"]; !ok {
			t.Errorf("no project_id in %v", cols)
		}
		return nil
	})
	if err != nil || rows != 1 {
		t.Fatalf("%d rows, %v", rows, err)
	}
}
