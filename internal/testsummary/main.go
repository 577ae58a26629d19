// Command testsummary reads `go test -json` on standard input and prints what plain
// `go test` prints — each package's result line, the output of the tests that failed —
// then the slowest tests. .ci/run pipes the test run through it.
//
//	go test -json ./... | go run ./internal/testsummary
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
)

// event is one line of `go test -json` (cmd/test2json).
type event struct {
	Action  string
	Package string
	Test    string
	Elapsed float64
	Output  string
}

type timing struct {
	name    string
	elapsed float64
}

func main() {
	n := summarize(os.Stdin, os.Stdout, 10)
	if n < 0 {
		os.Exit(1)
	}
}

// summarize copies the run's results to w and lists the top slowest tests; it returns
// how many tests ran (-1 when the input could not be read).
func summarize(r io.Reader, w io.Writer, top int) int {
	pending := map[string][]string{} // output of a running test, by package and test
	var times []timing
	ran, passed, failed, skipped := 0, 0, 0, 0
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		line := sc.Bytes()
		var e event
		if err := json.Unmarshal(line, &e); err != nil {
			fmt.Fprintln(w, string(line)) // not an event: a build error, say
			continue
		}
		key := e.Package + " " + e.Test
		switch {
		case e.Test == "" && e.Action == "output":
			if !strings.HasPrefix(e.Output, "=== ") && e.Output != "PASS\n" {
				fmt.Fprint(w, e.Output)
			}
		case e.Action == "output":
			pending[key] = append(pending[key], e.Output)
		case e.Action == "pass" || e.Action == "fail" || e.Action == "skip":
			if e.Test == "" {
				continue
			}
			if e.Action == "fail" {
				fmt.Fprint(w, strings.Join(pending[key], ""))
			}
			delete(pending, key)
			if strings.Contains(e.Test, "/") {
				continue // a subtest: its test counts
			}
			switch e.Action {
			case "pass":
				passed++
			case "fail":
				failed++
			case "skip":
				skipped++
				continue
			}
			ran++
			times = append(times, timing{e.Package + "." + e.Test, e.Elapsed})
		}
	}
	if err := sc.Err(); err != nil {
		fmt.Fprintln(w, "testsummary:", err)
		return -1
	}
	// A test that never ended (a panic, a time-out) shows what it printed.
	for key, out := range pending {
		if len(out) > 0 {
			fmt.Fprintf(w, "--- %s did not end:\n%s", key, strings.Join(out, ""))
		}
	}
	sort.Slice(times, func(i, j int) bool { return times[i].elapsed > times[j].elapsed })
	fmt.Fprintf(w, "\nThe %d slowest of %d tests (each backend's run counted apart):\n", min(top, len(times)), ran)
	for _, t := range times[:min(top, len(times))] {
		fmt.Fprintf(w, "%8.1fs  %s\n", t.elapsed, strings.TrimPrefix(t.name, "github.com/tidings-dev/tidings"))
	}
	fmt.Fprintf(w, "tests: %d passed, %d failed, %d skipped\n", passed, failed, skipped)
	return ran
}
