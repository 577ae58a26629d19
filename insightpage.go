package tidings

import (
	"context"
	"strconv"
)

// Page sizes of insight lists: GET /v1/insights and the dashboard's insights page.
const (
	DefaultInsightPage = 100
	MaxInsightPage     = 100
)

// InsightQuery asks for one page of a project's insights.
type InsightQuery struct {
	Project string
	// ByCreation orders the insights as they were created (the dashboard's order: new
	// ones join at the end) instead of by title (the API's).
	ByCreation bool
	// After is the Next of the page before; "" asks for the first page.
	After string
	Limit int // 1 to MaxInsightPage
}

// InsightPage is one page of insights; Next is "" on the last page.
type InsightPage struct {
	Insights []*Insight
	Next     string
}

// InsightPager pages through a project's insights.
type InsightPager interface {
	// PageInsights returns up to q.Limit insights after q.After, in q's order. Each
	// insight is on exactly one page while none is created or deleted, and a page
	// stays valid when others are: Next names a place in the order, not an offset.
	// Errors: EProjectNotFound, EValidation for a malformed After.
	PageInsights(ctx context.Context, accountID int64, q InsightQuery) (*InsightPage, error)
}

// InsightCursor is q.After as a store compares it: a title, or for ByCreation the
// creation order (Insight.Created) as a number. Errors: EValidation.
func InsightCursor(q InsightQuery) (any, error) {
	if !q.ByCreation {
		return q.After, nil
	}
	if q.After == "" {
		return int64(0), nil
	}
	n, err := strconv.ParseInt(q.After, 10, 64)
	if err != nil || n < 0 {
		var p Problems
		p.Add("after", "format", "must be the next of the page before")
		return nil, p.Err()
	}
	return n, nil
}

// NewInsightPage makes a page of up to q.Limit+1 insights read after the cursor: the
// one past the limit only says there is a next page.
func NewInsightPage(q InsightQuery, list []*Insight) *InsightPage {
	page := &InsightPage{Insights: list}
	if len(list) > q.Limit {
		page.Insights = list[:q.Limit]
		last := page.Insights[q.Limit-1]
		page.Next = last.Title
		if q.ByCreation {
			page.Next = strconv.FormatInt(last.Created, 10)
		}
	}
	if page.Insights == nil {
		page.Insights = []*Insight{}
	}
	return page
}
