package web

import (
	"bytes"
	"html/template"
	"strings"

	"github.com/microcosm-cc/bluemonday"
	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/renderer/html"

	"github.com/tidings-dev/tidings"
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

// renderDescription turns an event's description into safe HTML: Markdown when the
// event asked for it, text with its line breaks kept otherwise.
func renderDescription(ev *tidings.Event) template.HTML {
	if ev.Description == "" {
		return ""
	}
	if ev.Parser == tidings.ParserMarkdown {
		var b bytes.Buffer
		if err := md.Convert([]byte(ev.Description), &b); err == nil {
			return template.HTML(sanitizer.SanitizeBytes(b.Bytes()))
		}
	}
	escaped := template.HTMLEscapeString(ev.Description)
	return template.HTML(strings.ReplaceAll(escaped, "\n", "<br>"))
}
