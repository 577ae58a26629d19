package main

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"
)

// clockTick is the unit of utime and stime in /proc/PID/stat (USER_HZ, 100 on Linux).
const clockTick = 10 * time.Millisecond

// cpuTime is the CPU time (user + system) the processes have used so far, read from
// /proc; zero where it cannot be read.
func cpuTime(pids []int) time.Duration {
	var total time.Duration
	for _, pid := range pids {
		data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			continue
		}
		// The command name (field 2) may hold spaces: count fields after its ')'.
		s := string(data)
		f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
		if len(f) < 13 {
			continue
		}
		utime, _ := strconv.ParseInt(f[11], 10, 64)
		stime, _ := strconv.ParseInt(f[12], 10, 64)
		total += time.Duration(utime+stime) * clockTick
	}
	return total
}

// scrape reads the servers' Prometheus endpoints once and hands each sample (the name
// with its labels, and the value) to fn.
func scrape(urls []string, fn func(name string, v float64)) {
	for _, u := range urls {
		res, err := http.Get(u)
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(res.Body)
		for sc.Scan() {
			name, value, ok := strings.Cut(sc.Text(), " ")
			if !ok || strings.HasPrefix(name, "#") {
				continue
			}
			if v, err := strconv.ParseFloat(value, 64); err == nil {
				fn(name, v)
			}
		}
		res.Body.Close()
	}
}

// serverTotals is what a phase reads from the servers' metrics at its start and end.
type serverTotals struct {
	writes, batches float64             // the group committer's histogram totals
	lag             map[float64]float64 // the indexer's lag histogram: cumulative counts by bound (s)
}

func readTotals(urls []string) serverTotals {
	t := serverTotals{lag: map[float64]float64{}}
	const lagBucket = `tidings_search_index_lag_seconds_bucket{le="`
	scrape(urls, func(name string, v float64) {
		switch name {
		case "tidings_commit_batch_size_sum":
			t.writes += v
		case "tidings_commit_batch_size_count":
			t.batches += v
		default:
			le, ok := strings.CutPrefix(name, lagBucket)
			if !ok {
				return
			}
			le = strings.TrimSuffix(le, `"}`)
			bound, err := strconv.ParseFloat(le, 64) // "+Inf" parses as +Inf
			if err == nil {
				t.lag[bound] += v
			}
		}
	})
	return t
}

// lagP99 is the bucket bound under which 99% of the indexing steps between two readings
// fell (each step observes its oldest event's lag), and the number of steps.
func lagP99(before, after map[float64]float64) (time.Duration, float64) {
	bounds := make([]float64, 0, len(after))
	for b := range after {
		bounds = append(bounds, b)
	}
	slices.Sort(bounds)
	total := after[math.Inf(1)] - before[math.Inf(1)]
	if total <= 0 {
		return 0, 0
	}
	for _, b := range bounds {
		if after[b]-before[b] >= 0.99*total {
			if math.IsInf(b, 1) {
				return -1, total
			}
			return time.Duration(b * float64(time.Second)), total
		}
	}
	return -1, total
}

func parsePIDs(s string) []int {
	var out []int
	for _, f := range strings.Split(s, ",") {
		if n, err := strconv.Atoi(strings.TrimSpace(f)); err == nil {
			out = append(out, n)
		}
	}
	return out
}

// saveProfile fetches a CPU profile covering most of a phase of length d from the
// server whose metrics listener serves metricsURL.
func saveProfile(metricsURL, path string, d time.Duration) {
	secs := max(1, int((d - 500*time.Millisecond).Seconds()))
	u := strings.TrimSuffix(metricsURL, "/metrics") + fmt.Sprintf("/debug/pprof/profile?seconds=%d", secs)
	res, err := http.Get(u)
	if err != nil {
		fmt.Fprintln(os.Stderr, "load: profile:", err)
		return
	}
	defer res.Body.Close()
	f, err := os.Create(path)
	if err != nil {
		fmt.Fprintln(os.Stderr, "load: profile:", err)
		return
	}
	defer f.Close()
	io.Copy(f, res.Body)
}

// peakRSS is the process's peak resident memory in bytes (VmHWM), 0 if unknown.
func peakRSS(pid int) int64 {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return kb * 1024
		}
	}
	return 0
}
