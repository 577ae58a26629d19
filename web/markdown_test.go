package web

import (
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/html"

	"github.com/tidings-dev/tidings"
	"github.com/tidings-dev/tidings/internal/testbackend"
)

var forbiddenElements = map[string]bool{"script": true, "iframe": true, "object": true, "embed": true, "style": true,
	"form": true, "input": true, "button": true, "svg": true, "math": true, "base": true, "meta": true, "link": true}

// checkSafe tokenizes rendered HTML as a browser would and reports the first element,
// event handler or URL that could run script.
func checkSafe(out string, textOnly bool) string {
	z := html.NewTokenizer(strings.NewReader(out))
	for {
		switch z.Next() {
		case html.ErrorToken:
			if z.Err() == io.EOF {
				return ""
			}
			return z.Err().Error()
		case html.StartTagToken, html.SelfClosingTagToken, html.EndTagToken:
			tok := z.Token()
			if textOnly && tok.Data != "br" {
				return "element <" + tok.Data + "> in a text description"
			}
			if forbiddenElements[tok.Data] {
				return "element <" + tok.Data + ">"
			}
			for _, a := range tok.Attr {
				if strings.HasPrefix(strings.ToLower(a.Key), "on") || a.Key == "style" {
					return "attribute " + a.Key
				}
				if a.Key == "href" || a.Key == "src" {
					v := strings.ToLower(strings.Join(strings.Fields(a.Val), ""))
					if strings.HasPrefix(v, "javascript:") || strings.HasPrefix(v, "vbscript:") || strings.HasPrefix(v, "data:") {
						return a.Key + "=" + a.Val
					}
				}
			}
		}
	}
}

func TestRenderDescription(t *testing.T) {
	testbackend.Once(t)
	t.Parallel()
	for _, c := range []struct {
		parser, in, want string
	}{
		{"markdown", "**bold**", "<p><strong>bold</strong></p>\n"},
		{"markdown", "<script>alert(1)</script>", ""},
		{"markdown", "[x](javascript:alert(1))", "<p>x</p>\n"},
		{"text", "a\n<b>", "a<br>&lt;b&gt;"},
		{"text", "**not bold**", "**not bold**"},
	} {
		got := string(renderDescription(&tidings.Event{Description: c.in, Parser: c.parser}))
		if got != c.want && !(c.want == "" && checkSafe(got, false) == "") {
			t.Errorf("%s %q → %q, want %q", c.parser, c.in, got, c.want)
		}
	}
}

// FuzzRenderDescription: whatever a client sends as a description, the HTML shown in
// the dashboard has no script element, event handler or script URL, and a text
// description has no markup but line breaks.
func FuzzRenderDescription(f *testing.F) {
	for _, s := range []string{
		"**bold** <script>alert(1)</script>", "<img src=x onerror=alert(1)>", "[x](javascript:alert(1))",
		"[x](JaVaScRiPt:alert(1))", "<a href=\"java\tscript:alert(1)\">x</a>", "![x](data:text/html;base64,PHNjcmlwdD4=)",
		"<svg onload=alert(1)>", "<iframe src=//evil>", "```\n<script>\n```", "<style>*{}</style>", "[x](&#106;avascript:alert(1))",
		"line\nbreak", "<details open ontoggle=alert(1)>", " onA=",
	} {
		f.Add(s, true)
		f.Add(s, false)
	}
	f.Fuzz(func(t *testing.T, desc string, markdown bool) {
		parser := tidings.ParserText
		if markdown {
			parser = tidings.ParserMarkdown
		}
		out := string(renderDescription(&tidings.Event{Description: desc, Parser: parser}))
		if problem := checkSafe(out, !markdown); problem != "" {
			t.Fatalf("description %q rendered as %q: %s", desc, out, problem)
		}
		if limit := 6*len(desc) + maxRenderedHTML; len(out) > limit {
			t.Fatalf("%d bytes of description rendered to %d bytes", len(desc), len(out))
		}
	})
}

// TestMarkdownAmplification: descriptions of at most 10,000 characters built to render
// to megabytes (the audit's 1,600-column table gave 29 MB) are shown as plain text,
// bounded by the contract's 64 KiB, and quickly.
func TestMarkdownAmplification(t *testing.T) {
	t.Parallel()
	header := func(cols int) string {
		return "|" + strings.Repeat(" a |", cols) + "\n|" + strings.Repeat("-|", cols) + "\n"
	}
	wideTable := header(1600) + strings.Repeat("|x|\n", (tidings.MaxDescriptionLen-len(header(1600)))/4)
	longURL := "https://example.com/" + strings.Repeat("a", 4000)
	refs := "[r]: " + longURL + "\n\n" + strings.Repeat("[r] ", (tidings.MaxDescriptionLen-len(longURL)-10)/4)
	for _, c := range []struct {
		name, in string
		rendered bool // still shown as Markdown
	}{
		{"1,600-column table", wideTable, false},
		{"21-column table", header(21) + "|x|\n", false},
		{"20-column table", header(20) + strings.Repeat("|x|\n", 10), true},
		{"201-row table", header(2) + strings.Repeat("|x|y|\n", 201), false},
		{"200-row table", header(2) + strings.Repeat("|x|y|\n", 200), true},
		{"reference link repeated", refs, false},
		{"deep blockquote", strings.Repeat(">", 9000) + " x", true},
		{"many brackets", strings.Repeat("[", 10000), true},
		{"many emphasis", strings.Repeat("*a", 5000), true},
		{"many backticks", strings.Repeat("`a", 5000), true},
		{"many links", strings.Repeat("<http://a.b>", 800), true},
	} {
		t.Run(c.name, func(t *testing.T) {
			if n := len([]rune(c.in)); n > tidings.MaxDescriptionLen {
				t.Fatalf("test input is %d characters, over the API's limit", n)
			}
			// The attack took many seconds: a render must end, here within a generous minute
			// (its cost is bounded by the caps above).
			done := make(chan string, 1)
			go func() {
				done <- string(renderDescription(&tidings.Event{Description: c.in, Parser: tidings.ParserMarkdown}))
			}()
			var out string
			select {
			case out = <-done:
			case <-time.After(time.Minute):
				t.Fatal("the render did not end within a minute")
			}
			if len(out) > maxRenderedHTML+6*len(c.in) {
				t.Fatalf("rendered to %d bytes", len(out))
			}
			if len(out) > 2*maxRenderedHTML {
				t.Fatalf("rendered to %d bytes, more than the plain-text fallback needs", len(out))
			}
			markdown := !strings.Contains(out, "<br>") || strings.HasPrefix(out, "<")
			if c.rendered != markdown {
				t.Fatalf("rendered as Markdown = %v, want %v (%.200q)", markdown, c.rendered, out)
			}
		})
	}
}

// TestRenderCacheBounded: the cache renders each event once and never holds more than
// its byte budget, whatever is thrown at it.
func TestRenderCacheBounded(t *testing.T) {
	testbackend.Once(t)
	t.Parallel()
	c := newRenderCache(64 << 10)
	ev := &tidings.Event{ID: "a", Description: strings.Repeat("x", 1000), Parser: tidings.ParserText}
	first := c.description(ev)
	ev.Description = "changed" // an event never changes; a second render would show this
	if got := c.description(ev); got != first {
		t.Fatalf("rendered twice: %q", got)
	}
	for i := 0; i < 1000; i++ {
		c.description(&tidings.Event{ID: fmt.Sprint(i), Description: strings.Repeat("y", 5000), Parser: tidings.ParserText})
	}
	if c.bytes > c.maxBytes || c.len() > 64<<10/5000+1 {
		t.Fatalf("cache holds %d bytes in %d entries, budget %d", c.bytes, c.len(), c.maxBytes)
	}
}
