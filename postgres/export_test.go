package postgres

// SetTextBudget sets how many events' search vectors db's check compares before it
// samples them (searchTextBudget).
func SetTextBudget(db *DB, n float64) { db.textBudget = n }
