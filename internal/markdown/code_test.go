package markdown

import (
	"strings"
	"testing"

	"github.com/tidings-dev/tidings"
)

func TestLooksLikeCode(t *testing.T) {
	for _, c := range []struct {
		text string
		code bool
	}{
		{"panic: boom\n    at main.go:12", true},
		{"Traceback (most recent call last):\nFile \"app.py\", line 3, in <module>\nZeroDivisionError: division by zero", true},
		{"TypeError: x is undefined\n\tat render (app.js:10:5)\n\tat main (app.js:2:1)", true},
		{"func main() {\n\tfmt.Println(1)\n}", true},
		{"A new subscription", false},
		{"Line one\nLine two\nLine three", false},
		{"Paid\n\nThanks for the order", false},
		{"Dear team,\n  one line indented\nand three\nthat are\nnot", false},
	} {
		if got := LooksLikeCode(c.text); got != c.code {
			t.Errorf("LooksLikeCode(%q) = %v, want %v", c.text, got, c.code)
		}
	}
}

// A plain-text stack trace is a monospace block, escaped, with its indentation; plain
// text keeps its line breaks; a Markdown description is not touched.
func TestDescriptionOfCode(t *testing.T) {
	trace := string(Description(&tidings.Event{Description: "panic: <boom>\n    at main.go:12"}))
	if trace != "<pre class=\"code\"><code>panic: &lt;boom&gt;\n    at main.go:12</code></pre>" {
		t.Errorf("a trace: %s", trace)
	}
	if text := string(Description(&tidings.Event{Description: "one\ntwo"})); text != "one<br>two" {
		t.Errorf("text: %s", text)
	}
	md := string(Description(&tidings.Event{Description: "**bold**\n  indented", Parser: tidings.ParserMarkdown}))
	if strings.Contains(md, `class="code"`) || !strings.Contains(md, "<strong>bold</strong>") {
		t.Errorf("markdown: %s", md)
	}
}
