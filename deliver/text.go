package deliver

import (
	"strings"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/text"

	"github.com/tidings-dev/tidings"
)

var markdown = goldmark.New(goldmark.WithExtensions(extension.GFM))

// PlainText is an event's description as text for messages that show no markup
// (notifications, Slack, Discord, ntfy): Markdown reduced to its words, white space
// folded, shortened to max runes with "…".
func PlainText(ev *tidings.Event, max int) string {
	s := ev.Description
	if ev.Parser == tidings.ParserMarkdown && s != "" {
		src := []byte(s)
		var b strings.Builder
		ast.Walk(markdown.Parser().Parse(text.NewReader(src)), func(n ast.Node, entering bool) (ast.WalkStatus, error) {
			if !entering {
				if n.Type() == ast.TypeBlock {
					b.WriteByte(' ')
				}
				return ast.WalkContinue, nil
			}
			switch n := n.(type) {
			case *ast.Text:
				b.Write(n.Segment.Value(src))
				if n.SoftLineBreak() || n.HardLineBreak() {
					b.WriteByte(' ')
				}
			case *ast.String:
				b.Write(n.Value)
			case *ast.CodeSpan:
				for c := n.FirstChild(); c != nil; c = c.NextSibling() {
					if t, ok := c.(*ast.Text); ok {
						b.Write(t.Segment.Value(src))
					}
				}
				return ast.WalkSkipChildren, nil
			case *ast.FencedCodeBlock, *ast.CodeBlock:
				lines := n.Lines()
				for i := 0; i < lines.Len(); i++ {
					seg := lines.At(i)
					b.Write(seg.Value(src))
				}
				return ast.WalkSkipChildren, nil
			}
			return ast.WalkContinue, nil
		})
		s = b.String()
	}
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > max {
		s = strings.TrimSpace(string(r[:max-1])) + "…"
	}
	return s
}
