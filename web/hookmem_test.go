package web_test

import (
	"context"
	"sync"
	"testing"

	"github.com/tidings-dev/tidings"
	"github.com/tidings-dev/tidings/internal/testbackend"
)

// memHooks keeps hooks in memory over a real store, until the stores keep them.
type memHooks struct {
	tidings.Store
	mu       sync.Mutex
	hooks    []*tidings.Hook
	attempts map[string][]*tidings.HookAttempt
}

func hookStore(t *testing.T) tidings.Store {
	return &memHooks{Store: testbackend.New(t), attempts: map[string][]*tidings.HookAttempt{}}
}

func (m *memHooks) CreateHook(ctx context.Context, h *tidings.Hook) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	c := *h
	m.hooks = append(m.hooks, &c)
	return nil
}
func (m *memHooks) ListHooks(ctx context.Context, a int64) ([]*tidings.Hook, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []*tidings.Hook
	for _, h := range m.hooks {
		if h.AccountID == a {
			c := *h
			out = append(out, &c)
		}
	}
	return out, nil
}
func (m *memHooks) FindHook(ctx context.Context, a int64, id string) (*tidings.Hook, error) {
	hs, _ := m.ListHooks(ctx, a)
	for _, h := range hs {
		if h.ID == id {
			return h, nil
		}
	}
	return nil, tidings.Errorf(tidings.ENotFound, "no such hook")
}
func (m *memHooks) DeleteHook(ctx context.Context, a int64, id string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	for i, h := range m.hooks {
		if h.AccountID == a && h.ID == id {
			m.hooks = append(m.hooks[:i], m.hooks[i+1:]...)
			return nil
		}
	}
	return tidings.Errorf(tidings.ENotFound, "no such hook")
}
func (m *memHooks) RecordHookAttempt(ctx context.Context, a int64, at *tidings.HookAttempt) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.attempts[at.HookID] = append([]*tidings.HookAttempt{at}, m.attempts[at.HookID]...)
	return nil
}
func (m *memHooks) ListHookAttempts(ctx context.Context, a int64, id string) ([]*tidings.HookAttempt, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.attempts[id], nil
}
