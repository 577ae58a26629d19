package tidings

import (
	"context"
	"time"
)

// A project's board is its Charts page: saved charts and funnels in the order a
// member arranged them, wide or narrow, the same for every member of the team.

// Kinds of a board's card.
const (
	CardChart  = "chart"
	CardFunnel = "funnel"
)

// MaxBoardCards is how many charts and funnels a project's board may hold.
const MaxBoardCards = 50

// Card is a saved chart or funnel. Params is its question as a URL query (the
// parameters of GET /v1/charts/query or /v1/funnels/query, with display and range),
// checked before it is saved: the store keeps it as written.
type Card struct {
	ID        int64
	Project   string
	Kind      string // CardChart or CardFunnel
	Title     string
	Params    string
	Wide      bool
	Position  int // 0 is first
	CreatedAt time.Time
}

// MaxCardTitle and MaxCardParams bound a card's title (characters) and question (bytes).
const (
	MaxCardTitle  = 100
	MaxCardParams = 4096
)

// BoardStore keeps the projects' boards.
type BoardStore interface {
	// ListCards returns the project's cards by position. Errors: EProjectNotFound.
	ListCards(ctx context.Context, accountID int64, project string) ([]*Card, error)
	// AddCard saves c (Kind, Title, Params, Wide) last on the project's board and
	// returns it stored. Errors: EProjectNotFound, ELimitReached (MaxBoardCards).
	AddCard(ctx context.Context, accountID int64, project string, c *Card) (*Card, error)
	// UpdateCard changes a card's Title, Params and Wide. Errors: EProjectNotFound, ENotFound.
	UpdateCard(ctx context.Context, accountID int64, project string, c *Card) error
	// MoveCard moves a card one place earlier (by -1) or later (+1) on the board; at
	// an end it stays. Errors: EProjectNotFound, ENotFound.
	MoveCard(ctx context.Context, accountID int64, project string, id int64, by int) error
	// DeleteCard deletes a card. Errors: EProjectNotFound, ENotFound.
	DeleteCard(ctx context.Context, accountID int64, project string, id int64) error
}

// CardNotFound is the error of a card that is not on the project's board.
func CardNotFound(project string, id int64) error {
	return Errorf(ENotFound, "no chart %d on project %q's board", id, project)
}

// BoardFull refuses a card on a board that holds MaxBoardCards.
func BoardFull(project string) error {
	return Errorf(ELimitReached, "project %q's board holds %d charts and funnels, the most it may: delete one you no longer use", project, MaxBoardCards)
}
