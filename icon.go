package tidings

import (
	"strings"
	"unicode/utf8"

	"github.com/kyokomi/emoji/v2"
	"github.com/rivo/uniseg"
)

// IconRuleMessage is said when an icon is not one emoji.
const IconRuleMessage = "must be exactly one emoji (like 💰) or an emoji shortcode (like :moneybag:)"

var shortcodes = emoji.CodeMap()

// MaxIconCodePoints bounds one emoji: the longest real sequences (a kiss with two skin
// tones) have 10; "💰" followed by twenty combining marks is one grapheme, not an emoji.
const MaxIconCodePoints = 10

// NormalizeIcon returns the emoji an icon field stands for: a single emoji is returned
// as it is; a shortcode such as ":moneybag:" is replaced by its emoji. ok is false when
// s is neither. The empty string is returned unchanged (it clears an insight's icon).
//
// "One emoji" means one grapheme cluster that is pictographic: ZWJ sequences (👩‍👩‍👧),
// flags (🇩🇪), skin tones (👍🏽) and keycaps (1️⃣) each count as one.
func NormalizeIcon(s string) (icon string, ok bool) {
	if s == "" {
		return "", true
	}
	if len(s) > 2 && s[0] == ':' && s[len(s)-1] == ':' {
		e, found := shortcodes[s]
		if !found {
			return "", false
		}
		// The table has a few entries with a trailing space; keep only the emoji.
		e = strings.TrimSpace(e)
		return e, isOneEmoji(e)
	}
	return s, isOneEmoji(s)
}

// isOneEmoji reports whether s is exactly one grapheme cluster that is an emoji.
func isOneEmoji(s string) bool {
	if !utf8.ValidString(s) || utf8.RuneCountInString(s) > MaxIconCodePoints {
		return false
	}
	cluster, rest, _, _ := uniseg.FirstGraphemeClusterInString(s, -1)
	if rest != "" || cluster == "" {
		return false
	}
	first, _ := utf8.DecodeRuneInString(cluster)
	switch {
	case isRegionalIndicator(first):
		// A flag is a pair of regional indicators; a lone one is not an emoji.
		n := 0
		for _, r := range cluster {
			if isRegionalIndicator(r) {
				n++
			}
		}
		return n == 2
	case strings.ContainsRune(cluster, '\u20E3'):
		// Keycap: 0-9, # or *, optional VS16, then U+20E3.
		return strings.ContainsRune("0123456789#*", first)
	case first == '\U000E0067': // tag characters never start a cluster
		return false
	}
	return isPictographic(first)
}

func isRegionalIndicator(r rune) bool { return r >= 0x1F1E6 && r <= 0x1F1FF }

// pictographic lists the ranges of Unicode's Extended_Pictographic property (emoji-data,
// Unicode 15.1), folded into blocks: every emoji starts with one of these code points.
var pictographic = [][2]rune{
	{0x00A9, 0x00A9}, {0x00AE, 0x00AE}, {0x203C, 0x203C}, {0x2049, 0x2049},
	{0x2122, 0x2122}, {0x2139, 0x2139}, {0x2194, 0x2199}, {0x21A9, 0x21AA},
	{0x231A, 0x231B}, {0x2328, 0x2328}, {0x2388, 0x2388}, {0x23CF, 0x23CF},
	{0x23E9, 0x23F3}, {0x23F8, 0x23FA}, {0x24C2, 0x24C2}, {0x25AA, 0x25AB},
	{0x25B6, 0x25B6}, {0x25C0, 0x25C0}, {0x25FB, 0x25FE}, {0x2600, 0x2605},
	{0x2607, 0x2612}, {0x2614, 0x2685}, {0x2690, 0x2705}, {0x2708, 0x2712},
	{0x2714, 0x2714}, {0x2716, 0x2716}, {0x271D, 0x271D}, {0x2721, 0x2721},
	{0x2728, 0x2728}, {0x2733, 0x2734}, {0x2744, 0x2744}, {0x2747, 0x2747},
	{0x274C, 0x274C}, {0x274E, 0x274E}, {0x2753, 0x2755}, {0x2757, 0x2757},
	{0x2763, 0x2767}, {0x2795, 0x2797}, {0x27A1, 0x27A1}, {0x27B0, 0x27B0},
	{0x27BF, 0x27BF}, {0x2934, 0x2935}, {0x2B05, 0x2B07}, {0x2B1B, 0x2B1C},
	{0x2B50, 0x2B50}, {0x2B55, 0x2B55}, {0x3030, 0x3030}, {0x303D, 0x303D},
	{0x3297, 0x3297}, {0x3299, 0x3299}, {0x1F000, 0x1F0FF}, {0x1F10D, 0x1F10F},
	{0x1F12F, 0x1F12F}, {0x1F16C, 0x1F171}, {0x1F17E, 0x1F17F}, {0x1F18E, 0x1F18E},
	{0x1F191, 0x1F19A}, {0x1F1AD, 0x1F1E5}, {0x1F201, 0x1F20F}, {0x1F21A, 0x1F21A},
	{0x1F22F, 0x1F22F}, {0x1F232, 0x1F23A}, {0x1F23C, 0x1F23F}, {0x1F249, 0x1F3FA},
	{0x1F400, 0x1F53D}, {0x1F546, 0x1F64F}, {0x1F680, 0x1F6FF}, {0x1F774, 0x1F77F},
	{0x1F7D5, 0x1F7FF}, {0x1F80C, 0x1F80F}, {0x1F848, 0x1F84F}, {0x1F85A, 0x1F85F},
	{0x1F888, 0x1F88F}, {0x1F8AE, 0x1F8FF}, {0x1F90C, 0x1F93A}, {0x1F93C, 0x1F945},
	{0x1F947, 0x1FAFF}, {0x1FC00, 0x1FFFD},
}

func isPictographic(r rune) bool {
	for _, rg := range pictographic {
		if r < rg[0] {
			return false
		}
		if r <= rg[1] {
			return true
		}
	}
	return false
}

// CheckIcon validates and normalises an icon field in place.
func CheckIcon(p *Problems, path string, icon *string) {
	if *icon == "" {
		return
	}
	norm, ok := NormalizeIcon(*icon)
	if !ok {
		p.Add(path, "emoji", IconRuleMessage)
		return
	}
	*icon = norm
}
