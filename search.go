package tidings

import (
	"strings"
	"time"
	"unicode"

	"golang.org/x/text/unicode/norm"
)

// Search is what a search box or the q= parameter asks for: words to find in an
// event's name, description and tag values, tag filters, and a time range.
//
//	deploy failed            both words, anywhere, any case, with or without accents
//	subscr*                  a word that starts with subscr
//	"payment failed"         the words next to each other, in this order
//	plan:pro                 the tag plan is pro (key:"two words" for spaces)
//	channel:payments         events of that channel
//	event:"Signed up"        events of that exact name (case-sensitive)
//	user:ada                 events sent with that user_id
//	priority:urgent          events of that priority (also priority:>=high, <=low, >default, <high)
//	tag:user:ada             the tag user is ada (the tag form of the field names)
//	since:7d                 events of the last 7 days (m, h, d, w)
//	after:2026-11-01         events on that day (UTC) or later
//	before:2026-11-20        events before that day
type Search struct {
	Terms []Term // all must match
	Tags  []Tag  // all must match, exactly
	// Channel, Event and User are the field filters channel:, event: and user: ("" is
	// none). Event is the whole name, compared exactly.
	Channel, Event, User string
	// MinPriority and MaxPriority are the priority: filter's bounds (0: none).
	MinPriority, MaxPriority Priority
	// Since and Until bound the event's timestamp: Since <= ts < Until; zero is open.
	Since, Until time.Time
}

// Term is a word or a phrase, folded (lower case, no accents); a phrase's words must
// follow each other. With Prefix its last word only needs to start the event's word.
type Term struct {
	Words  []string
	Prefix bool
}

// Limits of a search, so that none costs more than a bounded amount of work.
const (
	MaxSearchLength = 512 // bytes of the query
	MaxSearchTerms  = 16  // words and phrases
	MinPrefix       = 2   // letters before a *
)

// ParseSearch reads a search query. now anchors since: ranges. It returns EValidation
// (field "q") for a bad range, a too-short prefix, or a query beyond the limits.
func ParseSearch(q string, now time.Time) (Search, error) {
	var s Search
	var p Problems
	if len(q) > MaxSearchLength {
		p.Add("q", "length", "must be at most %d bytes", MaxSearchLength)
		return s, p.Err()
	}
	for _, tok := range splitQuery(q) {
		if !tok.quoted {
			if key, value, ok := strings.Cut(tok.text, ":"); ok && ValidName(key) && (value != "" || tok.valueQuoted) {
				if tok.valueQuoted {
					value = tok.value
				}
				switch key {
				case "channel", "event", "user":
					field := map[string]*string{"channel": &s.Channel, "event": &s.Event, "user": &s.User}[key]
					if *field != "" && *field != value {
						p.Add("q", key, "at most one %s: filter (got %q and %q)", key, *field, value)
					}
					*field = value
				case "priority":
					if s.MinPriority != 0 || s.MaxPriority != 0 {
						p.Add("q", "priority", "at most one priority: filter")
					}
					s.MinPriority, s.MaxPriority = parsePriorityFilter(&p, value)
				case "tag":
					k, v, ok := strings.Cut(value, ":")
					if !ok || k == "" || v == "" {
						p.Add("q", "tag", "a tag filter is tag:KEY:VALUE, as in tag:user:ada (got %q)", value)
						continue
					}
					s.Tags = append(s.Tags, Tag{Key: k, Value: v})
				case "since":
					s.Since = parseSince(&p, value, now)
				case "after":
					s.Since = parseDay(&p, "after", value)
				case "before":
					s.Until = parseDay(&p, "before", value)
				default:
					s.Tags = append(s.Tags, Tag{Key: key, Value: value})
				}
				continue
			}
		}
		text, prefix := tok.text, false
		if !tok.quoted && strings.HasSuffix(text, "*") {
			text, prefix = strings.TrimRight(text, "*"), true
		} else if tok.quoted && tok.star {
			prefix = true
		}
		words := SearchWords(text)
		if len(words) == 0 {
			continue // punctuation only: nothing to look for
		}
		if prefix && len([]rune(words[len(words)-1])) < MinPrefix {
			p.Add("q", "prefix", "a prefix needs at least %d letters before the * (got %q)", MinPrefix, tok.text)
			continue
		}
		s.Terms = append(s.Terms, Term{Words: words, Prefix: prefix})
	}
	if len(s.Terms)+len(s.Tags) > MaxSearchTerms {
		p.Add("q", "terms", "must have at most %d words, phrases and tags", MaxSearchTerms)
	}
	if !s.Since.IsZero() && !s.Until.IsZero() && !s.Since.Before(s.Until) {
		p.Add("q", "range", "the time range is empty: since/after must come before before")
	}
	return s, p.Err()
}

// Empty reports whether the search filters nothing.
func (s Search) Empty() bool {
	return len(s.Terms) == 0 && len(s.Tags) == 0 && s.Since.IsZero() && s.Until.IsZero() &&
		s.Channel == "" && s.Event == "" && s.User == "" && s.MinPriority == 0 && s.MaxPriority == 0
}

// parsePriorityFilter reads the value of priority: — LEVEL, >=LEVEL, >LEVEL, <=LEVEL
// or <LEVEL — into bounds.
func parsePriorityFilter(p *Problems, v string) (lo, hi Priority) {
	op := ""
	for _, o := range []string{">=", "<=", ">", "<", "="} {
		if strings.HasPrefix(v, o) {
			op, v = o, v[len(o):]
			break
		}
	}
	pr, ok := ParsePriority(v)
	if !ok {
		p.Add("q", "priority", `priority: takes min, low, default, high or urgent, optionally after >=, >, <= or < (as in priority:>=high; got %q)`, v)
		return 0, 0
	}
	switch op {
	case ">=":
		return pr, PriorityUrgent
	case ">":
		if pr == PriorityUrgent {
			return PriorityUrgent, PriorityMin // nothing is above urgent: empty
		}
		return pr + 1, PriorityUrgent
	case "<=":
		return PriorityMin, pr
	case "<":
		if pr == PriorityMin {
			return PriorityUrgent, PriorityMin
		}
		return PriorityMin, pr - 1
	}
	return pr, pr
}

type queryToken struct {
	text        string
	quoted      bool   // a "phrase"
	star        bool   // "phrase"* : its last word is a prefix
	valueQuoted bool   // key:"value", value in value
	value       string // the quoted value of key:"value"
}

// splitQuery cuts a query at spaces, keeping "quoted phrases" and key:"quoted values"
// whole. An unclosed quote runs to the end.
func splitQuery(q string) []queryToken {
	var out []queryToken
	for i := 0; i < len(q); {
		switch {
		case q[i] == ' ' || q[i] == '\t' || q[i] == '\n' || q[i] == '\r':
			i++
		case q[i] == '"':
			end := strings.IndexByte(q[i+1:], '"')
			if end < 0 {
				out = append(out, queryToken{text: q[i+1:], quoted: true})
				return out
			}
			t := queryToken{text: q[i+1 : i+1+end], quoted: true}
			i += end + 2
			if i < len(q) && q[i] == '*' {
				t.star = true
				i++
			}
			out = append(out, t)
		default:
			j := i
			for j < len(q) && q[j] != ' ' && q[j] != '\t' && q[j] != '\n' && q[j] != '\r' && q[j] != '"' {
				j++
			}
			t := queryToken{text: q[i:j]}
			if j < len(q) && q[j] == '"' && j > i && q[j-1] == ':' { // key:"value"
				end := strings.IndexByte(q[j+1:], '"')
				if end < 0 {
					end = len(q) - j - 1
				}
				t.valueQuoted, t.value = true, q[j+1:j+1+end]
				j += end + 2
			}
			out = append(out, t)
			i = min(j, len(q))
		}
	}
	return out
}

func parseSince(p *Problems, v string, now time.Time) time.Time {
	if len(v) >= 2 {
		n, unit := v[:len(v)-1], v[len(v)-1]
		d := map[byte]time.Duration{'m': time.Minute, 'h': time.Hour, 'd': 24 * time.Hour, 'w': 7 * 24 * time.Hour}[unit]
		if k, ok := smallNumber(n); ok && d > 0 {
			return now.Add(-time.Duration(k) * d)
		}
	}
	if t, ok := parseTime(v); ok {
		return t
	}
	p.Add("q", "since", "since must be an age like 30m, 12h, 7d or 2w, or a date like 2026-11-01 (got %q)", v)
	return time.Time{}
}

func parseDay(p *Problems, name, v string) time.Time {
	if t, ok := parseTime(v); ok {
		return t
	}
	p.Add("q", name, "%s must be a date like 2026-11-01 or a time like 2026-11-01T15:04:05Z (got %q)", name, v)
	return time.Time{}
}

// parseTime reads a day (its start, UTC) or an RFC 3339 time. A time before the
// earliest timestamp an event can have is that earliest one: a bound all the same
// (before:0001-01-01 finds nothing), never the zero time, which means "no bound".
func parseTime(v string) (time.Time, bool) {
	t, err := time.Parse("2006-01-02", v)
	if err != nil {
		t, err = time.Parse(time.RFC3339, v)
	}
	if err != nil {
		return time.Time{}, false
	}
	if t.Before(earliestTimestamp) {
		t = earliestTimestamp
	}
	return t, true
}

// smallNumber reads 1 to 99999.
func smallNumber(s string) (int, bool) {
	if s == "" || len(s) > 5 {
		return 0, false
	}
	n := 0
	for _, c := range s {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	return n, n > 0
}

// Fold is s as search compares it: lower case, accents removed ("Zürich" → "zurich").
func Fold(s string) string {
	ascii := true
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			ascii = false
			break
		}
	}
	if ascii { // no accents to take off: the common case, and 10× faster
		return strings.ToLower(s)
	}
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range norm.NFD.String(s) {
		if unicode.Is(unicode.Mn, r) {
			continue
		}
		b.WriteRune(unicode.ToLower(r))
	}
	return b.String()
}

// SearchWords splits s into folded words: runs of letters and digits. It is how both
// stored text and queries are cut, so that they agree.
func SearchWords(s string) []string {
	return strings.FieldsFunc(Fold(s), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsNumber(r) })
}

// SearchText is the text of an event that search looks at: its name, description
// and tag values.
func (e *Event) SearchText() string {
	var b strings.Builder
	b.WriteString(e.Event)
	b.WriteByte('\n')
	b.WriteString(e.Description)
	for _, t := range e.Tags {
		b.WriteByte('\n')
		b.WriteString(t.Value)
	}
	return b.String()
}

// matchesTerms reports whether every term is in words (the event's folded words).
// TermIn reports whether an event whose SearchWords are words matches the term.
func TermIn(words []string, t Term) bool { return containsTerm(words, t) }

func matchesTerms(terms []Term, words []string) bool {
	for _, t := range terms {
		if !containsTerm(words, t) {
			return false
		}
	}
	return true
}

func containsTerm(words []string, t Term) bool {
	n := len(t.Words)
	for i := 0; i+n <= len(words); i++ {
		ok := true
		for j, w := range t.Words {
			got := words[i+j]
			if j == n-1 && t.Prefix {
				ok = strings.HasPrefix(got, w)
			} else {
				ok = got == w
			}
			if !ok {
				break
			}
		}
		if ok {
			return true
		}
	}
	return false
}
