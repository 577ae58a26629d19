package web

import (
	"container/list"
	"html/template"
	"sync"

	"github.com/tidings-dev/tidings"
	"github.com/tidings-dev/tidings/internal/markdown"
)

// maxRenderedHTML bounds one rendered description (internal/markdown).
const maxRenderedHTML = markdown.MaxHTML

// renderDescription turns an event's description into safe HTML (internal/markdown).
func renderDescription(ev *tidings.Event) template.HTML { return markdown.Description(ev) }

// hasText reports whether rendered HTML shows anything.
func hasText(h template.HTML) bool { return markdown.HasText(h) }

// renderCache keeps rendered descriptions by event ID, so that an event is rendered
// once, not once per page view or per open stream. Its size is bounded in bytes; the
// least recently used entries go first.
type renderCache struct {
	mu       sync.Mutex
	maxBytes int
	bytes    int
	order    *list.List // front: most recently used
	byID     map[string]*list.Element
}

type renderEntry struct {
	id   string
	html template.HTML
}

func newRenderCache(maxBytes int) *renderCache {
	return &renderCache{maxBytes: maxBytes, order: list.New(), byID: map[string]*list.Element{}}
}

// description returns the event's rendered description, rendering it on a miss.
func (c *renderCache) description(ev *tidings.Event) template.HTML {
	if ev.Description == "" {
		return ""
	}
	c.mu.Lock()
	if el, ok := c.byID[ev.ID]; ok {
		c.order.MoveToFront(el)
		out := el.Value.(*renderEntry).html
		c.mu.Unlock()
		return out
	}
	c.mu.Unlock()
	out := renderDescription(ev) // outside the lock: renders of different events run in parallel
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.byID[ev.ID]; ok || len(out) > c.maxBytes {
		return out
	}
	c.byID[ev.ID] = c.order.PushFront(&renderEntry{id: ev.ID, html: out})
	c.bytes += len(out)
	for c.bytes > c.maxBytes {
		last := c.order.Back()
		e := last.Value.(*renderEntry)
		c.order.Remove(last)
		delete(c.byID, e.id)
		c.bytes -= len(e.html)
	}
	return out
}

// len is the number of cached descriptions.
func (c *renderCache) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.byID)
}
