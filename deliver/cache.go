package deliver

import (
	"context"
	"sync"
	"time"

	"github.com/tidings-dev/tidings"
)

// eventCache keeps recently sent events for a few seconds: one notify event goes to
// every device of an account, and each job would otherwise read it again.
type eventCache struct {
	mu   sync.Mutex
	byID map[string]cachedEvent
}

type cachedEvent struct {
	ev   *tidings.Event
	read time.Time
}

const (
	eventsFresh    = 10 * time.Second
	maxEventsCache = 1024
)

func (c *eventCache) get(ctx context.Context, st tidings.Store, accountID int64, id string, now time.Time) (*tidings.Event, error) {
	c.mu.Lock()
	if e, ok := c.byID[id]; ok && now.Sub(e.read) < eventsFresh && e.ev != nil {
		c.mu.Unlock()
		return e.ev, nil
	}
	c.mu.Unlock()
	ev, err := st.FindEventByID(ctx, accountID, id)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.byID == nil || len(c.byID) >= maxEventsCache {
		c.byID = map[string]cachedEvent{} // bounded: start afresh
	}
	c.byID[id] = cachedEvent{ev: ev, read: now}
	return ev, nil
}

// targetCache keeps each account's devices and preferences for a second: a burst of
// notify events would otherwise read them once per event. A device removed or a mute
// set counts from the next second on.
type targetCache struct {
	mu       sync.Mutex
	accounts map[int64]*accountTargets
}

type accountTargets struct {
	read   time.Time
	subs   []*tidings.PushSubscription
	prefs  map[int64]*tidings.NotifyPrefs
	emails map[int64]string // the members' emails by user ID, for the recipients rule
}

const targetsFresh = time.Second

// sub finds a device of the account, from the cache when it is fresh.
func (c *targetCache) sub(ctx context.Context, st tidings.Store, accountID int64, id string, now time.Time) (*tidings.PushSubscription, error) {
	if t, err := c.get(ctx, st, accountID, now); err == nil {
		for _, s := range t.subs {
			if s.ID == id {
				return s, nil
			}
		}
	}
	return st.FindPushSubscription(ctx, id)
}

func (c *targetCache) get(ctx context.Context, st tidings.Store, accountID int64, now time.Time) (*accountTargets, error) {
	c.mu.Lock()
	if c.accounts == nil {
		c.accounts = map[int64]*accountTargets{}
	}
	t := c.accounts[accountID]
	c.mu.Unlock()
	if t != nil && now.Sub(t.read) < targetsFresh {
		return t, nil
	}
	subs, err := st.AccountPushSubscriptions(ctx, accountID)
	if err != nil {
		return nil, err
	}
	prefs, err := st.AccountNotifyPrefs(ctx, accountID)
	if err != nil {
		return nil, err
	}
	users, err := st.ListUsers(ctx, accountID)
	if err != nil {
		return nil, err
	}
	emails := make(map[int64]string, len(users))
	for _, u := range users {
		emails[u.ID] = u.Email
	}
	t = &accountTargets{read: now, subs: subs, prefs: prefs, emails: emails}
	c.mu.Lock()
	defer c.mu.Unlock()
	for id, old := range c.accounts { // bounded: stale entries go
		if now.Sub(old.read) > time.Minute {
			delete(c.accounts, id)
		}
	}
	c.accounts[accountID] = t
	return t, nil
}

// recipientCache keeps who is notified of each project and channel for as long as the
// targets: a burst of events reads them once a second, and a change counts from the
// next second on. Workers that miss the same entry at once wait for one read.
type recipientCache struct {
	mu   sync.Mutex
	byCh map[recipientKey]*cachedRecipients
}

type recipientKey struct {
	account          int64
	project, channel string
}

type cachedRecipients struct {
	mu   sync.Mutex // held while it is read from the store
	r    tidings.Recipients
	read time.Time
}

const maxRecipientsCache = 4096

// get returns the recipients of the channel's events (its own setting or its
// project's). A project or channel deleted meanwhile has no setting: everyone, as
// before recipients existed (its events are going too).
func (c *recipientCache) get(ctx context.Context, st tidings.Store, accountID int64, project, channel string, now time.Time) (tidings.Recipients, error) {
	k := recipientKey{accountID, project, channel}
	c.mu.Lock()
	if c.byCh == nil || len(c.byCh) >= maxRecipientsCache {
		c.byCh = map[recipientKey]*cachedRecipients{} // bounded: start afresh
	}
	e := c.byCh[k]
	if e == nil {
		e = &cachedRecipients{}
		c.byCh[k] = e
	}
	c.mu.Unlock()
	e.mu.Lock()
	defer e.mu.Unlock()
	if !e.read.IsZero() && now.Sub(e.read) < targetsFresh && now.Sub(e.read) >= 0 {
		return e.r, nil
	}
	r, _, err := st.RecipientsOf(ctx, accountID, project, channel)
	switch tidings.ErrorCode(err) {
	case "":
	case tidings.EProjectNotFound, tidings.EChannelNotFound:
		r = tidings.Everyone
	default:
		return tidings.Recipients{}, err
	}
	e.r, e.read = r, now
	return r, nil
}

// routeCache keeps each account's members' routes for as long as the targets: a burst
// of events reads them once a second, and a change counts from the next second on.
type routeCache struct {
	mu       sync.Mutex
	accounts map[int64]*cachedRoutes
}

type cachedRoutes struct {
	mu     sync.Mutex // held while it is read from the store
	routes []*tidings.MemberRoute
	read   time.Time
}

const maxRoutesCache = 4096

// get returns every saved route of the account's members (tidings.RoutesFor resolves
// one member's for a channel).
func (c *routeCache) get(ctx context.Context, st tidings.Store, accountID int64, now time.Time) ([]*tidings.MemberRoute, error) {
	c.mu.Lock()
	if c.accounts == nil || len(c.accounts) >= maxRoutesCache {
		c.accounts = map[int64]*cachedRoutes{} // bounded: start afresh
	}
	e := c.accounts[accountID]
	if e == nil {
		e = &cachedRoutes{}
		c.accounts[accountID] = e
	}
	c.mu.Unlock()
	e.mu.Lock()
	defer e.mu.Unlock()
	if !e.read.IsZero() && now.Sub(e.read) < targetsFresh && now.Sub(e.read) >= 0 {
		return e.routes, nil
	}
	routes, err := st.AccountRoutes(ctx, accountID)
	if err != nil {
		return nil, err
	}
	e.routes, e.read = routes, now
	return routes, nil
}
