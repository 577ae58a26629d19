// Package markdown renders event descriptions to safe HTML, for the dashboard and for
// notification mail: GFM with goldmark, sanitised with bluemonday, within bounds.
package markdown

import (
	"bytes"
	"errors"
	"html/template"
	"regexp"
	"strings"

	"github.com/microcosm-cc/bluemonday"
	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	east "github.com/yuin/goldmark/extension/ast"
	"github.com/yuin/goldmark/renderer/html"
	"github.com/yuin/goldmark/text"

	"github.com/tidings-dev/tidings"
)

// Bounds of one rendered description (the contract's "Hostile input" section). GFM
// pads every table row to the header's width and a reference link repeats its URL
// wherever it is used, so 10,000 characters of Markdown can ask for megabytes of HTML.
// Beyond these bounds the description is shown as plain text.
const (
	MaxHTML         = 64 << 10
	maxTableColumns = 20
	maxTableRows    = 200
)

// markdown renders with goldmark, which already drops raw HTML and javascript: links;
// bluemonday then allows only a known-safe set of elements and attributes, so that a
// parser bug cannot become a script in somebody's dashboard.
var (
	md = goldmark.New(goldmark.WithExtensions(extension.GFM),
		goldmark.WithRendererOptions(html.WithHardWraps()))
	sanitizer = func() *bluemonday.Policy {
		p := bluemonday.UGCPolicy()
		p.RequireNoFollowOnLinks(true)
		p.AddTargetBlankToFullyQualifiedLinks(true)
		return p
	}()
)

// Description turns an event's description into safe HTML: Markdown when the
// event asked for it and it stays within the bounds, text with its line breaks kept
// otherwise.
func Description(ev *tidings.Event) template.HTML {
	if ev.Description == "" {
		return ""
	}
	if ev.Parser == tidings.ParserMarkdown {
		// A description whose whole content was unsafe (raw HTML) is shown as the text
		// that was sent, rather than as an empty box.
		if out, ok := Render(ev.Description); ok && HasText(out) {
			return out
		}
	}
	if LooksLikeCode(ev.Description) {
		return codeBlock(ev.Description)
	}
	escaped := template.HTMLEscapeString(ev.Description)
	return template.HTML(strings.ReplaceAll(escaped, "\n", "<br>"))
}

var errOutputFull = errors.New("rendered description too large")

// cappedBuffer stops accepting bytes past its cap: the renderer's later writes fail,
// so the work after the cap is only the walk of the (input-sized) syntax tree.
type cappedBuffer struct {
	bytes.Buffer
	full bool
}

func (b *cappedBuffer) Write(p []byte) (int, error) {
	if b.full || b.Len()+len(p) > MaxHTML {
		b.full = true
		return 0, errOutputFull
	}
	return b.Buffer.Write(p)
}

// Render renders src, or reports false when its tables or its output would be
// larger than the bounds.
func Render(src string) (template.HTML, bool) {
	if hasWideTableDelimiter(src) {
		return "", false // refused before parsing: the parser itself pads every row
	}
	source := []byte(src)
	doc := md.Parser().Parse(text.NewReader(source))
	fits := true
	ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if t, ok := n.(*east.Table); ok && entering {
			// Children: the header, then one node per body row.
			if len(t.Alignments) > maxTableColumns || t.ChildCount()-1 > maxTableRows {
				fits = false
				return ast.WalkStop, nil
			}
			return ast.WalkSkipChildren, nil
		}
		return ast.WalkContinue, nil
	})
	if !fits {
		return "", false
	}
	var b cappedBuffer
	if err := md.Renderer().Render(&b, source, doc); err != nil || b.full {
		return "", false
	}
	out := sanitizer.SanitizeBytes(b.Bytes())
	if len(out) > MaxHTML {
		return "", false
	}
	return template.HTML(out), true
}

// hasWideTableDelimiter reports a line that could be the delimiter row of a table with
// more than maxTableColumns columns ("|-|-|-|…"): goldmark pads each row of a table to
// the header's width while parsing, so such a table costs before it can be measured.
func hasWideTableDelimiter(src string) bool {
	for line := range strings.Lines(src) {
		if strings.Count(line, "|") <= maxTableColumns || strings.Trim(line, "|-: \t\r\n") != "" {
			continue
		}
		row := strings.TrimSpace(line)
		row = strings.TrimSuffix(strings.TrimPrefix(row, "|"), "|")
		if strings.Count(row, "|")+1 > maxTableColumns && strings.Contains(row, "-") {
			return true
		}
	}
	return false
}

var tagRE = regexp.MustCompile(`<[^>]*>`)

// HasText reports whether rendered HTML shows anything: text, or an image or a rule.
func HasText(h template.HTML) bool {
	if strings.Contains(string(h), "<img") || strings.Contains(string(h), "<hr") {
		return true
	}
	return strings.TrimSpace(tagRE.ReplaceAllString(string(h), "")) != ""
}
