package postgres

import (
	"encoding/json"
	"strconv"
	"strings"

	"github.com/tidings-dev/tidings"
)

// intentColumns are an event's intent fields as its row holds them: NULL for a field
// not set (no url, no actions, no key, not acknowledged).
type intentColumns struct {
	priority int16
	url      *string
	actions  *string
	key      *string
	ackBy    *string
	ackAt    *int64
}

// fill sets ev's intent fields from the row's.
func (in *intentColumns) fill(ev *tidings.Event) error {
	ev.Priority = tidings.Priority(in.priority)
	if in.url != nil {
		ev.URL = *in.url
	}
	if in.key != nil {
		ev.ThreadKey = *in.key
	}
	if in.actions != nil {
		if err := json.Unmarshal([]byte(*in.actions), &ev.Actions); err != nil {
			return err
		}
	}
	if in.ackBy != nil && in.ackAt != nil {
		ev.Ack = &tidings.Ack{By: *in.ackBy, At: fromMS(*in.ackAt)}
	}
	return nil
}

// nullText is s, or NULL when empty.
func nullText(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// actionsText is an event's actions as their column holds them: JSON, NULL for none.
func actionsText(a []tidings.Action) *string {
	if len(a) == 0 {
		return nil
	}
	b, _ := json.Marshal(a)
	s := string(b)
	return &s
}

// priorityRange is the SQL condition of a query's priority bounds on col ("" for
// none). The bounds are written as constants, not parameters, so that the planner
// sees that a range without the default priority is within events_priority's
// predicate (priority <> 3), whatever plan it keeps for the statement; the predicate
// itself is repeated so that the proof is a plain match.
func priorityRange(col string, lo, hi tidings.Priority) string {
	if lo == 0 && hi == 0 {
		return ""
	}
	if lo == 0 {
		lo = tidings.PriorityMin
	}
	if hi == 0 {
		hi = tidings.PriorityUrgent
	}
	var sb strings.Builder
	if lo == hi {
		sb.WriteString(` AND ` + col + ` = ` + strconv.Itoa(int(lo)))
	} else {
		sb.WriteString(` AND ` + col + ` BETWEEN ` + strconv.Itoa(int(lo)) + ` AND ` + strconv.Itoa(int(hi)))
	}
	if tidings.PriorityDefault < lo || tidings.PriorityDefault > hi {
		sb.WriteString(` AND ` + col + ` <> ` + strconv.Itoa(int(tidings.PriorityDefault)))
	}
	return sb.String()
}

// emptyPriority reports whether a query's priority bounds admit no priority.
func emptyPriority(q tidings.EventQuery) bool {
	return q.MaxPriority != 0 && q.MinPriority > q.MaxPriority
}
