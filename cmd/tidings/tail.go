// tidings tail: follow a project's events from a terminal (GET /v1/events/stream).
package main

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	mrand "math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/tidings-dev/tidings"
	"github.com/tidings-dev/tidings/client"
)

// tailOptions are the flags of tidings tail that other commands do not share.
type tailOptions struct {
	json   bool
	tags   tagFlags
	search string
}

func tailFlags(fs *flag.FlagSet, c *cli) {
	fs.StringVar(&c.pub.url, "url", envString("URL", client.DefaultURL), "the server's address (TIDINGS_URL)")
	fs.StringVar(&c.pub.token, "token", "", "a full API token (TIDINGS_TOKEN or TIDINGS_TOKEN_FILE; prefer them: flags show in process lists)")
	fs.StringVar(&c.project, "project", "", "the project (required)")
	fs.StringVar(&c.project, "p", "", "")
	fs.StringVar(&c.channel, "channel", "", "only this channel's events")
	fs.StringVar(&c.channel, "c", "", "")
	fs.BoolVar(&c.tail.json, "json", false, "print each event as one line of JSON, as POST /v1/log answers it")
	fs.Var(&c.tail.tags, "tag", "only events with this tag, `key:value` (repeat: all must match)")
	fs.StringVar(&c.tail.search, "q", "", "only events that match this `search`, as the feed's search box takes it")
}

func tailEvents(ctx context.Context, c *cli, _ []string) error {
	if c.project == "" {
		return errors.New("-p/--project is required: tidings tail -p my-saas [-c payments] [--json]")
	}
	token := c.pub.token
	if token == "" {
		token, _ = env("TOKEN")
	}
	if token == "" {
		return errors.New("no token: export TIDINGS_TOKEN=tds_… (a full token: Settings → API, or tidings token create --access full), or give --token")
	}
	q := url.Values{"project": {c.project}}
	if c.channel != "" {
		q.Set("channel", c.channel)
	}
	for _, t := range c.tail.tags {
		q.Add("tag", t)
	}
	if c.tail.search != "" {
		q.Set("q", c.tail.search)
	}
	t := &tailer{URL: strings.TrimRight(c.pub.url, "/") + "/v1/events/stream?" + q.Encode(), Token: token, JSON: c.tail.json,
		Out: c.stdout, Log: c.stderr}
	return tailHint(t.Run(ctx))
}

// tailer follows one stream: it prints each event once, and when the connection ends
// it connects again (with a growing, jittered wait) sending the last event's id as
// Last-Event-ID, so that the server sends what was missed: no gap, and no event twice.
type tailer struct {
	URL, Token string
	JSON       bool
	Out, Log   io.Writer
	HTTP       *http.Client  // nil: tailClient
	Backoff    time.Duration // the first wait before connecting again (0: 500 ms), doubled up to MaxBackoff
	MaxBackoff time.Duration // 0: 30 s
	// Idle ends a connection on which nothing (not even the server's heartbeat comment,
	// sent every ~15 s) arrived for this long: a half-open connection is noticed (0: 45 s).
	Idle time.Duration

	last string          // the id of the last event printed
	seen map[string]bool // ids printed lately: a server that resends one is not echoed
	ring []string        // seen's ids, oldest first, at most seenMax
}

const seenMax = 4096

// tailClient has no overall timeout (a stream lasts); each phase before the answer has one.
var tailClient = &http.Client{Transport: &http.Transport{
	Proxy:                 http.ProxyFromEnvironment,
	DialContext:           (&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
	TLSHandshakeTimeout:   10 * time.Second,
	ResponseHeaderTimeout: 30 * time.Second,
	ForceAttemptHTTP2:     true,
}}

// tailRefused is an answer that connecting again cannot change (401, 403, 404, 400):
// tail says it in one line and exits 1.
type tailRefused struct{ msg string }

func (e *tailRefused) Error() string { return e.msg }

// Run follows the stream until ctx ends (nil) or the server refuses it (the error).
func (t *tailer) Run(ctx context.Context) error {
	backoff, maxBackoff := cmp.Or(t.Backoff, 500*time.Millisecond), cmp.Or(t.MaxBackoff, 30*time.Second)
	wait := backoff
	for {
		printed, retryAfter, err := t.follow(ctx)
		if ctx.Err() != nil {
			return nil // SIGINT
		}
		var refused *tailRefused
		if errors.As(err, &refused) {
			return err
		}
		if printed {
			wait = backoff // it worked for a while: start again from the short wait
		}
		d := wait/2 + mrand.N(wait/2+1)
		if retryAfter > d {
			d = retryAfter
		}
		why := "the stream ended"
		if err != nil {
			why = oneLine(err)
		}
		fmt.Fprintf(t.Log, "tidings tail: %s; connecting again in %s\n", why, d.Round(100*time.Millisecond))
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(d):
		}
		wait = min(wait*2, maxBackoff)
	}
}

// follow makes one connection and prints its events until it ends. printed says
// whether an event came; retryAfter is the server's Retry-After (429, 503).
func (t *tailer) follow(ctx context.Context) (printed bool, retryAfter time.Duration, err error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, "GET", t.URL, nil)
	if err != nil {
		return false, 0, &tailRefused{fmt.Sprintf("--url: %v", err)}
	}
	req.Header.Set("Authorization", "Bearer "+t.Token)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Cache-Control", "no-cache")
	if t.last != "" {
		req.Header.Set("Last-Event-ID", t.last)
	}
	hc := t.HTTP
	if hc == nil {
		hc = tailClient
	}
	res, err := hc.Do(req)
	if err != nil {
		return false, 0, err
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(res.Body, 64<<10))
		msg := refusalText(res, b)
		switch {
		case res.StatusCode == http.StatusTooManyRequests || res.StatusCode >= 500:
			secs, _ := strconv.Atoi(res.Header.Get("Retry-After"))
			return false, time.Duration(secs) * time.Second, errors.New(msg)
		case res.StatusCode == http.StatusRequestTimeout:
			return false, 0, errors.New(msg)
		}
		return false, 0, &tailRefused{msg}
	}
	if ct := res.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/event-stream") {
		return false, 0, &tailRefused{fmt.Sprintf("%s answered %q, not an event stream: is --url a Tidings server?", req.URL.Redacted(), ct)}
	}
	// The idle timer cancels a connection that went quiet; every line read resets it.
	idle := cmp.Or(t.Idle, 45*time.Second)
	var quiet atomic.Bool
	timer := time.AfterFunc(idle, func() { quiet.Store(true); cancel() })
	defer timer.Stop()
	r := bufio.NewReaderSize(res.Body, 64<<10)
	var id, name string
	var data bytes.Buffer
	for {
		line, err := readLine(r)
		if err != nil {
			if quiet.Load() {
				return printed, 0, fmt.Errorf("nothing arrived for %s", idle)
			}
			return printed, 0, err
		}
		timer.Reset(idle)
		if len(line) == 0 { // the end of one message
			if data.Len() > 0 && (name == "" || name == "message" || name == "event") && t.print(id, data.Bytes()) {
				printed = true
			}
			data.Reset()
			name = ""
			continue
		}
		field, value, _ := bytes.Cut(line, []byte(":"))
		value = bytes.TrimPrefix(value, []byte(" "))
		switch string(field) {
		case "": // a comment: the heartbeat
		case "id":
			id = string(value)
		case "event":
			name = string(value)
		case "data":
			if data.Len() > 0 {
				data.WriteByte('\n')
			}
			data.Write(value)
		}
	}
}

// readLine reads one line of an event stream (ended by \n or \r\n), without its end;
// a line over 1 MiB is an error. The end of the body mid-stream is io.ErrUnexpectedEOF.
func readLine(r *bufio.Reader) ([]byte, error) {
	var line []byte
	for {
		part, isPrefix, err := r.ReadLine()
		if err != nil {
			if err == io.EOF {
				return nil, io.ErrUnexpectedEOF
			}
			return nil, err
		}
		line = append(line, part...)
		if len(line) > 1<<20 {
			return nil, errors.New("a line of the stream is over 1 MiB")
		}
		if !isPrefix {
			return line, nil
		}
	}
}

// print shows one event, unless it was shown already; it reports whether it did.
func (t *tailer) print(id string, data []byte) bool {
	var e tidings.EventJSON
	if err := json.Unmarshal(data, &e); err != nil {
		fmt.Fprintf(t.Log, "tidings tail: skipped a message that is not an event (%v)\n", err)
		return false
	}
	if id == "" {
		id = e.ID
	}
	if t.seen[id] {
		return false
	}
	if t.seen == nil {
		t.seen = map[string]bool{}
	}
	t.seen[id] = true
	t.ring = append(t.ring, id)
	if len(t.ring) > seenMax {
		delete(t.seen, t.ring[0])
		t.ring = t.ring[1:]
	}
	t.last = id
	if t.JSON {
		var b bytes.Buffer
		if json.Compact(&b, data) == nil {
			data = b.Bytes()
		}
		t.Out.Write(append(data, '\n'))
		return true
	}
	fmt.Fprintln(t.Out, eventLine(&e))
	return true
}

// eventLine is an event as tail prints it: local time, icon, #channel, event, tags.
func eventLine(e *tidings.EventJSON) string {
	var b strings.Builder
	b.WriteString(time.Unix(e.Timestamp, 0).Local().Format("2006-01-02 15:04:05"))
	b.WriteString("  ")
	if e.Icon != "" {
		b.WriteString(printable(e.Icon) + " ")
	}
	b.WriteString("#" + printable(e.Channel) + "  " + printable(e.Event))
	for _, tag := range e.Tags {
		v := printable(tag.Value)
		if v == "" || strings.ContainsAny(v, " \"") {
			v = strconv.Quote(v)
		}
		b.WriteString("  " + printable(tag.Key) + "=" + v)
	}
	return b.String()
}

// printable replaces control characters (a terminal's escape sequences) with U+FFFD.
func printable(s string) string {
	return strings.Map(func(r rune) rune {
		if r < ' ' || r == 0x7f || r >= 0x80 && r < 0xa0 {
			return '\uFFFD'
		}
		return r
	}, s)
}

// refusalText is the one line an error answer becomes: the problem's detail, or the
// status and the start of a proxy's page.
func refusalText(res *http.Response, b []byte) string {
	var p struct {
		Status int    `json:"status"`
		Code   string `json:"code"`
		Detail string `json:"detail"`
	}
	if json.Unmarshal(b, &p) == nil && p.Detail != "" {
		return fmt.Sprintf("%s (%d %s)", p.Detail, res.StatusCode, p.Code)
	}
	text := strings.Join(strings.Fields(string(b)), " ")
	if len(text) > 200 {
		text = text[:200] + "…"
	}
	return strings.TrimSpace(fmt.Sprintf("%s answered %s %s", res.Request.URL.Redacted(), res.Status, text))
}
