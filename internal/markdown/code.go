package markdown

import (
	"html/template"
	"strings"
)

// A plain-text description that is a stack trace or a piece of code keeps its shape: a
// monospace block that scrolls sideways, rather than text that wraps mid-identifier
// and loses its indentation.

// traceMarks are first lines or lines of well-known stack traces.
var traceMarks = []string{"Traceback (most recent call last):", "goroutine ", "Exception in thread ", "panic: "}

// LooksLikeCode reports whether plain text reads as code: several lines, most of the
// lines after the first indented (a trace's frames, a block's body), or a known
// trace's first line.
func LooksLikeCode(s string) bool {
	first, rest, ok := strings.Cut(s, "\n")
	if !ok {
		return false
	}
	indented, lines := 0, 0
	for _, l := range strings.Split(rest, "\n") {
		if strings.TrimSpace(l) == "" {
			continue
		}
		lines++
		if strings.HasPrefix(l, "\t") || strings.HasPrefix(l, "  ") {
			indented++
		}
	}
	if indented > 0 && indented*2 >= lines {
		return true
	}
	for _, m := range traceMarks {
		if strings.HasPrefix(first, m) && lines > 0 {
			return true
		}
	}
	return false
}

// codeBlock is text as a monospace block.
func codeBlock(s string) template.HTML {
	return template.HTML(`<pre class="code"><code>` + template.HTMLEscapeString(strings.TrimRight(s, "\n")) + `</code></pre>`)
}
