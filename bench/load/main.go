// Command load drives a running Tidings server over loopback and reports throughput,
// latency and server CPU per request of publishing, as ratios against a baseline measured
// in the same run: a Go handler that checks the bearer token and decodes the same JSON
// body, with no store (load -serve-baseline ADDR runs it). bench/load.sh starts both.
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
	keyed                    bool // each request with an Idempotency-Key of its own
}

type result struct {
	reqs          int
	errors        int64
	rps           float64
	p50, p90, p99 time.Duration
	statusBad     map[int]int
	cpuPerReq     time.Duration // server CPU time per request; 0 when not measured
	batch         float64       // mean writes per committed batch; 0 when not measured
	// indexLag bounds the full-text indexer's lag at p99 (-1: beyond the histogram),
	// over indexSteps steps; 0 steps: not measured (PostgreSQL, reads).
	indexLag   time.Duration
	indexSteps float64
}

// target is a server under load and what is known to measure it.
type target struct {
	url     string
	pids    []int    // processes whose CPU time counts
	metrics []string // Prometheus endpoints for the batch size
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
	baseURL := flag.String("baseline", "", "address of a baseline server (load -serve-baseline); without it, GET /healthz of the server is the baseline")
	basePID := flag.Int("baseline-pid", 0, "the baseline server's process, for its CPU time per request")
	serverPIDs := flag.String("server-pids", "", "the servers' processes, comma-separated, for CPU time per request")
	metricsURLs := flag.String("metrics", "", "the servers' /metrics URLs, comma-separated, for the mean batch size")
	live := flag.Int("live", 0, "also measure publish → live dashboard stream latency over this many events, idle and under the POST /v1/log load")
	profile := flag.String("profile", "", "write a CPU profile of the first server during each phase: the POST /v1/log phase's to this file, the increments' to FILE.insight (needs -metrics)")
	serve := flag.String("serve-baseline", "", "run the baseline server on this address instead of a load")
	batch := flag.Int("batch", 0, "also compare events/s through POST /v1/log/batch with this many events per request against single publishes, both from -batch-clients clients")
	batchClients := flag.Int("batch-clients", 16, "clients of the -batch comparison")
	batchOnly := flag.Bool("batch-only", false, "measure the -batch comparison only")
	pages := flag.Bool("pages", false, "also compare page views (POST /v1/page, one and 10 per request) against the same clients' events")
	flag.Parse()
	if *serve != "" {
		if err := serveBaseline(*serve, *token); err != nil {
			fmt.Fprintln(os.Stderr, "load:", err)
			os.Exit(1)
		}
		return
	}
	if *token == "" {
		fmt.Fprintln(os.Stderr, "load: give -token or TIDINGS_TOKEN")
		os.Exit(2)
	}
	phases := []phase{
		{name: "POST /v1/log", method: "POST", path: "/v1/log", body: `{"project":"load","channel":"events","event":"New Subscription","description":"Ada upgraded to the yearly premium plan after the trial","icon":"💰","user_id":"user-1042","tags":{"plan":"premium","seats":3,"region":"eu-west","trial":false}}`},
		{name: "POST /v1/insight increment", method: "POST", path: "/v1/insight", body: `{"project":"load","title":"Signups","value":1,"change":"increment"}`},
	}
	transport := &http.Transport{MaxIdleConns: *clients, MaxIdleConnsPerHost: *clients}
	client := &http.Client{Transport: transport, Timeout: 10 * time.Second}
	srv := target{url: *url, pids: parsePIDs(*serverPIDs)}
	if *metricsURLs != "" {
		srv.metrics = strings.Split(*metricsURLs, ",")
	}
	base := target{url: *baseURL, pids: parsePIDs(fmt.Sprint(*basePID))}

	fmt.Printf("%d clients, %v per phase, against %s", *clients, *duration, *url)
	if base.url != "" {
		fmt.Printf("; baseline (bearer check + JSON decode, no store) at %s", base.url)
	}
	fmt.Printf("\n\n%-44s %9s %9s %9s %9s %6s %9s %6s %s\n", "phase", "req/s", "p50", "p90", "p99", "errors", "CPU/req", "batch", "vs baseline")
	failed := false
	if *batchOnly {
		phases = phases[:1]
	}
	var ref float64 // the baseline's req/s that later phases are compared with
	if base.url == "" {
		r := run(client, srv, *token, phase{name: "GET /healthz", method: "GET", path: "/healthz"}, *clients, *duration)
		print("GET /healthz (baseline)", r, r.rps)
		ref = r.rps
	}
	for _, p := range phases {
		if *batchOnly {
			if base.url != "" {
				ref = run(client, base, *token, p, *batchClients, *duration).rps
			}
			break
		}
		if base.url != "" {
			b := run(client, base, *token, p, *clients, *duration)
			print("baseline "+p.name, b, b.rps)
			ref = b.rps
			failed = failed || b.errors > 0
		}
		done := make(chan struct{})
		if *profile != "" && len(srv.metrics) > 0 {
			file := *profile
			if p.path != "/v1/log" {
				file += "." + strings.TrimPrefix(p.path, "/v1/")
			}
			go func() { defer close(done); saveProfile(srv.metrics[0], file, *duration) }()
		} else {
			close(done)
		}
		r := run(client, srv, *token, p, *clients, *duration)
		<-done
		print(p.name, r, ref)
		failed = failed || r.errors > 0
	}
	if base.url == "" {
		fmt.Println("\n(no -baseline given: ratios are against GET /healthz of the server)")
	}
	baseRef := ref
	if *live > 0 {
		fmt.Println()
		idle, err := liveLatency(srv.url, *token, "load-1@example.com", *password, *live)
		if err != nil {
			fmt.Fprintln(os.Stderr, "load: live:", err)
			os.Exit(1)
		}
		printLatency("publish → live stream, idle", idle)
		var busy []time.Duration
		done := make(chan error, 1)
		go func() {
			time.Sleep(*duration / 5) // the load is under way
			var err error
			busy, err = liveLatency(srv.url, *token, "load-2@example.com", *password, *live)
			done <- err
		}()
		p := phases[0]
		r := run(client, srv, *token, p, *clients, *duration)
		if err := <-done; err != nil {
			fmt.Fprintln(os.Stderr, "load: live:", err)
			os.Exit(1)
		}
		printLatency(fmt.Sprintf("publish → live stream, %d clients publishing", *clients), busy)
		print(p.name+" (during the above)", r, ref)
	}
	if *streams > 0 {
		p := phase{name: "POST /v1/log 9 KB Markdown", method: "POST", path: "/v1/log", body: markdownEvent()}
		quiet := run(client, srv, *token, p, *clients, *duration)
		print(p.name+", no streams", quiet, baseRef)
		v, err := openViewers(*url, "load", "load-%d@example.com", *password, *users, *streams)
		if err != nil {
			fmt.Fprintln(os.Stderr, "load:", err)
			os.Exit(1)
		}
		time.Sleep(500 * time.Millisecond)
		busy := run(client, srv, *token, p, *clients, *duration)
		v.close()
		print(fmt.Sprintf("%s, %d streams", p.name, v.opened.Load()), busy, baseRef)
		fmt.Printf("\nstreams: %d open, %d refused (account cap); %d cards delivered (%.0f per event); %d paused as behind, %d reconnects after drops, %d reload orders\n",
			v.opened.Load(), v.refused.Load(), v.events.Load(), float64(v.events.Load())/max(1, float64(busy.reqs)),
			v.paused.Load(), v.reconnect.Load(), v.reloads.Load())
		fmt.Printf("ratio with streams / without: %.2f\n", busy.rps/quiet.rps)
		failed = failed || quiet.errors > 0 || busy.errors > 0
	}
	if *devices > 0 {
		p := phase{name: "POST /v1/log notify", method: "POST", path: "/v1/log", body: `{"project":"load","channel":"events","event":"Deploy finished","icon":"🚀","notify":true}`}
		quiet := run(client, srv, *token, p, *clients, *duration)
		print(p.name+", no devices", quiet, baseRef)
		svc, err := startSlowPushService(*pushDelay)
		if err == nil {
			err = subscribeDevices(*url, *password, svc, *devices)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "load:", err)
			os.Exit(1)
		}
		busy := run(client, srv, *token, p, *clients, *duration)
		print(fmt.Sprintf("%s, %d devices (push %v)", p.name, *devices, *pushDelay), busy, baseRef)
		fmt.Printf("\npush service received %d messages during the phase\n", svc.received.Load())
		fmt.Printf("ratio with devices / without: %.2f\n", busy.rps/quiet.rps)
		failed = failed || quiet.errors > 0 || busy.errors > 0
	}
	if *pages {
		failed = comparePages(client, srv, *token, phases[0], *clients, *duration, baseRef) || failed
	}
	if *batch > 0 {
		failed = compareBatches(client, srv, *token, phases[0], *batch, *batchClients, *duration, baseRef) || failed
	}
	for _, pid := range srv.pids {
		if peak := peakRSS(pid); peak > 0 {
			fmt.Printf("server %d: peak resident memory %.0f MB\n", pid, float64(peak)/1e6)
		}
	}
	if failed {
		os.Exit(1)
	}
}

func print(name string, r result, base float64) {
	cpu, batch := "-", "-"
	if r.cpuPerReq > 0 {
		cpu = fmt.Sprintf("%.0fµs", float64(r.cpuPerReq)/float64(time.Microsecond))
	}
	if r.batch > 0 {
		batch = fmt.Sprintf("%.1f", r.batch)
	}
	round := func(d time.Duration) time.Duration { return d.Round(10 * time.Microsecond) }
	fmt.Printf("%-44s %9.0f %9v %9v %9v %6d %9s %6s %6.2f×\n", name, r.rps, round(r.p50), round(r.p90),
		round(r.p99), r.errors, cpu, batch, r.rps/base)
	if r.errors > 0 {
		fmt.Printf("   unexpected statuses: %v\n", r.statusBad)
	}
	switch {
	case r.indexSteps > 0 && r.indexLag < 0:
		fmt.Printf("   search index lag: p99 over 10 s (%.0f steps)\n", r.indexSteps)
	case r.indexSteps > 0:
		fmt.Printf("   search index lag: p99 <= %v (%.0f indexing steps, each its oldest event's commit to the index's)\n", r.indexLag, r.indexSteps)
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

func run(client *http.Client, t target, token string, p phase, clients int, d time.Duration) result {
	cpu0 := cpuTime(t.pids)
	before := readTotals(t.metrics)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var errs atomic.Int64
	bad := map[int]int{}
	lat := make([][]time.Duration, clients)
	run := time.Now().UnixNano()
	deadline := time.Now().Add(d)
	start := time.Now()
	urls := strings.Split(t.url, ",")
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
				if p.keyed {
					req.Header.Set("Idempotency-Key", fmt.Sprintf("load-%d-%d-%d", run, c, len(lat[c])))
				}
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
		r.p50, r.p90, r.p99 = all[len(all)/2], all[len(all)*90/100], all[len(all)*99/100]
		if cpu := cpuTime(t.pids) - cpu0; cpu > 0 {
			r.cpuPerReq = cpu / time.Duration(len(all))
		}
	}
	after := readTotals(t.metrics)
	if after.batches > before.batches {
		r.batch = (after.writes - before.writes) / (after.batches - before.batches)
	}
	r.indexLag, r.indexSteps = lagP99(before.lag, after.lag)
	return r
}

// compareBatches measures the same events sent one per request and n per request (POST
// /v1/log/batch), each with and without idempotency keys, from the same clients, and
// prints the events per second of each and their ratio.
func compareBatches(client *http.Client, srv target, token string, single phase, n, clients int, d time.Duration, baseRef float64) (failed bool) {
	events := make([]string, n)
	for i := range events {
		events[i] = single.body
	}
	many := phase{name: fmt.Sprintf("POST /v1/log/batch (%d events)", n), method: "POST", path: "/v1/log/batch", body: `{"events":[` + strings.Join(events, ",") + `]}`}
	fmt.Printf("\n%d clients: single publishes against batches of %d (ratios against the baseline's single publishes)\n", clients, n)
	var rates []float64
	keyed := func(p phase) phase { p.name, p.keyed = p.name+" keyed", true; return p }
	for _, p := range []phase{single, many, keyed(single), keyed(many)} {
		r := run(client, srv, token, p, clients, d)
		print(p.name, r, baseRef)
		failed = failed || r.errors > 0
		per := 1
		if p.path == many.path {
			per = n
		}
		rates = append(rates, r.rps*float64(per))
	}
	fmt.Printf("events/s: single %.0f, batches %.0f (%.2f×); with keys: single %.0f, batches %.0f (%.2f×)\n",
		rates[0], rates[1], rates[1]/rates[0], rates[2], rates[3], rates[3]/rates[2])
	return failed
}
