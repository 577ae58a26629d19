package browser

import (
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/tidings-dev/tidings/internal/testenv"
)

func serve(t *testing.T, method, target string, header ...string) *http.Response {
	t.Helper()
	mux := http.NewServeMux()
	Register(mux)
	r := httptest.NewRequest(method, target, nil)
	for i := 0; i+1 < len(header); i += 2 {
		r.Header.Set(header[i], header[i+1])
	}
	w := httptest.NewRecorder()
	mux.ServeHTTP(w, r)
	return w.Result()
}

func TestScripts(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		path   string
		script *Script
	}{{"/ls.js", LS}, {"/web/ls.js", LS}, {"/feedback/ls.js", Feedback}} {
		t.Run(c.path, func(t *testing.T) {
			t.Parallel()
			res := serve(t, "GET", c.path)
			body, _ := io.ReadAll(res.Body)
			if res.StatusCode != 200 || !bytes.Equal(body, c.script.Body()) {
				t.Fatalf("GET %s: %d, %d bytes", c.path, res.StatusCode, len(body))
			}
			for k, want := range map[string]string{
				"Content-Type":                 "application/javascript; charset=utf-8",
				"Access-Control-Allow-Origin":  "*",
				"Cross-Origin-Resource-Policy": "cross-origin",
				"X-Content-Type-Options":       "nosniff",
				"Cache-Control":                "public, max-age=3600",
				"ETag":                         `W/"` + c.script.Version() + `"`,
			} {
				if got := res.Header.Get(k); got != want {
					t.Errorf("%s: %q, want %q", k, got, want)
				}
			}

			// The versioned URL is immutable; another version (a page that kept an old
			// one) gets today's script but not for a year.
			if got := serve(t, "GET", c.path+"?v="+c.script.Version()).Header.Get("Cache-Control"); got != "public, max-age=31536000, immutable" {
				t.Errorf("versioned Cache-Control: %q", got)
			}
			if got := serve(t, "GET", c.path+"?v=0123456789ab").Header.Get("Cache-Control"); got != "public, max-age=3600" {
				t.Errorf("another version's Cache-Control: %q", got)
			}

			res = serve(t, "GET", c.path, "If-None-Match", `W/"`+c.script.Version()+`"`)
			if body, _ := io.ReadAll(res.Body); res.StatusCode != http.StatusNotModified || len(body) != 0 {
				t.Errorf("If-None-Match with the version: %d, %d bytes", res.StatusCode, len(body))
			}
			if res := serve(t, "GET", c.path, "If-None-Match", `W/"0123456789ab"`); res.StatusCode != 200 {
				t.Errorf("If-None-Match with another version: %d", res.StatusCode)
			}

			res = serve(t, "HEAD", c.path)
			if body, _ := io.ReadAll(res.Body); res.StatusCode != 200 || len(body) != 0 || res.Header.Get("ETag") == "" {
				t.Errorf("HEAD: %d, %d bytes, ETag %q", res.StatusCode, len(body), res.Header.Get("ETag"))
			}
			for _, m := range []string{"POST", "PUT", "DELETE", "OPTIONS"} {
				if res := serve(t, m, c.path); res.StatusCode != http.StatusMethodNotAllowed || res.Header.Get("Allow") != "GET, HEAD" {
					t.Errorf("%s: %d, Allow %q", m, res.StatusCode, res.Header.Get("Allow"))
				}
			}
		})
	}
}

// TestVersion: the version is the content's hash, so it changes with the script.
func TestVersion(t *testing.T) {
	t.Parallel()
	if !regexp.MustCompile(`^[0-9a-f]{12}$`).MatchString(LS.Version()) || LS.Version() == Feedback.Version() {
		t.Fatalf("versions %q and %q", LS.Version(), Feedback.Version())
	}
	if newScript(append([]byte("// changed\n"), lsJS...)).Version() == LS.Version() {
		t.Fatal("a changed script kept its version")
	}
}

// TestSmall: ls.js loads on every page of a website: at most 5 KB compressed.
func TestSmall(t *testing.T) {
	t.Parallel()
	for name, s := range map[string]*Script{"ls.js": LS, "feedback.js": Feedback} {
		var b bytes.Buffer
		z, _ := gzip.NewWriterLevel(&b, gzip.BestCompression)
		z.Write(s.Body())
		z.Close()
		t.Logf("%s: %d bytes, %d gzipped", name, len(s.Body()), b.Len())
		if name == "ls.js" && b.Len() > 5000 {
			t.Errorf("ls.js is %d bytes gzipped: more than 5 KB", b.Len())
		}
	}
}

// TestNoDependencies: the scripts load nothing else and set no cookies.
func TestNoDependencies(t *testing.T) {
	t.Parallel()
	for name, s := range map[string]*Script{"ls.js": LS, "feedback.js": Feedback} {
		src := string(s.Body())
		for _, bad := range []string{"import ", "import(", "require(", "document.cookie", "eval(", "new Function"} {
			if strings.Contains(src, bad) {
				t.Errorf("%s contains %q", name, bad)
			}
		}
	}
}

// TestLsJSInNode runs ls.js in Node with a stand-in for the page (testdata/ls_node.js):
// the queue replayed, what track and identify send, page views in batches of at most 20
// with query strings cleaned, clearUserId, and GPC. The Chromium tests of cmd/tidings
// run it in a real browser against a real server.
func TestLsJSInNode(t *testing.T) {
	t.Parallel()
	node, err := exec.LookPath("node")
	if err != nil {
		testenv.Need(t, "Node.js is needed to run ls.js outside a browser: apt-get install nodejs")
	}
	dir := t.TempDir()
	script := filepath.Join(dir, "ls.js")
	if err := os.WriteFile(script, LS.Body(), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(node, filepath.Join("testdata", "ls_node.js"), script).CombinedOutput()
	if err != nil || strings.TrimSpace(string(out)) != "ok" {
		t.Fatalf("%v\n%s", err, out)
	}
}
