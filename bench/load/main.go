// Command load drives a running Tidings server over loopback and reports throughput and
// latency of publishing, as ratios against GET /healthz measured in the same run (the
// HTTP stack alone, no store). bench/load.sh starts a server and runs it.
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strings"
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
	url := flag.String("url", "http://127.0.0.1:8080", "server address; several, comma-separated, share the clients (a cluster)")
	token := flag.String("token", os.Getenv("TIDINGS_TOKEN"), "a full-access API token")
	clients := flag.Int("clients", 64, "concurrent clients")
	duration := flag.Duration("duration", 5*time.Second, "length of each phase")
	streams := flag.Int("streams", 0, "also compare 9 KB Markdown events with this many dashboard streams open against none")
	users := flag.Int("users", 6, "dashboard users load-1@example.com… that the streams sign in as")
	devices := flag.Int("devices", 0, "also compare notify events with this many push devices (on a slow local push service) against none")
	pushDelay := flag.Duration("push-delay", 200*time.Millisecond, "how long the local push service takes to answer")
	password := flag.String("password", "load password", "their password")
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
	fmt.Printf("%-40s %10s %10s %10s %8s %s\n", "phase", "req/s", "p50", "p99", "errors", "vs baseline")
	var base float64
	failed := false
	for i, p := range phases {
		r := run(client, *url, *token, p, *clients, *duration)
		if i == 0 {
			base = r.rps
		}
		print(p.name, r, base)
		failed = failed || r.errors > 0
	}
	if *streams > 0 {
		p := phase{"POST /v1/log 9 KB Markdown", "POST", "/v1/log", markdownEvent()}
		quiet := run(client, *url, *token, p, *clients, *duration)
		print(p.name+", no streams", quiet, base)
		v, err := openViewers(*url, "load", "load-%d@example.com", *password, *users, *streams)
		if err != nil {
			fmt.Fprintln(os.Stderr, "load:", err)
			os.Exit(1)
		}
		time.Sleep(500 * time.Millisecond)
		busy := run(client, *url, *token, p, *clients, *duration)
		v.close()
		print(fmt.Sprintf("%s, %d streams", p.name, v.opened.Load()), busy, base)
		fmt.Printf("\nstreams: %d open, %d refused (account cap); %d cards delivered (%.0f per event); %d paused as behind, %d reconnects after drops, %d reload orders\n",
			v.opened.Load(), v.refused.Load(), v.events.Load(), float64(v.events.Load())/max(1, float64(busy.reqs)),
			v.paused.Load(), v.reconnect.Load(), v.reloads.Load())
		fmt.Printf("ratio with streams / without: %.2f\n", busy.rps/quiet.rps)
		failed = failed || quiet.errors > 0 || busy.errors > 0
	}
	if *devices > 0 {
		p := phase{"POST /v1/log notify", "POST", "/v1/log", `{"project":"load","channel":"events","event":"Deploy finished","icon":"🚀","notify":true}`}
		quiet := run(client, *url, *token, p, *clients, *duration)
		print(p.name+", no devices", quiet, base)
		svc, err := startSlowPushService(*pushDelay)
		if err == nil {
			err = subscribeDevices(*url, *password, svc, *devices)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "load:", err)
			os.Exit(1)
		}
		busy := run(client, *url, *token, p, *clients, *duration)
		print(fmt.Sprintf("%s, %d devices (push %v)", p.name, *devices, *pushDelay), busy, base)
		fmt.Printf("\npush service received %d messages during the phase\n", svc.received.Load())
		fmt.Printf("ratio with devices / without: %.2f\n", busy.rps/quiet.rps)
		failed = failed || quiet.errors > 0 || busy.errors > 0
	}
	if failed {
		os.Exit(1)
	}
}

func print(name string, r result, base float64) {
	fmt.Printf("%-40s %10.0f %10v %10v %8d %10.2f×\n", name, r.rps, r.p50.Round(time.Microsecond),
		r.p99.Round(time.Microsecond), r.errors, r.rps/base)
	if r.errors > 0 {
		fmt.Printf("   unexpected statuses: %v\n", r.statusBad)
	}
}

// markdownEvent is a /v1/log body whose description is about 9 KB of Markdown:
// headings, lists, emphasis, code, a table and links, as a deploy report might be.
func markdownEvent() string {
	var b strings.Builder
	b.WriteString("## Deploy report\n\nRelease **v2.14.0** went out to *all regions*.\n\n")
	for i := 0; b.Len() < 8800; i++ {
		fmt.Fprintf(&b, "### Service %d\n\n- status: **healthy**\n- p99: `%d ms`\n- [dashboard](https://example.com/s/%d)\n\n", i, 20+i, i)
		fmt.Fprintf(&b, "| region | requests | errors |\n|---|---|---|\n| eu | %d | 0 |\n| us | %d | 1 |\n\n", 1000+i, 2000+i)
		b.WriteString("```\n$ kubectl rollout status deploy/api\ndeployment \"api\" successfully rolled out\n```\n\n")
	}
	desc, _ := json.Marshal(b.String())
	return `{"project":"load","channel":"events","event":"Deploy finished","icon":"🚀","parser":"markdown","description":` + string(desc) + `}`
}

func run(client *http.Client, url, token string, p phase, clients int, d time.Duration) result {
	var wg sync.WaitGroup
	var mu sync.Mutex
	var errs atomic.Int64
	bad := map[int]int{}
	lat := make([][]time.Duration, clients)
	deadline := time.Now().Add(d)
	start := time.Now()
	urls := strings.Split(url, ",")
	for c := 0; c < clients; c++ {
		wg.Add(1)
		go func(c int) {
			defer wg.Done()
			for time.Now().Before(deadline) {
				req, _ := http.NewRequest(p.method, urls[c%len(urls)]+p.path, bytes.NewBufferString(p.body))
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
