// Package client publishes events and insights to a Tidings server and reads them
// back, with the server's own types: what cron jobs, deploy scripts and Go programs
// use, and what `tidings publish` and `tidings insight` are built on.
//
//	c := client.New("https://tidings.example.com", os.Getenv("TIDINGS_TOKEN"))
//	ev, err := c.Publish(ctx, &tidings.NewEvent{Project: "my-saas", Channel: "deploys", Event: "Deployed v1.4"})
//	var p *client.Problem
//	if errors.As(err, &p) { … p.Code, p.Detail, p.Fields … }
package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
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
func (c *Client) Publish(ctx context.Context, e *tidings.NewEvent) (*tidings.Event, error) {
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
	var out tidings.EventJSON
	if err := c.do(ctx, "POST", "/v1/log", body, &out); err != nil {
		return nil, err
	}
	return eventOf(out), nil
}

// Insight applies a change to an insight (POST /v1/insight) and returns the insight
// after it. ValueKind says how Value is sent: a number, a boolean or a string.
func (c *Client) Insight(ctx context.Context, ch *tidings.InsightChange) (*tidings.Insight, error) {
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
	if err := c.do(ctx, "POST", "/v1/insight", body, &out); err != nil {
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
	if err := c.do(ctx, "GET", "/v1/events?"+v.Encode(), nil, &out); err != nil {
		return nil, err
	}
	page := &tidings.EventPage{Events: make([]*tidings.Event, len(out.Events)), Next: out.Next}
	for i, e := range out.Events {
		page.Events[i] = eventOf(e)
	}
	return page, nil
}

func eventOf(e tidings.EventJSON) *tidings.Event {
	return &tidings.Event{ID: e.ID, Project: e.Project, Channel: e.Channel, Event: e.Event, Description: e.Description,
		Icon: e.Icon, Notify: e.Notify, Tags: e.Tags, Parser: e.Parser, UserID: e.UserID,
		Timestamp: time.Unix(e.Timestamp, 0).UTC(), CreatedAt: e.CreatedAt}
}

// maxAnswer bounds how much of an answer is read.
const maxAnswer = 4 << 20

func (c *Client) do(ctx context.Context, method, path string, body, out any) error {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.URL+path, rd)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+c.Token)
	req.Header.Set("Accept", "application/json")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	h := c.HTTP
	if h == nil {
		h = defaultHTTP
	}
	res, err := h.Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(io.LimitReader(res.Body, maxAnswer))
	if err != nil {
		return err
	}
	if res.StatusCode/100 != 2 {
		return problemOf(res, b)
	}
	if err := json.Unmarshal(b, out); err != nil {
		return fmt.Errorf("%s %s: the answer is not what a Tidings server sends (%v)", method, c.URL+path, err)
	}
	return nil
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
