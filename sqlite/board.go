package sqlite

import (
	"context"
	"database/sql"
	"errors"

	"github.com/tidings-dev/tidings"
)

// A project's board is the cards table: its positions are dense, 0 to n-1 within the
// project, kept so by every write, each one transaction on the management writer's
// connection (as webhooks' and tokens' writes). A card is always looked up with its
// project, itself the account's: a card ID of another project is not found.

// ListCards returns the project's cards by position.
func (db *DB) ListCards(ctx context.Context, accountID int64, project string) ([]*tidings.Card, error) {
	p, err := findProject(ctx, db.reads, accountID, project)
	if err != nil {
		return nil, err
	}
	rows, err := db.read.QueryContext(ctx, `SELECT id, kind, title, params, wide, position, created_at
		FROM cards WHERE project_id = ? ORDER BY position, id`, p.ID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []*tidings.Card{}
	for rows.Next() {
		c := &tidings.Card{Project: p.Name}
		var created int64
		if err := rows.Scan(&c.ID, &c.Kind, &c.Title, &c.Params, &c.Wide, &c.Position, &created); err != nil {
			return nil, err
		}
		c.CreatedAt = fromMS(created)
		out = append(out, c)
	}
	return out, rows.Err()
}

// AddCard saves c last on the project's board, refusing a board that holds
// MaxBoardCards: counted in the write's transaction, so two adds at once cannot pass it.
func (db *DB) AddCard(ctx context.Context, accountID int64, project string, c *tidings.Card) (*tidings.Card, error) {
	out := &tidings.Card{Project: project, Kind: c.Kind, Title: c.Title, Params: c.Params, Wide: c.Wide, CreatedAt: db.stamp()}
	err := db.boardTx(ctx, accountID, project, func(tx *sql.Tx, p *tidings.Project) error {
		out.Project = p.Name
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM cards WHERE project_id = ?`, p.ID).Scan(&out.Position); err != nil {
			return err
		}
		if out.Position >= tidings.MaxBoardCards {
			return tidings.BoardFull(p.Name)
		}
		return tx.QueryRowContext(ctx, `INSERT INTO cards (project_id, kind, title, params, wide, position, created_at)
			VALUES (?, ?, ?, ?, ?, ?, ?) RETURNING id`, p.ID, out.Kind, out.Title, out.Params, out.Wide, out.Position,
			ms(out.CreatedAt)).Scan(&out.ID)
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// UpdateCard changes a card's title, question and width.
func (db *DB) UpdateCard(ctx context.Context, accountID int64, project string, c *tidings.Card) error {
	return db.boardTx(ctx, accountID, project, func(tx *sql.Tx, p *tidings.Project) error {
		res, err := tx.ExecContext(ctx, `UPDATE cards SET title = ?, params = ?, wide = ? WHERE id = ? AND project_id = ?`,
			c.Title, c.Params, c.Wide, c.ID, p.ID)
		if err != nil {
			return err
		}
		n, err := res.RowsAffected()
		if err == nil && n == 0 {
			err = tidings.CardNotFound(p.Name, c.ID)
		}
		return err
	})
}

// MoveCard swaps a card with its neighbour before (by < 0) or after (by > 0) it; at
// an end of the board it stays.
func (db *DB) MoveCard(ctx context.Context, accountID int64, project string, id int64, by int) error {
	return db.boardTx(ctx, accountID, project, func(tx *sql.Tx, p *tidings.Project) error {
		pos, err := cardPosition(ctx, tx, p, id)
		if err != nil {
			return err
		}
		switch {
		case by < 0:
			by = -1
		case by > 0:
			by = 1
		default:
			return nil
		}
		var other int64
		err = tx.QueryRowContext(ctx, `SELECT id FROM cards WHERE project_id = ? AND position = ?`, p.ID, pos+by).Scan(&other)
		if errors.Is(err, sql.ErrNoRows) {
			return nil // at an end
		}
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE cards SET position = ? WHERE id = ?`, pos, other); err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `UPDATE cards SET position = ? WHERE id = ?`, pos+by, id)
		return err
	})
}

// DeleteCard deletes a card and closes the gap it leaves.
func (db *DB) DeleteCard(ctx context.Context, accountID int64, project string, id int64) error {
	return db.boardTx(ctx, accountID, project, func(tx *sql.Tx, p *tidings.Project) error {
		pos, err := cardPosition(ctx, tx, p, id)
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM cards WHERE id = ?`, id); err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `UPDATE cards SET position = position - 1 WHERE project_id = ? AND position > ?`, p.ID, pos)
		return err
	})
}

// boardTx runs fn in one transaction with the account's project, found in it.
func (db *DB) boardTx(ctx context.Context, accountID int64, project string, fn func(tx *sql.Tx, p *tidings.Project) error) error {
	tx, err := db.write.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	p, err := findProject(ctx, tx, accountID, project)
	if err != nil {
		return err
	}
	if err := fn(tx, p); err != nil {
		return err
	}
	return tx.Commit()
}

// cardPosition is the position of the project's card id.
func cardPosition(ctx context.Context, tx *sql.Tx, p *tidings.Project, id int64) (int, error) {
	var pos int
	err := tx.QueryRowContext(ctx, `SELECT position FROM cards WHERE id = ? AND project_id = ?`, id, p.ID).Scan(&pos)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, tidings.CardNotFound(p.Name, id)
	}
	return pos, err
}
