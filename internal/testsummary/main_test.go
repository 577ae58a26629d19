package main

import (
	"strings"
	"testing"
)

// TestSummarize: result lines and failed tests' output pass through, passing tests'
// output does not, and the slowest tests are listed, slowest first.
func TestSummarize(t *testing.T) {
	in := strings.Join([]string{
		`{"Action":"run","Package":"m/a","Test":"TestFast"}`,
		`{"Action":"output","Package":"m/a","Test":"TestFast","Output":"=== RUN   TestFast\n"}`,
		`{"Action":"pass","Package":"m/a","Test":"TestFast","Elapsed":0.1}`,
		`{"Action":"output","Package":"m/a","Test":"TestSlow","Output":"    slow_test.go:9: it broke\n"}`,
		`{"Action":"fail","Package":"m/a","Test":"TestSlow","Elapsed":7.5}`,
		`{"Action":"pass","Package":"m/a","Test":"TestSlow/sub","Elapsed":7.4}`,
		`{"Action":"output","Package":"m/a","Output":"FAIL\tm/a\t8.000s\n"}`,
		`{"Action":"output","Package":"m/b","Output":"ok  \tm/b\t1.000s\n"}`,
		`{"Action":"pass","Package":"m/b","Test":"TestB","Elapsed":0.9}`,
		`# m/c: a build error`,
	}, "\n")
	var out strings.Builder
	if n := summarize(strings.NewReader(in), &out, 2); n != 3 {
		t.Fatalf("counted %d tests, want 3", n)
	}
	got := out.String()
	for _, want := range []string{"it broke", "FAIL\tm/a\t8.000s", "ok  \tm/b\t1.000s", "# m/c: a build error",
		"The 2 slowest of 3 tests", "7.5s  m/a.TestSlow\n     0.9s  m/b.TestB", "\ntests: 2 passed, 1 failed, 0 skipped\n"} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "=== RUN") {
		t.Errorf("a passing test's output was printed:\n%s", got)
	}
}
