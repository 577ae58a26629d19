// Package tidings is the domain of the Tidings service: the types a team works with
// (accounts, projects, channels, tokens, events, insights), the rules that make them
// valid, the error codes every surface reports, and the interfaces that storage, live
// updates and delivery implement. It imports no other package of this module.
package tidings

import (
	"errors"
	"fmt"
	"net/http"
	"sort"
	"strings"
)

// Error codes. They are part of the public API: clients match on them, so a code is
// never renamed. Each has one HTTP status, the same on the API and the dashboard
// (HTTPStatus).
const (
	EInvalidJSON          = "invalid_json"
	EValidation           = "validation_failed"
	EUnsupportedMediaType = "unsupported_media_type"
	EMissingToken         = "missing_token"
	EInvalidToken         = "invalid_token"
	EForbidden            = "forbidden"
	EProjectNotFound      = "project_not_found"
	EChannelNotFound      = "channel_not_found"
	EInsightNotNumeric    = "insight_not_numeric"
	EPayloadTooLarge      = "payload_too_large"
	ERateLimited          = "rate_limited"
	EMethodNotAllowed     = "method_not_allowed"
	ENotFound             = "not_found"
	EConflict             = "conflict"
	ELimitReached         = "limit_reached"
	EKeyReused            = "idempotency_key_reused"
	EKeyInProgress        = "idempotency_in_progress"
	EUnavailable          = "unavailable"
	EInternal             = "internal"
)

// codeInfo is every code's one HTTP status and its title in problem details.
var codeInfo = map[string]struct {
	status int
	title  string
}{
	EInvalidJSON:          {http.StatusBadRequest, "Invalid JSON"},
	EValidation:           {http.StatusBadRequest, "Invalid request"},
	EUnsupportedMediaType: {http.StatusUnsupportedMediaType, "Unsupported media type"},
	EMissingToken:         {http.StatusUnauthorized, "Missing API token"},
	EInvalidToken:         {http.StatusUnauthorized, "Invalid API token"},
	EForbidden:            {http.StatusForbidden, "Forbidden"},
	EProjectNotFound:      {http.StatusNotFound, "Project not found"},
	EChannelNotFound:      {http.StatusNotFound, "Channel not found"},
	ENotFound:             {http.StatusNotFound, "Not found"},
	EMethodNotAllowed:     {http.StatusMethodNotAllowed, "Method not allowed"},
	EInsightNotNumeric:    {http.StatusConflict, "Insight is not numeric"},
	EConflict:             {http.StatusConflict, "Conflict"},
	ELimitReached:         {http.StatusConflict, "Limit reached"},
	EKeyReused:            {http.StatusUnprocessableEntity, "Idempotency key reused"},
	EKeyInProgress:        {http.StatusConflict, "Request in progress"},
	EPayloadTooLarge:      {http.StatusRequestEntityTooLarge, "Payload too large"},
	ERateLimited:          {http.StatusTooManyRequests, "Too many requests"},
	EUnavailable:          {http.StatusServiceUnavailable, "Service unavailable"},
	EInternal:             {http.StatusInternalServerError, "Internal error"},
}

// HTTPStatus returns the HTTP status of an error code: 500 for one it does not know.
func HTTPStatus(code string) int {
	if c, ok := codeInfo[code]; ok {
		return c.status
	}
	return http.StatusInternalServerError
}

// ErrorTitle returns the short title of an error code, as problem details give it.
func ErrorTitle(code string) string {
	if c, ok := codeInfo[code]; ok {
		return c.title
	}
	return codeInfo[EInternal].title
}

// FieldError is one validation problem of one field. Path is the dotted field path
// ("tags.plan"), Type a short machine word ("required", "pattern", "too_long", …).
type FieldError struct {
	Path    string `json:"path"`
	Type    string `json:"type"`
	Message string `json:"message"`
}

// Error is the one error type that carries a code to the client. Message is written for
// a person and is safe to show; anything else (driver errors, I/O) is an internal error
// whose text never leaves the server.
type Error struct {
	Code    string
	Message string
	Fields  []FieldError
}

func (e *Error) Error() string { return e.Code + ": " + e.Message }

// Errorf returns an *Error with the given code and a formatted message.
func Errorf(code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// ErrorCode returns the code of err, EInternal for errors that carry none, "" for nil.
func ErrorCode(err error) string {
	if err == nil {
		return ""
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return EInternal
}

// ErrorMessage returns the person-readable message of err; internal errors get a
// generic text so that their details stay on the server.
func ErrorMessage(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Message
	}
	return "Internal error."
}

// Problems collects field errors so that a request reports all of them at once.
type Problems []FieldError

// Add records a problem; the message is prefixed with the path for people reading it
// alone. A field gets one problem, the first found: the decoder's "must be a string"
// is more useful than a later "is required" for the same field.
func (p *Problems) Add(path, typ, format string, args ...any) {
	if p.Has(path) {
		return
	}
	msg := fmt.Sprintf(format, args...)
	if path != "" {
		msg = path + ": " + msg
	}
	*p = append(*p, FieldError{Path: path, Type: typ, Message: msg})
}

// Err returns a validation_failed *Error listing every problem, or nil if there are none.
func (p Problems) Err() error {
	if len(p) == 0 {
		return nil
	}
	msgs := make([]string, len(p))
	for i, f := range p {
		msgs[i] = f.Message
	}
	return &Error{Code: EValidation, Message: strings.Join(msgs, "; "), Fields: p}
}

// Has reports whether a problem was recorded for path.
func (p Problems) Has(path string) bool {
	for _, f := range p {
		if f.Path == path {
			return true
		}
	}
	return false
}

// SortBy orders the problems by the position of their field in order (the field before
// the first dot), keeping fields not in order last: people read them as the form reads.
func (p Problems) SortBy(order []string) {
	rank := func(path string) int {
		root, _, _ := strings.Cut(path, ".")
		for i, f := range order {
			if f == root {
				return i
			}
		}
		return len(order)
	}
	sort.SliceStable(p, func(i, j int) bool { return rank(p[i].Path) < rank(p[j].Path) })
}
