package tidings

import (
	"strings"
	"unicode"
)

// Text rules against hostile input: what a public token may put into fields that the
// dashboard, push notifications and live streams show to people.

// isControl reports C0 controls, DEL and C1 controls (CR, LF and TAB included).
func isControl(r rune) bool { return r < 0x20 || r >= 0x7F && r <= 0x9F }

// isBidiControl reports the bidi embeddings, overrides and isolates (U+202A–U+202E,
// U+2066–U+2069), which can make "pay‮gnp.exe" read as "payexe.png".
func isBidiControl(r rune) bool { return r >= 0x202A && r <= 0x202E || r >= 0x2066 && r <= 0x2069 }

// isInvisible reports characters that draw nothing: white space, format characters
// (zero-width space and joiners, bidi marks, soft hyphen, BOM) and the blank letters
// that Unicode classes as letters.
func isInvisible(r rune) bool {
	switch r {
	case 0x115F, 0x1160, 0x3164, 0xFFA0, 0x2800, 0x180E:
		return true
	}
	return unicode.IsSpace(r) || unicode.Is(unicode.Cf, r) || r >= 0xFE00 && r <= 0xFE0F // variation selectors
}

// Kinds of text field, from the strictest to the most lenient.
type textRule int

const (
	// ruleLabel: a name people read (event, title, tags): no control characters, no
	// bidi controls.
	ruleLabel textRule = iota
	// ruleLine: one line of text (prefix, suffix, values, user_id): no control characters.
	ruleLine
)

// checkText records a problem when s breaks the rule of its kind.
func checkText(p *Problems, path, s string, rule textRule) {
	if strings.ContainsFunc(s, isControl) {
		p.Add(path, "control_character", "must not contain control characters such as line breaks or tabs")
		return
	}
	if rule == ruleLabel && strings.ContainsFunc(s, isBidiControl) {
		p.Add(path, "bidi_control", "must not contain Unicode direction controls (U+202A–U+202E, U+2066–U+2069)")
	}
}

// checkVisible records a problem when a required text shows nothing once invisible
// characters are removed.
func checkVisible(p *Problems, path, s string) {
	if s != "" && !strings.ContainsFunc(s, func(r rune) bool { return !isInvisible(r) }) {
		p.Add(path, "invisible", "must contain visible characters")
	}
}

// NormalizeNewlines turns CR LF and lone CR into LF, so that a description has one
// kind of line break (and no CR that a line-based protocol could take for a line end).
func NormalizeNewlines(s string) string {
	if !strings.Contains(s, "\r") {
		return s
	}
	return strings.ReplaceAll(strings.ReplaceAll(s, "\r\n", "\n"), "\r", "\n")
}

// checkDescription records a problem for control characters other than LF and TAB.
func checkDescription(p *Problems, path, s string) {
	if strings.ContainsFunc(s, func(r rune) bool { return isControl(r) && r != '\n' && r != '\t' }) {
		p.Add(path, "control_character", "must not contain control characters other than line breaks and tabs")
	}
}
