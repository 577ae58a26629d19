package main

import (
	"net"
	"net/http"

	"github.com/tidings-dev/tidings/internal/connlimit"
	"github.com/tidings-dev/tidings/internal/metrics"
)

// File descriptors kept out of the connection cap: standard streams, listeners, the
// poller, the data folder's lock and SQLite's files (database, WAL and shared memory
// per connection), log files (connReserve); each delivery pool's outbound connections,
// busy and idle (2 pools of 64, and 64 idle); the PostgreSQL pool and its relay; the
// metrics listener's connections (metricsConns).
const (
	connReserve  = 64 + 2*64 + 64 + 1
	metricsConns = 32
)

// maxConnections is the public listener's cap: --max-connections, or what the file
// limit leaves after the reserve (connlimit.DefaultMax). A cap above what the limit
// allows would bring back accept's "too many open files": it is lowered, with a warning.
func (m *Main) maxConnections() int {
	nofile := connlimit.FileLimit()
	reserve := connReserve + m.Config.DatabaseConns + metricsConns
	want := m.Config.MaxConnections
	if want == 0 {
		return connlimit.DefaultMax(nofile, reserve)
	}
	if room := max(nofile-min(reserve, nofile/2), 1); nofile > 0 && want > room {
		m.Logger.Warn("--max-connections is above what the limit of open files allows: lowered (raise the limit: ulimit -n, LimitNOFILE=)",
			"max_connections", want, "open_files_limit", nofile, "lowered_to", room)
		return room
	}
	return want
}

// limitConns caps srv's connections on ln at n (internal/connlimit), counted in the
// metrics under name.
func (m *Main) limitConns(srv *http.Server, ln net.Listener, met *metrics.Metrics, name string, n int) net.Listener {
	var lim *connlimit.Limiter
	onClose := met.WatchConnections(name, func() int { return lim.Open() }, n)
	lim = connlimit.New(connlimit.Config{Max: n, BusyIdle: min(connlimit.DefaultBusyIdle, m.Timeouts.Idle), OnClose: onClose})
	srv.ConnState = lim.ConnState
	return lim.Listen(ln)
}
