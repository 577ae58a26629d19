package hooks

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"net/url"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/tidings-dev/tidings"
)

// Providers' strings (commit messages, alert labels, product names) are cleaned and
// cut to the event's bounds here, so that one hostile or long string cannot make the
// whole delivery fail NewEvent.Check.

// dropped reports the characters a label or line never keeps: controls (line breaks
// included), bidi controls, and the invisible format characters.
func dropped(r rune) bool {
	return r < 0x20 || r >= 0x7F && r <= 0x9F || r >= 0x202A && r <= 0x202E || r >= 0x2066 && r <= 0x2069 ||
		unicode.Is(unicode.Cf, r)
}

// cut returns s at most max runes long, ending in "…" when it was cut.
func cut(s string, max int) string {
	if utf8.RuneCountInString(s) <= max {
		return s
	}
	n := 0
	for i := range s {
		if n == max-1 {
			return strings.TrimRightFunc(s[:i], unicode.IsSpace) + "…"
		}
		n++
	}
	return s
}

// line cleans s into one line of at most max runes: invalid UTF-8 replaced, controls
// and direction marks dropped, white space runs made one space.
func line(s string, max int) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	var b strings.Builder
	space := false
loop:
	for _, r := range s {
		switch {
		case unicode.IsSpace(r):
			space = b.Len() > 0
		case dropped(r):
		default:
			if space {
				b.WriteByte(' ')
				space = false
			}
			b.WriteRune(r)
			if b.Len() > 4*max+8 {
				break loop
			}
		}
	}
	return cut(b.String(), max)
}

// label is an event name: a cleaned line, or fallback when nothing visible is left.
func label(s, fallback string) string {
	if s = line(s, tidings.MaxEventNameLen); s == "" || !strings.ContainsFunc(s, visible) {
		return fallback
	}
	return s
}

func visible(r rune) bool {
	switch r {
	case 0x115F, 0x1160, 0x3164, 0xFFA0, 0x2800, 0x180E:
		return false
	}
	return !unicode.IsSpace(r) && !(r >= 0xFE00 && r <= 0xFE0F)
}

// text is a description: line breaks kept (as LF), other controls and direction
// marks dropped, at most MaxDescriptionLen runes.
func text(s string) string {
	s = tidings.NormalizeNewlines(strings.ToValidUTF8(s, "\uFFFD"))
	s = strings.Map(func(r rune) rune {
		if r == '\n' || r == '\t' {
			return r
		}
		if dropped(r) {
			return -1
		}
		return r
	}, s)
	return cut(strings.TrimSpace(s), tidings.MaxDescriptionLen)
}

// userID is a user id from a provider: one visible line of at most MaxUserIDLen.
func userID(s string) string {
	s = line(s, tidings.MaxUserIDLen)
	if !strings.ContainsFunc(s, visible) || strings.HasSuffix(s, "…") {
		return "" // an id that was cut is another id: none is better
	}
	return s
}

// threadKey is an event's key: one visible line of at most MaxKeyLen.
func threadKey(s string) string {
	s = line(s, tidings.MaxKeyLen)
	if !strings.ContainsFunc(s, visible) {
		return ""
	}
	return s
}

// tagKey turns a provider's name (a label "alertname", "k8s_namespace") into a tag
// key by the naming rule: lower case, runs of anything else one dash; "" when
// nothing is left.
func tagKey(s string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(s) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			sep := dash && b.Len() > 0
			if n := b.Len() + 1; n > tidings.NameMaxLen || sep && n+1 > tidings.NameMaxLen {
				break
			}
			if sep {
				b.WriteByte('-')
			}
			dash = false
			b.WriteRune(r)
		} else {
			dash = true
		}
	}
	return strings.TrimRight(b.String(), "-")
}

// link is a URL for the event's tap when it is an absolute http(s) URL short enough.
func link(s string) string {
	if len(s) > tidings.MaxURLLen || strings.ContainsFunc(s, func(r rune) bool { return r <= ' ' || r == 0x7f }) {
		return ""
	}
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return ""
	}
	var p tidings.Problems
	tidings.CheckLink(&p, "url", s)
	if p.Err() != nil {
		return ""
	}
	return s
}

// tagger builds an event's tags: cleaned keys and values, each key once, at most
// MaxTags; empty values are left out.
type tagger struct{ tags tidings.Tags }

func (t *tagger) add(key, value string) {
	key = tagKey(key)
	value = line(value, tidings.MaxTagValueLen)
	if key == "" || value == "" || len(t.tags) >= tidings.MaxTags {
		return
	}
	if _, ok := t.tags.Get(key); ok {
		return
	}
	t.tags = append(t.tags, tidings.Tag{Key: key, Kind: tidings.KindString, Value: value})
}

func (t *tagger) addNumber(key string, n int64) {
	key = tagKey(key)
	if _, ok := t.tags.Get(key); ok || key == "" || len(t.tags) >= tidings.MaxTags {
		return
	}
	t.tags = append(t.tags, tidings.Tag{Key: key, Kind: tidings.KindNumber, Value: strconv.FormatInt(n, 10)})
}

func (t *tagger) addBool(key string, v bool) {
	key = tagKey(key)
	if _, ok := t.tags.Get(key); ok || len(t.tags) >= tidings.MaxTags {
		return
	}
	s := "false"
	if v {
		s = "true"
	}
	t.tags = append(t.tags, tidings.Tag{Key: key, Kind: tidings.KindBool, Value: s})
}

// checkBearer holds when the hook has no secret, or when the request carries it as
// "Authorization: Bearer SECRET" (or, for Grafana's basic auth, as the password).
func checkBearer(h *tidings.Hook, r *Request, basic bool) error {
	if h.Secret == "" {
		return nil
	}
	auth := r.Header.Get("Authorization")
	if auth == "" {
		return Unauthorized("missing Authorization header (the hook has a secret: send it as a bearer token)")
	}
	scheme, cred, _ := strings.Cut(auth, " ")
	cred = strings.TrimSpace(cred)
	switch {
	case strings.EqualFold(scheme, "Bearer"):
	case basic && strings.EqualFold(scheme, "Basic"):
		raw, err := base64.StdEncoding.DecodeString(cred)
		if err != nil {
			return Unauthorized("malformed basic credentials")
		}
		_, cred, _ = strings.Cut(string(raw), ":")
	default:
		return Unauthorized("the Authorization header is not a bearer token")
	}
	if subtle.ConstantTimeCompare([]byte(cred), []byte(h.Secret)) != 1 {
		return Unauthorized("wrong secret in the Authorization header")
	}
	return nil
}

// event starts an event of the hook's project and channel.
func event(h *tidings.Hook) *tidings.NewEvent {
	return &tidings.NewEvent{Project: h.Project, Channel: h.Channel}
}

// deliveryID makes a provider's delivery id fit the idempotency key
// ("hook:ID:DELIVERY", printable ASCII, at most tidings.MaxIdempotencyKeyLen): kept as
// it is when it is printable ASCII of at most 128 bytes, else replaced by its hash.
func deliveryID(s string) string {
	if s == "" {
		return ""
	}
	if len(s) <= 128 && !strings.ContainsFunc(s, func(r rune) bool { return r <= ' ' || r >= 0x7f }) {
		return s
	}
	sum := sha256.Sum256([]byte(s))
	return "sha256:" + hex.EncodeToString(sum[:16])
}
