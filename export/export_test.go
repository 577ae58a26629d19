package export_test

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/tidings-dev/tidings"
	"github.com/tidings-dev/tidings/export"
	"github.com/tidings-dev/tidings/internal/testbackend"
)

func TestMain(m *testing.M) { testbackend.Main(m) }

// countingWriter counts what is written and keeps nothing: the export of a large
// project must not need the whole export in memory.
type countingWriter struct {
	bytes, lines int
	first        []byte
	// maxLive is the most live heap seen, sampled every 1,000 lines.
	maxLive uint64
}

func (w *countingWriter) Write(p []byte) (int, error) {
	if len(w.first) < 4096 {
		w.first = append(w.first, p[:min(len(p), 4096-len(w.first))]...)
	}
	w.bytes += len(p)
	before := w.lines / 1000
	w.lines += bytes.Count(p, []byte("\n"))
	if w.lines/1000 != before {
		var m runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&m)
		w.maxLive = max(w.maxLive, m.HeapAlloc)
	}
	return len(p), nil
}

func TestExport(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := testbackend.Open(t, testbackend.Location(t))
	a, _ := s.CreateAccount(ctx, "acme")
	s.CreateProject(ctx, a.ID, "shop")
	s.CreateChannel(ctx, a.ID, "shop", "payments")
	const n = 2_000
	base := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	evs := make([]tidings.NewEvent, n)
	for i := range evs {
		plan := []string{"free", "pro"}[i%2]
		desc := fmt.Sprintf("order %d", i)
		if i == 7 {
			desc = "=HYPERLINK(\"https://evil.example\")" // a formula must stay text in a spreadsheet
		}
		evs[i] = tidings.NewEvent{Project: "shop", Channel: "payments", Event: fmt.Sprintf("Paid %d", i),
			Description: desc, Parser: tidings.ParserText, Timestamp: base.Add(time.Duration(i) * time.Second),
			Tags: tidings.Tags{{Key: "plan", Kind: tidings.KindString, Value: plan}, {Key: "n", Kind: tidings.KindNumber, Value: fmt.Sprint(i)}}}
	}
	(&testbackend.Fixture{Store: s, Account: a}).Publish(t, evs...)
	q := tidings.EventQuery{Project: "shop"}

	// NDJSON: every event once, newest first, each line an API event; memory stays flat.
	var before runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	var w countingWriter
	flushes := 0
	if err := export.Write(ctx, &w, func() { flushes++ }, s, a.ID, q, export.NDJSON); err != nil {
		t.Fatal(err)
	}
	if w.lines != n || flushes < n/100 {
		t.Fatalf("%d lines, %d flushes for %d events", w.lines, flushes, n)
	}
	var first tidings.EventJSON
	if err := json.Unmarshal(w.first[:bytes.IndexByte(w.first, '\n')], &first); err != nil || first.Event != fmt.Sprint("Paid ", n-1) {
		t.Fatalf("first line: %+v %v", first, err)
	}
	// Holding the export would keep its bytes (and more) live until the end.
	if grown := int64(w.maxLive) - int64(before.HeapAlloc); grown > int64(w.bytes)/4 {
		t.Fatalf("the live heap grew by %d bytes during an export of %d bytes", grown, w.bytes)
	}

	// CSV of a filtered feed: a header, the matching rows, formulas defused.
	var b bytes.Buffer
	q.Tags = []tidings.Tag{{Key: "plan", Value: "pro"}}
	if err := export.Write(ctx, &b, nil, s, a.ID, q, export.CSV); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(&b).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != n/2+1 || rows[0][0] != "id" || rows[1][5] != fmt.Sprint("Paid ", n-1) {
		t.Fatalf("%d rows; header %v; first %v", len(rows), rows[0], rows[1])
	}
	for _, r := range rows[1:] {
		if r[5] == "Paid 7" && !strings.HasPrefix(r[6], "'=") {
			t.Fatalf("a formula is exported as a formula: %q", r[6])
		}
		if !strings.Contains(r[11], `"plan":"pro"`) {
			t.Fatalf("tags column: %q", r[11])
		}
	}
	if _, err := export.CheckFormat("xlsx"); tidings.ErrorCode(err) != tidings.EValidation {
		t.Fatalf("format xlsx: %v", err)
	}
	// A cancelled export stops.
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if err := export.Write(cctx, io.Discard, nil, s, a.ID, tidings.EventQuery{Project: "shop"}, export.NDJSON); err == nil {
		t.Fatal("a cancelled export went on")
	}
}

// At most MaxRunning exports run at once.
func TestExportSlots(t *testing.T) {
	testbackend.Once(t)
	var done []func()
	for range export.MaxRunning {
		d, ok := export.Start()
		if !ok {
			t.Fatal("a free slot was refused")
		}
		done = append(done, d)
	}
	if _, ok := export.Start(); ok {
		t.Fatalf("export %d started", export.MaxRunning+1)
	}
	done[0]()
	if d, ok := export.Start(); !ok {
		t.Fatal("a freed slot was refused")
	} else {
		d()
	}
	for _, d := range done[1:] {
		d()
	}
}

// TestStalledExportEnds: a client that stops reading is cut off after WriteTimeout, and
// its export slot is free again.
func TestStalledExportEnds(t *testing.T) {
	export.WriteTimeout = 300 * time.Millisecond
	t.Cleanup(func() { export.WriteTimeout = 10 * time.Second })
	ctx := context.Background()
	s := testbackend.Open(t, testbackend.Location(t))
	a, err := s.CreateAccount(ctx, "acme")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.CreateProject(ctx, a.ID, "shop"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.CreateChannel(ctx, a.ID, "shop", "orders"); err != nil {
		t.Fatal(err)
	}
	evs := make([]tidings.NewEvent, 800) // of 10,000 characters: 8 MB, more than the socket buffers below hold
	for i := range evs {
		evs[i] = tidings.NewEvent{Project: "shop", Channel: "orders", Event: fmt.Sprint("e ", i), Description: strings.Repeat("x", 10_000)}
	}
	(&testbackend.Fixture{Store: s, Account: a}).Publish(t, evs...)
	served := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer close(served)
		export.Serve(w, r, s, a.ID, tidings.EventQuery{Project: "shop"}, "ndjson", slog.New(slog.DiscardHandler))
	}))
	t.Cleanup(srv.Close)
	conn, err := net.Dial("tcp", srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.(*net.TCPConn).SetReadBuffer(4096)                // a small window: the server's writes block soon
	fmt.Fprintf(conn, "GET / HTTP/1.1\r\nHost: x\r\n\r\n") // and never read
	select {
	case <-served:
	case <-time.After(60 * time.Second):
		t.Fatal("an export to a client that never reads still runs after a minute")
	}
	d, ok := export.Start()
	if !ok {
		t.Fatal("the stalled export's slot was not freed")
	}
	d()
}
