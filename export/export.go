// Package export writes a project's events, filtered like the feed, as NDJSON or CSV.
// It reads the store a page at a time and writes each page before reading the next,
// so an export of millions of events holds one page in memory.
package export

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/tidings-dev/tidings"
)

// Formats of an export.
const (
	NDJSON = "ndjson"
	CSV    = "csv"
)

// pageSize is how many events one read of the store returns.
const pageSize = 100

// ContentType is the media type of a format.
func ContentType(format string) string {
	if format == CSV {
		return "text/csv; charset=utf-8"
	}
	return "application/x-ndjson"
}

// CheckFormat validates a format parameter ("" means NDJSON).
func CheckFormat(format string) (string, error) {
	switch format {
	case "", NDJSON:
		return NDJSON, nil
	case CSV:
		return CSV, nil
	}
	var p tidings.Problems
	p.Add("format", "enum", `must be "ndjson" or "csv"`)
	return "", p.Err()
}

// Filename is the name a browser saves an export under.
func Filename(project, channel, format string) string {
	name := project
	if channel != "" {
		name += "-" + channel
	}
	return name + "-events-" + time.Now().UTC().Format("20060102-150405") + "." + format
}

// csvHeader names the CSV columns.
var csvHeader = []string{"id", "timestamp", "created_at", "project", "channel", "event", "description", "icon", "notify", "user_id", "parser", "tags"}

// Write writes every event q selects, newest first, in format, calling flush after
// each page (to push it to the client). q.Before and q.Limit are its own.
func Write(ctx context.Context, w io.Writer, flush func(), store tidings.EventStore, accountID int64, q tidings.EventQuery, format string) error {
	q.Limit = pageSize
	var cw *csv.Writer
	if format == CSV {
		cw = csv.NewWriter(w)
		if err := cw.Write(csvHeader); err != nil {
			return err
		}
	}
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		page, err := store.ListEvents(ctx, accountID, q)
		if err != nil {
			return err
		}
		for _, ev := range page.Events {
			if cw != nil {
				err = cw.Write(csvRow(ev))
			} else {
				err = enc.Encode(ev.JSON())
			}
			if err != nil {
				return err
			}
		}
		if cw != nil {
			cw.Flush()
			if err := cw.Error(); err != nil {
				return err
			}
		}
		if flush != nil {
			flush()
		}
		if page.Next == "" {
			return nil
		}
		q.Before = page.Next
	}
}

func csvRow(ev *tidings.Event) []string {
	tags := "{}"
	if len(ev.Tags) > 0 {
		b, _ := ev.Tags.MarshalJSON()
		tags = string(b)
	}
	return []string{ev.ID, ev.Timestamp.UTC().Format(time.RFC3339Nano), ev.CreatedAt.UTC().Format(time.RFC3339Nano),
		ev.Project, ev.Channel, cell(ev.Event), cell(ev.Description), cell(ev.Icon), strconv.FormatBool(ev.Notify),
		cell(ev.UserID), ev.Parser, cell(tags)}
}

// cell keeps a spreadsheet from reading a value as a formula (CSV injection): text
// that starts with =, +, -, @, a tab or a carriage return gets a leading apostrophe.
func cell(s string) string {
	if s != "" && strings.ContainsRune("=+-@\t\r", rune(s[0])) {
		return "'" + s
	}
	return s
}

// MaxRunning is how many exports one process writes at once; more are refused, so
// that exports (each reads a whole project) cannot crowd out publishing.
const MaxRunning = 4

var running = make(chan struct{}, MaxRunning)

// Start takes one of the export slots; it returns false when all are busy. Call the
// returned function when the export ends.
func Start() (done func(), ok bool) {
	select {
	case running <- struct{}{}:
		return func() { <-running }, true
	default:
		return nil, false
	}
}

// Busy is the error for an export refused because MaxRunning are running.
func Busy() error {
	return tidings.Errorf(tidings.EUnavailable, "%d exports are running; try again when one has finished", MaxRunning)
}

// WriteTimeout bounds the write of one page: a client that stops reading, or reads so
// slowly that a page waits this long, is cut off and its slot freed (the audit: four
// clients reading a page every 30 s held every slot). A variable for tests.
var WriteTimeout = 10 * time.Second

// Serve answers a request with the export as a download, after taking an export slot
// (Busy when none is free). Once the answer has begun an error can only cut it short:
// it is logged, and the client sees an export without its end.
func Serve(w http.ResponseWriter, r *http.Request, store tidings.EventStore, accountID int64, q tidings.EventQuery, format string, log *slog.Logger) error {
	// That the project and channel exist is checked before the answer starts, while an
	// error can still be one.
	if _, err := store.ListEvents(r.Context(), accountID, tidings.EventQuery{Project: q.Project, Channel: q.Channel, Limit: 1}); err != nil {
		return err
	}
	done, ok := Start()
	if !ok {
		return Busy()
	}
	defer done()
	h := w.Header()
	h.Set("Content-Type", ContentType(format))
	h.Set("Content-Disposition", `attachment; filename="`+Filename(q.Project, q.Channel, format)+`"`)
	h.Set("Cache-Control", "no-store")
	rc := http.NewResponseController(w)
	rc.SetWriteDeadline(time.Now().Add(WriteTimeout))
	flush := func() {
		rc.Flush()
		rc.SetWriteDeadline(time.Now().Add(WriteTimeout))
	}
	if err := Write(r.Context(), w, flush, store, accountID, q, format); err != nil && r.Context().Err() == nil {
		log.Warn("export cut short", "project", q.Project, "err", err)
	}
	return nil
}
