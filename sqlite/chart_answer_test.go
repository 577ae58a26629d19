package sqlite

import (
	"strconv"
	"testing"
	"time"

	"github.com/tidings-dev/tidings"
	"github.com/tidings-dev/tidings/charts"
)

// The chart engine answers from this store: from the hourly counts for a whole
// channel, from a scan for an event: search, each bucket its events' count.
func TestChartAnswerFromTheStore(t *testing.T) {
	db, accountID, evs, base := chartStore(t)
	now := base.Add(time.Hour)
	for _, c := range []struct{ q, channel, event string }{
		{"", "", ""},
		{"channel:signups", "signups", ""},
		{`event:"Order placed"`, "", "Order placed"},
		{`event:"Order" channel:orders`, "orders", "Order"},
	} {
		q, err := tidings.ParseChart(tidings.ChartParams{Project: "shop", Q: c.q, Bucket: "hour", Range: "7d"}, now)
		if err != nil {
			t.Fatal(err)
		}
		res, err := charts.Answer(t.Context(), db, accountID, q)
		if err != nil {
			t.Fatalf("%s: %v", c.q, err)
		}
		want := map[time.Time]int{}
		for _, ev := range evs {
			if (c.channel == "" || ev.Channel == c.channel) && (c.event == "" || ev.Event == c.event) &&
				!ev.Timestamp.Before(q.From) && ev.Timestamp.Before(q.To) {
				want[q.Floor(ev.Timestamp).UTC()]++
			}
		}
		if len(res.Series) != 1 {
			t.Fatalf("%s: %d series", c.q, len(res.Series))
		}
		total := 0
		for _, p := range res.Series[0].Points {
			n := 0
			if p.Value != nil {
				if n, err = strconv.Atoi(*p.Value); err != nil {
					t.Fatal(err)
				}
			}
			if n != want[p.Start.UTC()] {
				t.Fatalf("%s: bucket %s holds %d, want %d", c.q, p.Start, n, want[p.Start.UTC()])
			}
			total += n
		}
		if total == 0 {
			t.Fatalf("%s: no events charted", c.q)
		}
		if (c.event != "") != (res.Scanned > 0) {
			t.Fatalf("%s: %d events scanned", c.q, res.Scanned)
		}
	}
}
