// Package client publishes events and insights to a Tidings server and reads them
// back, with the server's own types: what cron jobs, deploy scripts and Go programs
// use, and what `tidings publish` and `tidings insight` are built on.
//
//	c := client.New("https://tidings.example.com", os.Getenv("TIDINGS_TOKEN"))
//	ev, err := c.Publish(ctx, &tidings.NewEvent{Project: "my-saas", Channel: "deploys", Event: "Deployed v1.4"})
//	var p *client.Problem
//	if errors.As(err, &p) { … p.Code, p.Detail, p.Fields … }
//
// Every write is sent with an Idempotency-Key (a random one, or the caller's:
// client.IdempotencyKey), and a write whose answer was lost to the network, or that
// the server refused with 503 or 409 idempotency_in_progress, is sent again with the
// same key after a backoff: the server applies it once however many times it arrives.
package client

import (
	"bytes"
	"cmp"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	mrand "math/rand/v2"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/tidings-dev/tidings"
)

// Client talks to one Tidings server with one API token. Its methods are safe for
// concurrent use.
type Client struct {
	URL   string       // the server's base URL, e.g. https://tidings.example.com
	Token string       // an API token (tds_…)
	HTTP  *http.Client // nil: one with a 30-second timeout
	// Attempts is how many times a request is sent at most (0: DefaultAttempts; 1: no
	// retry). Backoff is the first wait between attempts, doubled each time, with
	// jitter, and replaced by the server's Retry-After when it sends one (0: DefaultBackoff).
	Attempts int
	Backoff  time.Duration
}

// Retry defaults: five attempts over about eight seconds.
const (
	DefaultAttempts = 5
	DefaultBackoff  = 500 * time.Millisecond
	maxWait         = 30 * time.Second
)

// An Option changes one request.
type Option func(*request)

type request struct {
	key string
}

// IdempotencyKey sends the write with this key instead of a random one: a write sent
// again with the same key within a day (by another process, after a crash) is applied
// once. Keys are 1 to 255 printable ASCII characters.
func IdempotencyKey(key string) Option { return func(r *request) { r.key = key } }

func keyOf(opts []Option) string {
	r := request{}
	for _, o := range opts {
		o(&r)
	}
	if r.key == "" {
		r.key = rand.Text()
	}
	return r.key
}

// New returns a client of the server at baseURL using token.
func New(baseURL, token string) *Client {
	return &Client{URL: strings.TrimRight(baseURL, "/"), Token: token}
}

// DefaultURL is the server a client addresses when TIDINGS_URL is not set: the
// address `tidings serve` listens on by default.
const DefaultURL = "http://127.0.0.1:8080"

// FromEnv returns a client configured by TIDINGS_URL (default DefaultURL) and
// TIDINGS_TOKEN, which is required.
func FromEnv() (*Client, error) {
	token := os.Getenv("TIDINGS_TOKEN")
	if token == "" {
		return nil, errors.New("TIDINGS_TOKEN is not set: create a token in Settings → API (or `tidings token create`) and export it")
	}
	u := os.Getenv("TIDINGS_URL")
	if u == "" {
		u = DefaultURL
	}
	return New(u, token), nil
}

var defaultHTTP = &http.Client{Timeout: 30 * time.Second}

// Problem is an error answer of the server (RFC 9457 problem details): Code is one of
// the contract's codes (validation_failed, rate_limited, …), Detail says what to fix,
// Fields the problems of each field. errors.As finds it; tidings.ErrorCode reads its code.
type Problem struct {
	Status    int                  `json:"status"`
	Title     string               `json:"title"`
	Code      string               `json:"code"`
	Detail    string               `json:"detail"`
	RequestID string               `json:"request_id,omitempty"`
	Fields    []tidings.FieldError `json:"-"`
}

func (p *Problem) Error() string {
	return fmt.Sprintf("%s (%d %s)", p.Detail, p.Status, p.Code)
}

// Unwrap gives the problem as the domain's error, so that tidings.ErrorCode works.
func (p *Problem) Unwrap() error {
	return &tidings.Error{Code: p.Code, Message: p.Detail, Fields: p.Fields}
}

// Publish sends one event (POST /v1/log) and returns it as stored. Its fields are
// checked by the server (the client sends them as they are).
func (c *Client) Publish(ctx context.Context, e *tidings.NewEvent, opts ...Option) (*tidings.Event, error) {
	var out tidings.EventJSON
	if err := c.do(ctx, "POST", "/v1/log", keyOf(opts), eventBody(e), &out); err != nil {
		return nil, err
	}
	return eventOf(out), nil
}

// MaxBatch is the most events PublishBatch takes: what the server takes in one batch.
const MaxBatch = 100

// PublishBatch sends up to MaxBatch events in one request (POST /v1/log/batch), stored
// in one commit, and returns each one's outcome in order: the stored event, or the
// *Problem that refused it. The error is the request's own (nothing was stored).
func (c *Client) PublishBatch(ctx context.Context, events []*tidings.NewEvent, opts ...Option) ([]tidings.Published, error) {
	body := struct {
		Events []map[string]any `json:"events"`
	}{}
	for _, e := range events {
		body.Events = append(body.Events, eventBody(e))
	}
	return c.sendBatch(ctx, keyOf(opts), body)
}

// PublishRaw is PublishBatch for events already in the JSON shape POST /v1/log takes.
func (c *Client) PublishRaw(ctx context.Context, events []json.RawMessage, opts ...Option) ([]tidings.Published, error) {
	return c.sendBatch(ctx, keyOf(opts), struct {
		Events []json.RawMessage `json:"events"`
	}{events})
}

func (c *Client) sendBatch(ctx context.Context, key string, body any) ([]tidings.Published, error) {
	var out struct {
		Results []struct {
			Status int                `json:"status"`
			Event  *tidings.EventJSON `json:"event"`
			Error  *json.RawMessage   `json:"error"`
		} `json:"results"`
	}
	if err := c.do(ctx, "POST", "/v1/log/batch", key, body, &out); err != nil {
		return nil, err
	}
	res := make([]tidings.Published, len(out.Results))
	for i, r := range out.Results {
		switch {
		case r.Event != nil:
			res[i].Event = eventOf(*r.Event)
		case r.Error != nil:
			res[i].Err = problemFrom(r.Status, *r.Error)
		default:
			res[i].Err = &Problem{Status: r.Status, Code: tidings.EInternal, Detail: fmt.Sprintf("the server answered %d without a reason", r.Status)}
		}
	}
	return res, nil
}

// eventBody is an event in the shape POST /v1/log takes.
func eventBody(e *tidings.NewEvent) map[string]any {
	body := map[string]any{"project": e.Project, "channel": e.Channel, "event": e.Event}
	if e.Description != "" {
		body["description"] = e.Description
	}
	if e.Icon != "" {
		body["icon"] = e.Icon
	}
	if e.Notify {
		body["notify"] = true
	}
	if len(e.Tags) > 0 {
		body["tags"] = e.Tags
	}
	if e.Parser != "" {
		body["parser"] = e.Parser
	}
	if e.UserID != "" {
		body["user_id"] = e.UserID
	}
	if !e.Timestamp.IsZero() {
		body["timestamp"] = json.Number(strconv.FormatFloat(float64(e.Timestamp.UnixMilli())/1000, 'f', -1, 64))
	}
	if e.Priority != "" {
		body["priority"] = e.Priority
	}
	if e.URL != "" {
		body["url"] = e.URL
	}
	if len(e.Actions) > 0 {
		body["actions"] = e.Actions
	}
	if e.ThreadKey != "" {
		body["key"] = e.ThreadKey
	}
	return body
}

// Insight applies a change to an insight (POST /v1/insight) and returns the insight
// after it. ValueKind says how Value is sent: a number, a boolean or a string.
func (c *Client) Insight(ctx context.Context, ch *tidings.InsightChange, opts ...Option) (*tidings.Insight, error) {
	body := map[string]any{"project": ch.Project, "title": ch.Title, "change": ch.Change}
	switch ch.ValueKind {
	case tidings.KindNumber, tidings.KindBool:
		body["value"] = json.RawMessage(ch.Value)
	default:
		body["value"] = ch.Value
	}
	for k, v := range map[string]*string{"prefix": ch.Prefix, "suffix": ch.Suffix, "icon": ch.Icon} {
		if v != nil {
			body[k] = *v
		}
	}
	var out struct {
		Project, Title, Value, Prefix, Suffix, Icon, Change string
		UpdatedAt                                           time.Time `json:"updated_at"`
	}
	if err := c.do(ctx, "POST", "/v1/insight", keyOf(opts), body, &out); err != nil {
		return nil, err
	}
	return &tidings.Insight{Project: out.Project, Title: out.Title, Value: out.Value, Prefix: out.Prefix, Suffix: out.Suffix,
		Icon: out.Icon, Change: out.Change, UpdatedAt: out.UpdatedAt}, nil
}

// Events reads one page of a project's events, newest first (GET /v1/events; a full
// token). Search is the q= syntax (words, key:value, since:7d); page on with
// q.Before = page.Next.
func (c *Client) Events(ctx context.Context, q tidings.EventQuery, search string) (*tidings.EventPage, error) {
	v := url.Values{"project": {q.Project}}
	if q.Channel != "" {
		v.Set("channel", q.Channel)
	}
	for _, t := range q.Tags {
		v.Add("tag", t.Key+":"+t.Value)
	}
	if search != "" {
		v.Set("q", search)
	}
	if q.Before != "" {
		v.Set("before", q.Before)
	}
	if q.Limit > 0 {
		v.Set("limit", strconv.Itoa(q.Limit))
	}
	var out struct {
		Events []tidings.EventJSON `json:"events"`
		Next   string              `json:"next"`
	}
	if err := c.do(ctx, "GET", "/v1/events?"+v.Encode(), "", nil, &out); err != nil {
		return nil, err
	}
	page := &tidings.EventPage{Events: make([]*tidings.Event, len(out.Events)), Next: out.Next}
	for i, e := range out.Events {
		page.Events[i] = eventOf(e)
	}
	return page, nil
}

func eventOf(e tidings.EventJSON) *tidings.Event {
	ev := &tidings.Event{ID: e.ID, Project: e.Project, Channel: e.Channel, Event: e.Event, Description: e.Description,
		Icon: e.Icon, Notify: e.Notify, Tags: e.Tags, Parser: e.Parser, UserID: e.UserID,
		Timestamp: time.Unix(e.Timestamp, 0).UTC(), CreatedAt: e.CreatedAt,
		URL: e.URL, Actions: e.Actions, ThreadKey: e.Key}
	ev.Priority, _ = tidings.ParsePriority(e.Priority)
	if e.Ack != nil {
		ev.Ack = &tidings.Ack{By: e.Ack.By, At: e.Ack.At}
	}
	return ev
}

// Acknowledge acknowledges an event (POST /v1/events/{id}/ack; a full token with the
// log role) and returns it with its acknowledgement: the first one, when it was
// acknowledged before.
func (c *Client) Acknowledge(ctx context.Context, eventID string) (*tidings.Event, error) {
	var out tidings.EventJSON
	if err := c.do(ctx, "POST", "/v1/events/"+url.PathEscape(eventID)+"/ack", "", nil, &out); err != nil {
		return nil, err
	}
	return eventOf(out), nil
}

// Press presses one of an event's id actions (POST /v1/events/{id}/actions/{action_id};
// a full token with the log role) and returns the event and the press recorded.
func (c *Client) Press(ctx context.Context, eventID, actionID string) (*tidings.Event, *tidings.ActionPress, error) {
	var out struct {
		Event tidings.EventJSON `json:"event"`
		Press struct {
			ID, Action, Label, By, Via string
			At                         time.Time
		} `json:"press"`
	}
	if err := c.do(ctx, "POST", "/v1/events/"+url.PathEscape(eventID)+"/actions/"+url.PathEscape(actionID), "", nil, &out); err != nil {
		return nil, nil, err
	}
	ev := eventOf(out.Event)
	return ev, &tidings.ActionPress{ID: out.Press.ID, EventID: ev.ID, ActionID: out.Press.Action, Label: out.Press.Label,
		By: out.Press.By, Via: out.Press.Via, At: out.Press.At}, nil
}

// maxAnswer bounds how much of an answer is read.
const maxAnswer = 4 << 20

// do sends a request, and again after a backoff while the answer is lost to the
// network or says to retry (503, or 409 idempotency_in_progress). A write goes only
// with an idempotency key (key), which every attempt repeats: a write whose first
// attempt was stored is answered with that first answer, not stored twice.
func (c *Client) do(ctx context.Context, method, path, key string, body, out any) error {
	var payload []byte
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		payload = b
	}
	attempts := cmp.Or(c.Attempts, DefaultAttempts)
	wait := cmp.Or(c.Backoff, DefaultBackoff)
	for attempt := 1; ; attempt++ {
		retryAfter, err := c.once(ctx, method, path, key, payload, out)
		if err == nil || attempt >= attempts || ctx.Err() != nil || !retryable(err) || method != "GET" && key == "" {
			return err
		}
		pause := retryAfter
		if pause <= 0 {
			pause = wait/2 + mrand.N(wait) // jitter: retries of many clients do not arrive together
			wait *= 2
		}
		t := time.NewTimer(min(pause, maxWait))
		select {
		case <-ctx.Done():
			t.Stop()
			return err
		case <-t.C:
		}
	}
}

// retryable tells whether a request that failed with err may succeed if sent again.
func retryable(err error) bool {
	var p *Problem
	if errors.As(err, &p) {
		return p.Status == http.StatusServiceUnavailable || p.Code == tidings.EKeyInProgress
	}
	return true // the network: the request may or may not have arrived
}

// once sends a request once; retryAfter is the server's Retry-After, if it sent one.
func (c *Client) once(ctx context.Context, method, path, key string, payload []byte, out any) (retryAfter time.Duration, err error) {
	var rd io.Reader
	if payload != nil {
		rd = bytes.NewReader(payload)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.URL+path, rd)
	if err != nil {
		return 0, err
	}
	req.Header.Set("Authorization", "Bearer "+c.Token)
	req.Header.Set("Accept", "application/json")
	if payload != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if key != "" {
		req.Header.Set("Idempotency-Key", key)
	}
	h := c.HTTP
	if h == nil {
		h = defaultHTTP
	}
	res, err := h.Do(req)
	if err != nil {
		return 0, err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(io.LimitReader(res.Body, maxAnswer))
	if err != nil {
		return 0, err
	}
	if res.StatusCode/100 != 2 {
		secs, _ := strconv.Atoi(res.Header.Get("Retry-After"))
		return time.Duration(secs) * time.Second, problemOf(res, b)
	}
	if err := json.Unmarshal(b, out); err != nil {
		return 0, fmt.Errorf("%s %s: the answer is not what a Tidings server sends (%v)", method, c.URL+path, err)
	}
	return 0, nil
}

// problemOf reads an error answer; one that is not problem details (a proxy's page)
// becomes a Problem with its status and the start of its text.
func problemOf(res *http.Response, b []byte) error {
	var p struct {
		Problem
		Validation struct {
			Body  []tidings.FieldError `json:"body"`
			Query []tidings.FieldError `json:"query"`
		} `json:"validation"`
	}
	if err := json.Unmarshal(b, &p); err != nil || p.Code == "" {
		text := strings.TrimSpace(string(b))
		if len(text) > 200 {
			text = text[:200] + "…"
		}
		return &Problem{Status: res.StatusCode, Title: http.StatusText(res.StatusCode), Code: tidings.EInternal,
			Detail: fmt.Sprintf("%s %s answered %s: %s", res.Request.Method, res.Request.URL.Redacted(), res.Status, text)}
	}
	p.Problem.Fields = append(p.Validation.Body, p.Validation.Query...)
	return &p.Problem
}

// problemFrom reads one event's problem in a batch's answer.
func problemFrom(status int, raw json.RawMessage) error {
	var p struct {
		Problem
		Validation struct {
			Body []tidings.FieldError `json:"body"`
		} `json:"validation"`
	}
	if err := json.Unmarshal(raw, &p); err != nil || p.Code == "" {
		return &Problem{Status: status, Code: tidings.EInternal, Detail: "the server's reason could not be read"}
	}
	p.Problem.Fields = p.Validation.Body
	return &p.Problem
}
