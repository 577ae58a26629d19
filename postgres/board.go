package postgres

import (
	"context"

	"github.com/jackc/pgx/v5"

	"github.com/tidings-dev/tidings"
)

// A project's board: its cards at dense positions 0 to n-1. Every change of the
// positions (add, move, delete) first locks the project's row, as the caps of
// channels and insights do (caps.go): across instances, two adds cannot both see room
// for the last card, nor two changes give one place to two cards.

const (
	cardFields     = `id, kind, title, params, wide, position, created_at`
	sqlCountCards  = `SELECT count(*) FROM cards WHERE project_id = $1`
	sqlCardPlace   = `SELECT position FROM cards WHERE id = $1 AND project_id = $2`
	sqlInsertCard  = `INSERT INTO cards (project_id, kind, title, params, wide, position, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING id`
	sqlUpdateCard  = `UPDATE cards SET title = $3, params = $4, wide = $5 WHERE id = $1 AND project_id = $2`
	sqlDeleteCard  = `DELETE FROM cards WHERE id = $1 AND project_id = $2 RETURNING position`
	sqlCloseGap    = `UPDATE cards SET position = position - 1 WHERE project_id = $1 AND position > $2`
	sqlSwapCards   = `UPDATE cards SET position = CASE WHEN id = $1 THEN $4::int ELSE $3::int END WHERE project_id = $2 AND (id = $1 OR position = $4)`
	sqlNeighbourAt = `SELECT EXISTS (SELECT 1 FROM cards WHERE project_id = $1 AND position = $2)`
)

func scanCard(project string) func(pgx.Row) (*tidings.Card, error) {
	return func(r pgx.Row) (*tidings.Card, error) {
		c := &tidings.Card{Project: project}
		var created int64
		err := r.Scan(&c.ID, &c.Kind, &c.Title, &c.Params, &c.Wide, &c.Position, &created)
		c.CreatedAt = fromMS(created)
		return c, err
	}
}

// ListCards returns the project's cards by position.
func (db *DB) ListCards(ctx context.Context, accountID int64, project string) ([]*tidings.Card, error) {
	p, err := findProject(ctx, db.pool, accountID, project)
	if err != nil {
		return nil, err
	}
	return query(ctx, db.pool, scanCard(project), `SELECT `+cardFields+` FROM cards WHERE project_id = $1 ORDER BY position, id`, p.ID)
}

// AddCard saves c last on the project's board, unless the board is full.
func (db *DB) AddCard(ctx context.Context, accountID int64, project string, c *tidings.Card) (*tidings.Card, error) {
	out := &tidings.Card{Project: project, Kind: c.Kind, Title: c.Title, Params: c.Params, Wide: c.Wide, CreatedAt: db.stamp()}
	err := db.inTx(ctx, func(tx pgx.Tx) error {
		p, err := findProject(ctx, tx, accountID, project)
		if err != nil {
			return err
		}
		n, err := lockedCount(ctx, tx, p, sqlCountCards)
		if err != nil {
			return err
		}
		if n >= tidings.MaxBoardCards {
			return tidings.BoardFull(project)
		}
		out.Position = n
		return tx.QueryRow(ctx, sqlInsertCard, p.ID, out.Kind, out.Title, out.Params, out.Wide, n, ms(out.CreatedAt)).Scan(&out.ID)
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// UpdateCard changes a card's title, question and width; its place stays.
func (db *DB) UpdateCard(ctx context.Context, accountID int64, project string, c *tidings.Card) error {
	p, err := findProject(ctx, db.pool, accountID, project)
	if err != nil {
		return err
	}
	tag, err := db.exec(ctx, sqlUpdateCard, c.ID, p.ID, c.Title, c.Params, c.Wide)
	if err != nil {
		return err
	}
	if tag.RowsAffected() == 0 {
		return tidings.CardNotFound(project, c.ID)
	}
	return nil
}

// MoveCard swaps a card with its neighbour before (by < 0) or after (by > 0) it; at
// an end of the board it stays.
func (db *DB) MoveCard(ctx context.Context, accountID int64, project string, id int64, by int) error {
	return db.inTx(ctx, func(tx pgx.Tx) error {
		p, err := findProject(ctx, tx, accountID, project)
		if err != nil {
			return err
		}
		if err := lockBoard(ctx, tx, p); err != nil {
			return err
		}
		var at int
		if err := tx.QueryRow(ctx, sqlCardPlace, id, p.ID).Scan(&at); err != nil {
			return notFound(err, tidings.CardNotFound(project, id))
		}
		to := at
		switch {
		case by < 0:
			to--
		case by > 0:
			to++
		}
		if to == at {
			return nil
		}
		var exists bool
		if err := tx.QueryRow(ctx, sqlNeighbourAt, p.ID, to).Scan(&exists); err != nil || !exists {
			return err // at an end: it stays
		}
		_, err = tx.Exec(ctx, sqlSwapCards, id, p.ID, at, to)
		return err
	})
}

// DeleteCard deletes a card and closes the gap it leaves.
func (db *DB) DeleteCard(ctx context.Context, accountID int64, project string, id int64) error {
	return db.inTx(ctx, func(tx pgx.Tx) error {
		p, err := findProject(ctx, tx, accountID, project)
		if err != nil {
			return err
		}
		if err := lockBoard(ctx, tx, p); err != nil {
			return err
		}
		var at int
		if err := tx.QueryRow(ctx, sqlDeleteCard, id, p.ID).Scan(&at); err != nil {
			return notFound(err, tidings.CardNotFound(project, id))
		}
		_, err = tx.Exec(ctx, sqlCloseGap, p.ID, at)
		return err
	})
}

// lockBoard locks the project's row for a change of its cards' places.
func lockBoard(ctx context.Context, q querier, p *tidings.Project) error {
	var one int
	err := q.QueryRow(ctx, sqlLockProject, p.ID).Scan(&one)
	return notFound(err, tidings.ProjectNotFound(p.Name))
}

var _ tidings.BoardStore = (*DB)(nil)
