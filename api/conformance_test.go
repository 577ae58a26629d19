package api_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"gopkg.in/yaml.v3"

	"github.com/tidings-dev/tidings/api"
	"github.com/tidings-dev/tidings/docs"
)

// documented checks every exchange the API tests make against docs/openapi.yaml: the
// answer's status is one the operation lists, its body validates against that answer's
// schema, and a request the server accepted (2xx) validates against the request body's
// schema. So the document cannot drift from the server while the tests pass.
var documented = sync.OnceValues(loadDocument)

type document struct {
	doc      map[string]any
	compiler *jsonschema.Compiler
	paths    []docPath
	mu       sync.Mutex
	schemas  map[string]*jsonschema.Schema
}

type docPath struct {
	pattern *regexp.Regexp
	ptr     string // JSON pointer of the path item, its $ref followed
}

func loadDocument() (*document, error) {
	var raw any
	if err := yaml.Unmarshal(docs.OpenAPI, &raw); err != nil {
		return nil, err
	}
	b, err := json.Marshal(raw)
	if err != nil {
		return nil, err
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		return nil, err
	}
	d := &document{doc: v.(map[string]any), compiler: jsonschema.NewCompiler(), schemas: map[string]*jsonschema.Schema{}}
	d.compiler.AssertFormat()
	if err := d.compiler.AddResource("openapi.json", d.doc); err != nil {
		return nil, err
	}
	for path, item := range d.doc["paths"].(map[string]any) {
		ptr := "/paths/" + strings.ReplaceAll(path, "/", "~1")
		if ref, ok := item.(map[string]any)["$ref"].(string); ok {
			ptr = strings.TrimPrefix(ref, "#")
		}
		re := regexp.QuoteMeta(path)
		re = regexp.MustCompile(`\\\{[a-z_]+\\\}`).ReplaceAllString(re, `[^/]+`)
		d.paths = append(d.paths, docPath{regexp.MustCompile("^" + re + "$"), ptr})
	}
	return d, nil
}

// resolve follows a JSON pointer, and a $ref where it lands on one.
func (d *document) resolve(ptr string) (any, string) {
	v := api.LookupPointer(d.doc, ptr)
	if m, ok := v.(map[string]any); ok {
		if ref, ok := m["$ref"].(string); ok {
			ptr = strings.TrimPrefix(ref, "#")
			v = api.LookupPointer(d.doc, ptr)
		}
	}
	return v, ptr
}

func (d *document) schema(ptr string) (*jsonschema.Schema, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if s, ok := d.schemas[ptr]; ok {
		return s, nil
	}
	s, err := d.compiler.Compile("openapi.json#" + ptr)
	if err == nil {
		d.schemas[ptr] = s
	}
	return s, err
}

// validate checks one exchange; it returns what does not match the document.
func (d *document) validate(method, path string, reqBody string, status int, contentType string, body []byte) error {
	op := ""
	for _, p := range d.paths {
		if p.pattern.MatchString(path) {
			op = p.ptr + "/" + strings.ToLower(method)
		}
	}
	if op == "" || api.LookupPointer(d.doc, op) == nil {
		return nil // not an operation of the document: a 404 or 405 of the router, a preflight
	}
	resp, respPtr := d.resolve(fmt.Sprintf("%s/responses/%d", op, status))
	if resp == nil {
		return fmt.Errorf("status %d is not among the answers the document lists for %s %s", status, method, path)
	}
	media := strings.TrimSpace(strings.Split(contentType, ";")[0])
	if content, ok := resp.(map[string]any)["content"].(map[string]any); ok && len(content) > 0 {
		if _, ok := content[media]; !ok {
			return fmt.Errorf("%s %s %d: Content-Type %q is not the document's (%v)", method, path, status, media, content)
		}
		if media == "application/json" || strings.HasSuffix(media, "+json") {
			sch, err := d.schema(respPtr + "/content/" + strings.ReplaceAll(media, "/", "~1") + "/schema")
			if err != nil {
				return fmt.Errorf("%s %s %d: %v", method, path, status, err)
			}
			v, err := jsonschema.UnmarshalJSON(bytes.NewReader(body))
			if err != nil {
				return fmt.Errorf("%s %s %d: the answer is not JSON: %v", method, path, status, err)
			}
			if err := sch.Validate(v); err != nil {
				return fmt.Errorf("%s %s %d: the answer does not match the document: %v\n%s", method, path, status, err, body)
			}
		}
	}
	if status >= 200 && status < 300 && reqBody != "" {
		if _, ptr := d.resolve(op + "/requestBody"); api.LookupPointer(d.doc, ptr) != nil {
			sch, err := d.schema(ptr + "/content/application~1json/schema")
			if err != nil {
				return fmt.Errorf("%s %s: %v", method, path, err)
			}
			v, err := jsonschema.UnmarshalJSON(strings.NewReader(reqBody))
			if err == nil {
				if err := sch.Validate(v); err != nil {
					return fmt.Errorf("%s %s: the server accepted a body the document calls invalid: %v\n%s", method, path, err, reqBody)
				}
			}
		}
	}
	return nil
}

// conform checks an exchange of a test against the document.
func conform(t testing.TB, req *http.Request, reqBody string, res *http.Response, body []byte) {
	t.Helper()
	d, err := documented()
	if err != nil {
		t.Fatalf("docs/openapi.yaml: %v", err)
	}
	if err := d.validate(req.Method, req.URL.Path, reqBody, res.StatusCode, res.Header.Get("Content-Type"), body); err != nil {
		t.Errorf("docs/openapi.yaml: %v", err)
	}
}
