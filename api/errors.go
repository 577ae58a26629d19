package api

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"sync"

	"github.com/tidings-dev/tidings"
)

type problem struct {
	Status int    `json:"status"`
	Title  string `json:"title"`
	Code   string `json:"code"`
	Detail string `json:"detail"`
	// Message repeats Detail: LogSnag's Python and Ruby SDKs print only a top-level
	// message (the others validation.body[].message).
	Message    string           `json:"message"`
	Validation *validationBlock `json:"validation,omitempty"`
	RequestID  string           `json:"request_id,omitempty"`
}

// validationBlock says which fields are at fault: of the body (where the LogSnag SDKs
// look for error messages) or of the query string (GET and DELETE requests).
type validationBlock struct {
	Body  []tidings.FieldError `json:"body,omitempty"`
	Query []tidings.FieldError `json:"query,omitempty"`
}

// WriteError writes err as application/problem+json (RFC 9457). Internal errors are
// logged with the request id and answered with a generic message.
func WriteError(w http.ResponseWriter, r *http.Request, log *slog.Logger, err error) {
	info := infoFrom(r.Context())
	if errors.Is(err, context.Canceled) && r.Context().Err() != nil {
		// The client hung up while its request waited (for example for its commit):
		// nobody reads an answer, and it is no fault of the server. A publish that
		// was queued is still committed.
		log.DebugContext(r.Context(), "client went away", "request_id", info.requestID)
		w.WriteHeader(499) // nginx's "client closed request", for the access log
		return
	}
	code := tidings.ErrorCode(err)
	if code == tidings.EInternal {
		log.ErrorContext(r.Context(), "internal error", "err", err, "request_id", info.requestID,
			"method", r.Method, "route", r.Pattern)
	}
	p := problemOf(r, err)
	p.RequestID = info.requestID
	switch code {
	case tidings.EMissingToken:
		w.Header().Set("WWW-Authenticate", `Bearer realm="tidings"`)
	case tidings.EInvalidToken:
		w.Header().Set("WWW-Authenticate", `Bearer realm="tidings", error="invalid_token"`)
	case tidings.EUnavailable:
		if w.Header().Get("Retry-After") == "" {
			w.Header().Set("Retry-After", "5")
		}
	}
	w.Header().Set("Content-Type", "application/problem+json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(p.Status)
	newEncoder(w).Encode(p)
}

// problemOf is err as problem details, without a request id.
func problemOf(r *http.Request, err error) *problem {
	code := tidings.ErrorCode(err)
	p := &problem{Status: tidings.HTTPStatus(code), Title: tidings.ErrorTitle(code), Code: code, Detail: tidings.ErrorMessage(err)}
	p.Message = p.Detail
	var e *tidings.Error
	switch {
	case errors.As(err, &e) && len(e.Fields) > 0 && (r.Method == http.MethodGet || r.Method == http.MethodHead || r.Method == http.MethodDelete):
		p.Validation = &validationBlock{Query: e.Fields} // their fields are query parameters
	case errors.As(err, &e) && len(e.Fields) > 0:
		p.Validation = &validationBlock{Body: e.Fields}
	default:
		// The LogSnag SDKs print validation.body[].message and nothing else: every
		// error says there what detail says.
		p.Validation = &validationBlock{Body: []tidings.FieldError{{Path: "", Type: code, Message: p.Detail}}}
	}
	return p
}

// writeJSON answers 200 with v.
func writeJSON(w http.ResponseWriter, v any) error {
	h := w.Header()
	h["Content-Type"] = jsonType
	h["Cache-Control"] = noStore
	if a, ok := v.(jsonAppender); ok {
		buf := answerBuffers.Get().(*[]byte)
		b := append(a.AppendJSON((*buf)[:0]), '\n')
		_, err := w.Write(b)
		if cap(b) <= 64<<10 {
			*buf = b
			answerBuffers.Put(buf)
		}
		return err
	}
	return newEncoder(w).Encode(v)
}

// jsonAppender is an answer that writes itself as encoding/json would, without
// reflection: the publishing path's (an event, an insight).
type jsonAppender interface {
	AppendJSON([]byte) []byte
}

// answerBuffers are the buffers answers are appended to, reused across requests.
var answerBuffers = sync.Pool{New: func() any { b := make([]byte, 0, 1024); return &b }}

// The headers of every JSON answer, shared: set without canonicalising or allocating
// (no handler changes them in place).
var (
	jsonType = []string{"application/json"}
	noStore  = []string{"no-store"}
)

// newEncoder writes JSON as it is ("<token>", not "\u003ctoken\u003e"): answers are
// never embedded in HTML.
func newEncoder(w io.Writer) *json.Encoder {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return enc
}
