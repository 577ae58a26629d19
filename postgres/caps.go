package postgres

import (
	"context"

	"github.com/tidings-dev/tidings"
)

// The caps of a project (tidings.MaxChannelsPerProject, MaxInsightsPerProject) hold
// across instances and the CLI: whoever creates a channel or an insight first locks
// the project's row, then counts. FOR NO KEY UPDATE does not block the FOR KEY SHARE
// locks that inserting events and insights takes on it: only creations wait for each
// other, and only in the same project.
const (
	sqlLockProject   = `SELECT 1 FROM projects WHERE id = $1 FOR NO KEY UPDATE`
	sqlCountChannels = `SELECT count(*) FROM channels WHERE project_id = $1`
	sqlCountInsights = `SELECT count(*) FROM insights WHERE project_id = $1`
	sqlInsightExists = `SELECT EXISTS (SELECT 1 FROM insights WHERE project_id = $1 AND title = $2)`
)

// lockedCount locks project p for creations and returns what count counts, read
// after the lock: it sees every creation committed before.
func lockedCount(ctx context.Context, q querier, p *tidings.Project, count string) (int, error) {
	var one, n int
	if err := q.QueryRow(ctx, sqlLockProject, p.ID).Scan(&one); err != nil {
		if noRows(err) {
			return 0, tidings.ProjectNotFound(p.Name)
		}
		return 0, err
	}
	err := q.QueryRow(ctx, count, p.ID).Scan(&n)
	return n, err
}

// roomForChannel refuses a new channel of a full project. It returns the channel's id
// when another transaction created it while this one waited for the lock.
func roomForChannel(ctx context.Context, q querier, p *tidings.Project, name string) (int64, error) {
	n, err := lockedCount(ctx, q, p, sqlCountChannels)
	if err != nil {
		return 0, err
	}
	var id int64
	err = q.QueryRow(ctx, sqlFindChannel, p.ID, name).Scan(&id)
	switch {
	case err == nil:
		return id, nil
	case !noRows(err):
		return 0, err
	case n >= tidings.MaxChannelsPerProject:
		return 0, tidings.ChannelLimitReached(p.Name, name, tidings.MaxChannelsPerProject)
	}
	return 0, nil
}

// roomForInsight refuses a change that would create an insight in a full project.
// Changing an insight that exists needs no lock.
func roomForInsight(ctx context.Context, q querier, p *tidings.Project, title string) error {
	exists := false
	if err := q.QueryRow(ctx, sqlInsightExists, p.ID, title).Scan(&exists); err != nil || exists {
		return err
	}
	n, err := lockedCount(ctx, q, p, sqlCountInsights)
	if err != nil {
		return err
	}
	if n < tidings.MaxInsightsPerProject {
		return nil
	}
	// Created by another transaction while this one waited: an update.
	if err := q.QueryRow(ctx, sqlInsightExists, p.ID, title).Scan(&exists); err != nil || exists {
		return err
	}
	return tidings.InsightLimitReached(p.Name, title, tidings.MaxInsightsPerProject)
}
