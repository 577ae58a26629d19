// Package metrics holds the Prometheus collectors of one server, registered on a
// registry of its own so that tests can start many servers side by side.
package metrics

import (
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Metrics are the collectors the server updates.
type Metrics struct {
	Registry      *prometheus.Registry
	Requests      *prometheus.CounterVec
	Latency       *prometheus.HistogramVec
	BatchSize     prometheus.Histogram
	BatchDuration prometheus.Histogram
	BatchErrors   prometheus.Counter
	Deliveries    *prometheus.CounterVec
	SearchLag     prometheus.Histogram
	ConnsClosed   *prometheus.CounterVec

	resolved sync.Map // routeStatus → *requestMetrics
	series   atomic.Int64
}

// New creates and registers the collectors.
func New() *Metrics {
	m := &Metrics{
		Registry: prometheus.NewRegistry(),
		Requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "tidings_http_requests_total", Help: "HTTP requests by route and status.",
		}, []string{"route", "status"}),
		Latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "tidings_http_request_duration_seconds", Help: "HTTP request latency by route.",
			Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5},
		}, []string{"route"}),
		BatchSize: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "tidings_commit_batch_size", Help: "Writes per group-committed transaction.",
			Buckets: []float64{1, 2, 4, 8, 16, 32, 64, 128, 256},
		}),
		BatchDuration: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "tidings_commit_batch_duration_seconds", Help: "Duration of group-committed transactions.",
			Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1},
		}),
		BatchErrors: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "tidings_commit_batch_errors_total", Help: "Group-committed transactions that failed.",
		}),
		Deliveries: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "tidings_deliveries_total", Help: "Delivery attempts by channel (push, webhook) and outcome (ok, retry, failed, expired).",
		}, []string{"channel", "outcome"}),
		SearchLag: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "tidings_search_index_lag_seconds",
			Help:    "Time from an event's commit to its commit in the full-text index, for the oldest event of each indexing step (SQLite).",
			Buckets: []float64{.01, .025, .05, .1, .15, .2, .25, .5, 1, 2.5, 5, 10},
		}),
		ConnsClosed: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "tidings_http_connections_closed_total",
			Help: "Connections the server closed for its connection cap, by listener and reason: evicted (idle the longest, to make room), refused (new, with every connection busy), idle (idle too long while above half the cap).",
		}, []string{"listener", "reason"}),
	}
	m.Registry.MustRegister(m.Requests, m.Latency, m.BatchSize, m.BatchDuration, m.BatchErrors, m.Deliveries, m.SearchLag, m.ConnsClosed,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// WatchQueue exposes the number of writes waiting for the group committer.
func (m *Metrics) WatchQueue(depth func() int) {
	m.Registry.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "tidings_commit_queue_depth", Help: "Writes waiting for the group committer.",
	}, func() float64 { return float64(depth()) }))
}

// WatchConnections exposes a listener's open connections and its cap; the returned
// function counts a connection closed for the cap, by reason.
func (m *Metrics) WatchConnections(listener string, open func() int, limit int) func(reason string) {
	labels := prometheus.Labels{"listener": listener}
	m.Registry.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "tidings_http_connections_open", Help: "Connections open on a listener (public, metrics).", ConstLabels: labels,
	}, func() float64 { return float64(open()) }))
	m.Registry.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "tidings_http_connections_max", Help: "A listener's connection cap (--max-connections).", ConstLabels: labels,
	}, func() float64 { return float64(limit) }))
	return func(reason string) { m.ConnsClosed.WithLabelValues(listener, reason).Inc() }
}

// ObserveDelivery counts one delivery attempt.
func (m *Metrics) ObserveDelivery(channel, outcome string) {
	m.Deliveries.WithLabelValues(channel, outcome).Inc()
}

// WatchOutbox exposes the outbox's depth and the age of its oldest job.
func (m *Metrics) WatchOutbox(pending func() (int, time.Time)) {
	m.Registry.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "tidings_delivery_queue_depth", Help: "Delivery jobs waiting in the outbox.",
	}, func() float64 { n, _ := pending(); return float64(n) }))
	m.Registry.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "tidings_delivery_oldest_pending_seconds", Help: "Age of the oldest delivery job waiting in the outbox.",
	}, func() float64 {
		_, oldest := pending()
		if oldest.IsZero() {
			return 0
		}
		return time.Since(oldest).Seconds()
	}))
}

// requestMetrics are a route's and status's collectors, resolved once: looking them up
// by label values on each request hashed the labels and took a lock.
type requestMetrics struct {
	count   prometheus.Counter
	latency prometheus.Observer
}

type routeStatus struct {
	route  string
	status int
}

// maxRequestSeries bounds the resolved pairs kept (routes are the mux's patterns and
// "unmatched", statuses a few dozen: far fewer in practice).
const maxRequestSeries = 4096

// ObserveRequest counts a request and its latency.
func (m *Metrics) ObserveRequest(route string, status int, d time.Duration) {
	k := routeStatus{route, status}
	var rm *requestMetrics
	if v, ok := m.resolved.Load(k); ok {
		rm = v.(*requestMetrics)
	} else {
		rm = &requestMetrics{m.Requests.WithLabelValues(route, strconv.Itoa(status)), m.Latency.WithLabelValues(route)}
		if m.series.Add(1) <= maxRequestSeries {
			m.resolved.Store(k, rm)
		}
	}
	rm.count.Inc()
	rm.latency.Observe(d.Seconds())
}

// ObserveIndexed records one step of the full-text indexer.
func (m *Metrics) ObserveIndexed(rows int, lag time.Duration) {
	m.SearchLag.Observe(lag.Seconds())
}

// WatchSearch exposes how far the full-text index trails the events.
func (m *Metrics) WatchSearch(lag func() (int64, time.Time)) {
	m.Registry.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "tidings_search_unindexed_events", Help: "Events committed but not yet in the full-text index (SQLite).",
	}, func() float64 { n, _ := lag(); return float64(n) }))
	m.Registry.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "tidings_search_oldest_unindexed_seconds", Help: "Age of the oldest event not yet in the full-text index (SQLite).",
	}, func() float64 {
		if _, oldest := lag(); !oldest.IsZero() {
			return time.Since(oldest).Seconds()
		}
		return 0
	}))
}

// ObserveBatch records one group commit.
func (m *Metrics) ObserveBatch(size int, d time.Duration, err error) {
	m.BatchSize.Observe(float64(size))
	m.BatchDuration.Observe(d.Seconds())
	if err != nil {
		m.BatchErrors.Inc()
	}
}

// Handler serves the exposition format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.Registry, promhttp.HandlerOpts{})
}
