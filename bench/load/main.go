// Command load drives a running Tidings server over loopback and reports throughput and
// latency of publishing, as ratios against GET /healthz measured in the same run (the
// HTTP stack alone, no store). bench/load.sh starts a server and runs it.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

type phase struct {
	name, method, path, body string
}

type result struct {
	reqs      int
	errors    int64
	rps       float64
	p50, p99  time.Duration
	statusBad map[int]int
}

func main() {
	url := flag.String("url", "http://127.0.0.1:8080", "server address")
	token := flag.String("token", os.Getenv("TIDINGS_TOKEN"), "a full-access API token")
	clients := flag.Int("clients", 64, "concurrent clients")
	duration := flag.Duration("duration", 5*time.Second, "length of each phase")
	flag.Parse()
	if *token == "" {
		fmt.Fprintln(os.Stderr, "load: give -token or TIDINGS_TOKEN")
		os.Exit(2)
	}
	phases := []phase{
		{"GET /healthz (baseline)", "GET", "/healthz", ""},
		{"POST /v1/log", "POST", "/v1/log", `{"project":"load","channel":"events","event":"New Subscription","icon":"💰","tags":{"plan":"premium","seats":3}}`},
		{"POST /v1/insight increment", "POST", "/v1/insight", `{"project":"load","title":"Signups","value":1,"change":"increment"}`},
	}
	transport := &http.Transport{MaxIdleConns: *clients, MaxIdleConnsPerHost: *clients}
	client := &http.Client{Transport: transport, Timeout: 10 * time.Second}

	fmt.Printf("%d clients, %v per phase, against %s\n\n", *clients, *duration, *url)
	fmt.Printf("%-28s %10s %10s %10s %8s %s\n", "phase", "req/s", "p50", "p99", "errors", "vs baseline")
	var base float64
	failed := false
	for i, p := range phases {
		r := run(client, *url, *token, p, *clients, *duration)
		if i == 0 {
			base = r.rps
		}
		fmt.Printf("%-28s %10.0f %10v %10v %8d %10.2f×\n", p.name, r.rps, r.p50.Round(time.Microsecond),
			r.p99.Round(time.Microsecond), r.errors, r.rps/base)
		if r.errors > 0 {
			fmt.Printf("   unexpected statuses: %v\n", r.statusBad)
			failed = true
		}
	}
	if failed {
		os.Exit(1)
	}
}

func run(client *http.Client, url, token string, p phase, clients int, d time.Duration) result {
	var wg sync.WaitGroup
	var mu sync.Mutex
	var errs atomic.Int64
	bad := map[int]int{}
	lat := make([][]time.Duration, clients)
	deadline := time.Now().Add(d)
	start := time.Now()
	for c := 0; c < clients; c++ {
		wg.Add(1)
		go func(c int) {
			defer wg.Done()
			for time.Now().Before(deadline) {
				req, _ := http.NewRequest(p.method, url+p.path, bytes.NewBufferString(p.body))
				if p.body != "" {
					req.Header.Set("Content-Type", "application/json")
				}
				req.Header.Set("Authorization", "Bearer "+token)
				t0 := time.Now()
				res, err := client.Do(req)
				if err != nil {
					errs.Add(1)
					continue
				}
				io.Copy(io.Discard, res.Body)
				res.Body.Close()
				lat[c] = append(lat[c], time.Since(t0))
				if res.StatusCode != 200 {
					errs.Add(1)
					mu.Lock()
					bad[res.StatusCode]++
					mu.Unlock()
				}
			}
		}(c)
	}
	wg.Wait()
	elapsed := time.Since(start)
	var all []time.Duration
	for _, l := range lat {
		all = append(all, l...)
	}
	slices.Sort(all)
	r := result{reqs: len(all), errors: errs.Load(), statusBad: bad, rps: float64(len(all)) / elapsed.Seconds()}
	if len(all) > 0 {
		r.p50, r.p99 = all[len(all)/2], all[len(all)*99/100]
	}
	return r
}
