package tidings

import (
	"context"
	"regexp"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/shopspring/decimal"
)

// Field limits of an insight.
const (
	MaxTitleLen     = 128
	MaxValueLen     = 256
	MaxAffixLen     = 32
	maxDecimalScale = 64 // digits after the point an increment may carry
)

// Change kinds of an insight update.
const (
	ChangeUpdate    = "update"
	ChangeIncrement = "increment"
	ChangeDecrement = "decrement"
)

// ChangeRuleMessage is said when change is missing or unknown.
const ChangeRuleMessage = `must be one of "increment", "decrement" or "update"`

// InsightChange is one insight update as a client publishes it, after decoding.
// Prefix, Suffix and Icon are nil when the client left them out: they keep their value.
type InsightChange struct {
	Project   string
	Title     string
	Value     string // the text of the value; booleans as "true"/"false"
	ValueKind string // KindString, KindNumber or KindBool
	Change    string
	Prefix    *string
	Suffix    *string
	Icon      *string
	Key       *Keyed[*Insight] // nil: no idempotency key
}

// decimalPattern is the number syntax accepted for arithmetic: what JSON allows, plus a
// leading "+" and a bare ".5" in strings, which people write in dashboards.
var decimalPattern = regexp.MustCompile(`^[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]{1,3})?$`)

// ParseDecimal parses s as an exact decimal number.
func ParseDecimal(s string) (decimal.Decimal, bool) {
	if !decimalPattern.MatchString(s) {
		return decimal.Decimal{}, false
	}
	d, err := decimal.NewFromString(s)
	if err != nil || d.Exponent() < -maxDecimalScale || d.Exponent() > MaxValueLen {
		return decimal.Decimal{}, false
	}
	return d, true
}

// FormatDecimal is the canonical text of a number: plain notation (no exponent), with
// as many decimals as the most precise operand had, so 19.99 + 0.01 is "20.00" and
// 0.1 + 0.2 is "0.3".
func FormatDecimal(d decimal.Decimal) string {
	if d.Exponent() < 0 {
		return d.StringFixed(-d.Exponent())
	}
	return d.String()
}

// Check validates c, normalising it in place (trimmed title, emoji for a shortcode,
// canonical number text), and records every problem in p.
func (c *InsightChange) Check(p *Problems) {
	CheckName(p, "project", c.Project)
	c.Title = strings.TrimSpace(c.Title)
	switch n := utf8.RuneCountInString(c.Title); {
	case n == 0:
		p.Add("title", "required", "is required")
	case n > MaxTitleLen:
		p.Add("title", "too_long", "must be at most %d characters (got %d)", MaxTitleLen, n)
	default:
		checkText(p, "title", c.Title, ruleLabel)
		checkVisible(p, "title", c.Title)
	}
	switch c.Change {
	case ChangeUpdate, ChangeIncrement, ChangeDecrement:
	case "":
		project := c.Project
		if !ValidName(project) {
			project = "NAME"
		}
		p.Add("change", "required", "is required and "+ChangeRuleMessage+`; the LogSnag SDKs' insight.track sends none: `+
			`for them, turn on "Missing change means update" for the project (Settings → Projects, or `+
			"`tidings project update %s --insight-change-default update`)", project)
	default:
		p.Add("change", "enum", ChangeRuleMessage)
	}
	c.checkValue(p)
	for _, a := range []struct {
		path string
		v    *string
	}{{"prefix", c.Prefix}, {"suffix", c.Suffix}} {
		if a.v == nil {
			continue
		}
		if utf8.RuneCountInString(*a.v) > MaxAffixLen {
			p.Add(a.path, "too_long", "must be at most %d characters", MaxAffixLen)
		}
		checkText(p, a.path, *a.v, ruleLine)
	}
	if c.Icon != nil {
		CheckIcon(p, "icon", c.Icon)
	}
}

func (c *InsightChange) checkValue(p *Problems) {
	if p.Has("value.$inc") {
		return // the decoder already said what is wrong with it
	}
	if c.ValueKind == "" {
		p.Add("value", "required", "is required")
		return
	}
	arithmetic := c.Change == ChangeIncrement || c.Change == ChangeDecrement
	if c.ValueKind == KindNumber || arithmetic {
		d, ok := ParseDecimal(c.Value)
		if !ok {
			if arithmetic {
				p.Add("value", "number", "must be a number (like 5 or \"12.50\") to %s", c.Change)
			} else {
				p.Add("value", "number", "is not a number this service can store exactly")
			}
			return
		}
		if c.ValueKind == KindNumber {
			c.Value = FormatDecimal(d)
		}
	}
	switch n := utf8.RuneCountInString(c.Value); {
	case n == 0:
		p.Add("value", "required", "must not be empty")
	case n > MaxValueLen:
		p.Add("value", "too_long", "must be at most %d characters (got %d)", MaxValueLen, n)
	default:
		checkText(p, "value", c.Value, ruleLine)
	}
}

// Insight is the current state of one insight of a project.
type Insight struct {
	Project   string
	Title     string
	Value     string
	Prefix    string
	Suffix    string
	Icon      string
	Change    string // the change that produced this state
	UpdatedAt time.Time
	// Created orders insights by creation (ListInsights fills it in): the dashboard
	// shows them in that order, the same live and after a reload.
	Created int64
}

// Apply computes the insight after change c. current is nil when the insight does not
// exist yet: increments then start from 0. Every backend calls Apply inside the
// transaction that holds the insight's row, so arithmetic is the same everywhere.
// Errors: EInsightNotNumeric when c is arithmetic and the current value is not a number;
// EValidation when the result would be longer than MaxValueLen.
func (c *InsightChange) Apply(current *Insight, now time.Time) (*Insight, error) {
	next := Insight{Project: c.Project, Title: c.Title, Change: c.Change, UpdatedAt: now}
	if current != nil {
		next.Value, next.Prefix, next.Suffix, next.Icon = current.Value, current.Prefix, current.Suffix, current.Icon
	}
	if c.Prefix != nil {
		next.Prefix = *c.Prefix
	}
	if c.Suffix != nil {
		next.Suffix = *c.Suffix
	}
	if c.Icon != nil {
		next.Icon = *c.Icon
	}
	switch c.Change {
	case ChangeUpdate:
		next.Value = c.Value
	case ChangeIncrement, ChangeDecrement:
		base := decimal.Zero
		if current != nil {
			var ok bool
			if base, ok = ParseDecimal(current.Value); !ok {
				return nil, Errorf(EInsightNotNumeric,
					"insight %q holds %q, which is not a number: send change \"update\" to replace it", c.Title, current.Value)
			}
		}
		delta, ok := ParseDecimal(c.Value)
		if !ok {
			return nil, Errorf(EValidation, "value: must be a number")
		}
		if c.Change == ChangeDecrement {
			delta = delta.Neg()
		}
		next.Value = FormatDecimal(base.Add(delta))
		if len(next.Value) > MaxValueLen {
			var p Problems
			p.Add("value", "too_long", "the result would be longer than %d characters", MaxValueLen)
			return nil, p.Err()
		}
	}
	return &next, nil
}

// InsightPoint is one accepted change in an insight's history.
type InsightPoint struct {
	Time  time.Time
	Value string
}

// InsightStore records and reads insights. Every method is scoped to one account.
type InsightStore interface {
	// ApplyInsight applies c atomically (no lost update under concurrency), records a
	// history point, and returns the insight after the change, once committed.
	// Errors: EProjectNotFound, EInsightNotNumeric, EUnavailable when closing.
	ApplyInsight(ctx context.Context, accountID int64, c *InsightChange) (*Insight, error)

	// DeleteInsight deletes an insight of the account's project with its history.
	// Errors: EProjectNotFound, ENotFound.
	DeleteInsight(ctx context.Context, accountID int64, project, title string) error

	// ListInsights returns the project's insights ordered by title.
	// Errors: EProjectNotFound.
	ListInsights(ctx context.Context, accountID int64, project string) ([]*Insight, error)

	InsightPager

	// InsightHistory returns up to limit most recent points of one insight, oldest first.
	// Errors: EProjectNotFound, ENotFound for an unknown title.
	InsightHistory(ctx context.Context, accountID int64, project, title string, limit int) ([]InsightPoint, error)
}
