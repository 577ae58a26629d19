package deliver_test

import (
	"context"
	"strings"
	"sync"
	"time"

	"github.com/tidings-dev/tidings"
)

// withRoutes is the store with routes: its own, or memRoutes over it while its
// RouteStore is the placeholder (PostgreSQL's until its helper's branch lands).
func withRoutes(st outboxStore, accountID int64) outboxStore {
	err := st.SetEscalation(context.Background(), accountID, "my-saas", 0)
	if err != nil && strings.Contains(err.Error(), "not in this store yet") {
		return &memRoutes{outboxStore: st}
	}
	return st
}

// memRoutes keeps members' routes (and projects' escalation) in memory while the stores' RouteStore is a
// placeholder on main (issue 39: the stores' helpers land it). TEMPORARY: deleted
// when `git merge main` brings the stores' routes.
type memRoutes struct {
	outboxStore
	mu         sync.Mutex
	routes     []*tidings.MemberRoute
	escalation map[string]time.Duration
}

func (s *memRoutes) SetRoutes(ctx context.Context, accountID, userID int64, project, channel string, r *tidings.Routes) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	kept := s.routes[:0:0]
	for _, m := range s.routes {
		if m.UserID != userID || m.Project != project || m.Channel != channel {
			kept = append(kept, m)
		}
	}
	if r != nil {
		kept = append(kept, &tidings.MemberRoute{UserID: userID, Project: project, Channel: channel, Routes: *r})
	}
	s.routes = kept
	return nil
}

func (s *memRoutes) AccountRoutes(ctx context.Context, accountID int64) ([]*tidings.MemberRoute, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]*tidings.MemberRoute(nil), s.routes...), nil
}

func (s *memRoutes) SetEscalation(ctx context.Context, accountID int64, project string, after time.Duration) error {
	if err := tidings.CheckEscalateAfter(after); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.escalation == nil {
		s.escalation = map[string]time.Duration{}
	}
	s.escalation[project] = after
	return nil
}

func (s *memRoutes) FindProject(ctx context.Context, accountID int64, name string) (*tidings.Project, error) {
	p, err := s.outboxStore.FindProject(ctx, accountID, name)
	if err == nil {
		s.mu.Lock()
		p.EscalateAfter = s.escalation[name]
		s.mu.Unlock()
	}
	return p, err
}
