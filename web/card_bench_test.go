package web

import (
	"fmt"
	"net/url"
	"testing"
	"time"

	"github.com/tidings-dev/tidings"
)

// BenchmarkEventCard renders one event's card for a live feed, plain and with a
// Markdown description (each new event's Markdown is rendered once; the cache is
// emptied between runs here so that every iteration pays for it).
//
//	go test -run '^$' -bench EventCard -benchmem -count 6 ./web | benchstat -
func BenchmarkEventCard(b *testing.B) {
	s, err := New(Config{})
	if err != nil {
		b.Fatal(err)
	}
	f := &feedSpec{base: "/p/shop", params: url.Values{}}
	for _, c := range []struct{ name, parser, desc string }{
		{"text", tidings.ParserText, "Ada upgraded to the yearly premium plan after the trial"},
		{"markdown", tidings.ParserMarkdown, "## Deploy\n\n- status: **ok**\n- took `412 ms`\n- [details](https://example.com/r/1)\n\n| step | ms |\n|---|---|\n| build | 120 |\n"},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				ev := &tidings.Event{ID: fmt.Sprintf("0199a000-0000-7000-8000-%012d", i), Project: "shop", Channel: "payments",
					Event: "New Subscription", Description: c.desc, Parser: c.parser, Icon: "💰",
					Tags:      tidings.Tags{{Key: "plan", Kind: tidings.KindString, Value: "premium"}, {Key: "seats", Kind: tidings.KindNumber, Value: "3"}},
					Timestamp: time.Unix(1_790_000_000, 0), CreatedAt: time.Unix(1_790_000_000, 0)}
				if s.eventFrame(ev, f) == nil {
					b.Fatal("no frame")
				}
			}
		})
	}
}
