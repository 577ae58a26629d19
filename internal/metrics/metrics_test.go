package metrics

import (
	"fmt"
	"testing"
	"time"
)

// The collectors resolved per route and status are a cache: a flood of distinct pairs
// (a bug, or routes made from paths) must not grow it past its cap, and requests past
// the cap are still counted.
func TestRequestSeriesAreCapped(t *testing.T) {
	m := New()
	for i := range maxRequestSeries + 500 {
		m.ObserveRequest(fmt.Sprintf("/r%d", i), 200, time.Millisecond)
	}
	m.ObserveRequest("/r0", 200, time.Millisecond)
	kept := 0
	m.resolved.Range(func(any, any) bool { kept++; return true })
	if kept > maxRequestSeries {
		t.Fatalf("%d pairs resolved and kept, cap %d", kept, maxRequestSeries)
	}
	families, err := m.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var total float64
	for _, f := range families {
		if f.GetName() == "tidings_http_requests_total" {
			for _, s := range f.GetMetric() {
				total += s.GetCounter().GetValue()
			}
		}
	}
	if want := float64(maxRequestSeries + 501); total != want {
		t.Fatalf("%v requests counted, want %v", total, want)
	}
}
