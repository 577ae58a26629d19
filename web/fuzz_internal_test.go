package web

import (
	"net/url"
	"strings"
	"testing"

	"github.com/tidings-dev/tidings/internal/testbackend"
)

// browserResolve reads a redirect target the way a browser does (WHATWG URL): tabs and
// line breaks are dropped, a backslash counts as a slash, and the result is resolved
// against the page's own address.
func browserResolve(target string) (*url.URL, error) {
	cleaned := strings.Map(func(r rune) rune {
		switch r {
		case '\t', '\n', '\r':
			return -1
		case '\\':
			return '/'
		}
		return r
	}, strings.Trim(target, "\x00 \x01\x02\x03\x04\x05\x06\x07\x08\x0b\x0c\x0e\x0f\x10\x11\x12\x13\x14\x15\x16\x17\x18\x19\x1a\x1b\x1c\x1d\x1e\x1f"))
	base, _ := url.Parse("https://tidings.example/login")
	ref, err := url.Parse(cleaned)
	if err != nil {
		return nil, err
	}
	return base.ResolveReference(ref), nil
}

func TestSafeNext(t *testing.T) {
	testbackend.Once(t)
	t.Parallel()
	for in, want := range map[string]string{
		"/p/my-saas":                    "/p/my-saas",
		"/p/x?tag=plan:premium":         "/p/x?tag=plan:premium",
		"":                              "",
		"//evil.example":                "",
		"/\\evil.example":               "",
		"/\t/evil.example":              "",
		"/\n/evil.example":              "",
		"/\r/evil.example":              "",
		"/\x00/evil.example":            "",
		"https://evil.example":          "",
		"evil.example":                  "",
		"javascript:alert(1)":           "",
		"/" + strings.Repeat("a", 3000): "",
	} {
		if got := safeNext(in); got != want {
			t.Errorf("safeNext(%q) = %q, want %q", in, got, want)
		}
	}
}

// FuzzSafeNext: whatever next= holds, the place a browser goes is this server.
func FuzzSafeNext(f *testing.F) {
	for _, s := range []string{"/p/x", "//evil", "/\\evil", "/\t/evil", "/%2f/evil", "/\u3000/evil", "/.//evil", "\\\\evil", "/ /evil"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, next string) {
		got := safeNext(next)
		if got == "" {
			return
		}
		u, err := browserResolve(got)
		if err != nil {
			return // the browser would not go anywhere
		}
		if u.Host != "tidings.example" || u.Scheme != "https" {
			t.Fatalf("safeNext(%q) = %q sends the browser to %s", next, got, u)
		}
	})
}

// FuzzSSEFrame: no data, however hostile, can start a line of its own: every line of a
// message is its id, its event name, or a "data:" field.
func FuzzSSEFrame(f *testing.F) {
	for _, s := range []string{"a\rid: 1", "a\nretry: 1", "a\r\nevent: x", "\r\r\n\n", "data", "id: 5"} {
		f.Add("01a2-id", s)
	}
	f.Fuzz(func(t *testing.T, id, data string) {
		frame := string(sseFrame(id, "event", data))
		if !strings.HasSuffix(frame, "\n\n") {
			t.Fatalf("frame does not end the message: %q", frame)
		}
		body := strings.TrimSuffix(frame, "\n\n")
		// Split as a browser does: CR LF, CR and LF each end a line.
		lines := strings.Split(strings.ReplaceAll(strings.ReplaceAll(body, "\r\n", "\n"), "\r", "\n"), "\n")
		for i, line := range lines {
			switch {
			case i == 0 && id != "" && strings.HasPrefix(line, "id: "):
			case (i == 0 && id == "" || i == 1 && id != "") && line == "event: event":
			case strings.HasPrefix(line, "data: "):
			default:
				t.Fatalf("line %d of the frame is %q (data %q)", i, line, data)
			}
			if line == "" {
				t.Fatalf("an empty line inside the frame ends the message early (data %q)", data)
			}
		}
		// The data comes back whole, line breaks normalised.
		var got []string
		for _, line := range lines {
			if strings.HasPrefix(line, "data: ") {
				got = append(got, strings.TrimPrefix(line, "data: "))
			}
		}
		want := strings.ReplaceAll(strings.ReplaceAll(data, "\r\n", "\n"), "\r", "\n")
		if strings.Join(got, "\n") != want {
			t.Fatalf("data %q came back as %q", data, strings.Join(got, "\n"))
		}
	})
}
