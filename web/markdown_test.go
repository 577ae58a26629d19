package web

import (
	"io"
	"strings"
	"testing"

	"golang.org/x/net/html"

	"github.com/tidings-dev/tidings"
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
	})
}
