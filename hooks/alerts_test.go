package hooks

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/tidings-dev/tidings"
)

func alertHook(source, secret string) *tidings.Hook {
	return &tidings.Hook{ID: "hook_0123456789ab", AccountID: 1, Project: "infra", Channel: "alerts", Source: source, Secret: secret}
}

func bearer(s string) http.Header { return http.Header{"Authorization": {"Bearer " + s}} }

func TestAlertmanager(t *testing.T) {
	h := alertHook(tidings.HookAlertmanager, "s3cret-token")
	firing := testdata(t, "alertmanager", "firing.json")
	d, err := deliver(t, h, bearer("s3cret-token"), firing)
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Events) != 2 || !strings.HasPrefix(d.ID, "alerts:") {
		t.Fatalf("%d events, id %q", len(d.Events), d.ID)
	}
	e := d.Events[0]
	if e.Event != "InstanceDown firing" || e.Icon != "🔥" || !e.Notify || e.Priority != "high" || e.ThreadKey != "4ca7f1a8c4e0bd8a" {
		t.Errorf("%q %q notify %v priority %q key %q", e.Event, e.Icon, e.Notify, e.Priority, e.ThreadKey)
	}
	if tag(e, "instance") != "web-1.example.com:9100" || tag(e, "severity") != "critical" || tag(e, "status") != "firing" || tag(e, "job") != "node" {
		t.Errorf("tags %v", e.Tags)
	}
	if !strings.HasPrefix(e.Description, "Instance web-1.example.com:9100 down\n\nweb-1") || !strings.HasPrefix(e.URL, "http://prometheus.example.com:9090/graph") {
		t.Errorf("description %q url %q", e.Description, e.URL)
	}
	if e.Timestamp.Format("15:04:05.000") != "09:41:30.123" {
		t.Errorf("timestamp %v", e.Timestamp)
	}

	// The same notification again has the same id; the resolution has another and
	// the same key, so it replaces the firing version.
	again, _ := deliver(t, h, bearer("s3cret-token"), firing)
	resolved, err := deliver(t, h, bearer("s3cret-token"), testdata(t, "alertmanager", "resolved.json"))
	if err != nil {
		t.Fatal(err)
	}
	r := resolved.Events[0]
	if again.ID != d.ID || resolved.ID == d.ID || r.ThreadKey != e.ThreadKey || r.Event != "InstanceDown resolved" || r.Icon != "✅" || r.Notify {
		t.Errorf("again %q resolved %q: %q %q notify %v key %q", again.ID, resolved.ID, r.Event, r.Icon, r.Notify, r.ThreadKey)
	}

	// Without a secret, no Authorization is needed.
	if _, err := deliver(t, alertHook(tidings.HookAlertmanager, ""), nil, firing); err != nil {
		t.Error(err)
	}
}

func TestGrafana(t *testing.T) {
	h := alertHook(tidings.HookGrafana, "graf-secret")
	d, err := deliver(t, h, bearer("graf-secret"), testdata(t, "grafana", "firing.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Events) != 2 {
		t.Fatalf("%d events", len(d.Events))
	}
	e := d.Events[1]
	if e.Event != "High CPU usage firing" || !e.Notify || e.Priority != "default" || e.ThreadKey != "bc97ff14869b13e3" ||
		tag(e, "zone") != "eu-1" || tag(e, "team") != "blue" || e.URL != "https://play.grafana.org/alerting/d1rdpdv7k/edit" {
		t.Errorf("%q notify %v priority %q key %q url %q tags %v", e.Event, e.Notify, e.Priority, e.ThreadKey, e.URL, e.Tags)
	}
	if !strings.Contains(e.Description, "This alert was triggered for zone eu-1\n\nThe system has high CPU usage\n\nValues: [ var='B'") {
		t.Errorf("description %q", e.Description)
	}
	basic := http.Header{"Authorization": {"Basic " + base64.StdEncoding.EncodeToString([]byte("grafana:graf-secret"))}}
	r, err := deliver(t, h, basic, testdata(t, "grafana", "resolved.json"))
	if err != nil {
		t.Fatal(err)
	}
	if e := r.Events[0]; e.Event != "High memory usage resolved" || e.Notify || e.ThreadKey != "c6eadffa33fcdf37" || e.URL != "https://play.grafana.org/d/a1b2c3d4/memory?viewPanel=2" {
		t.Errorf("%q notify %v key %q url %q", e.Event, e.Notify, e.ThreadKey, e.URL)
	}
}

func TestAlertRefusals(t *testing.T) {
	body := testdata(t, "alertmanager", "firing.json")
	basic := func(user, pass string) http.Header {
		return http.Header{"Authorization": {"Basic " + base64.StdEncoding.EncodeToString([]byte(user+":"+pass))}}
	}
	for _, tc := range []struct {
		name, source string
		header       http.Header
		body         []byte
		status       int
	}{
		{"missing header", tidings.HookAlertmanager, nil, body, 401},
		{"wrong bearer", tidings.HookAlertmanager, bearer("nope"), body, 401},
		{"basic to alertmanager", tidings.HookAlertmanager, basic("x", "s3cret-token"), body, 401},
		{"wrong basic to grafana", tidings.HookGrafana, basic("x", "nope"), body, 401},
		{"malformed basic", tidings.HookGrafana, http.Header{"Authorization": {"Basic !!"}}, body, 401},
		{"other scheme", tidings.HookGrafana, http.Header{"Authorization": {"Token s3cret-token"}}, body, 401},
		{"unparsable", tidings.HookAlertmanager, bearer("s3cret-token"), []byte(`{"alerts":[`), 400},
		{"empty alerts", tidings.HookAlertmanager, bearer("s3cret-token"), []byte(`{"status":"firing","alerts":[]}`), 400},
		{"no alerts", tidings.HookGrafana, bearer("s3cret-token"), []byte(`{"status":"firing"}`), 400},
		{"label not a string", tidings.HookAlertmanager, bearer("s3cret-token"), []byte(`{"alerts":[{"labels":{"a":1}}]}`), 400},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := deliver(t, alertHook(tc.source, "s3cret-token"), tc.header, tc.body)
			refusal(t, err, tc.status)
			if strings.Contains(err.Error(), "InstanceDown") {
				t.Errorf("the reason quotes the body: %v", err)
			}
		})
	}
}

func TestAlertsHostile(t *testing.T) {
	long := strings.Repeat("ü", 3000)
	labels := map[string]string{"alertname": "\u202e" + long, "": "empty key", "___": "only underscores", "Zone_Name": "eu\n1"}
	for i := range 60 {
		labels["label_"+strings.Repeat("x", i)] = long[:20]
	}
	alerts := []map[string]any{{"status": "firing", "labels": labels,
		"annotations": map[string]string{"summary": "\x00\x1b" + strings.Repeat(long, 5)}, "generatorURL": "javascript:alert(1)", "startsAt": "9999-01-01T00:00:00Z"}}
	for range 150 {
		alerts = append(alerts, map[string]any{"status": "firing", "labels": map[string]string{"alertname": "x"}})
	}
	body, _ := json.Marshal(map[string]any{"version": "4", "groupKey": "g", "status": "firing", "alerts": alerts})
	d, err := deliver(t, alertHook(tidings.HookAlertmanager, ""), nil, body)
	if err != nil {
		t.Fatal(err)
	}
	if len(body) > tidings.MaxHookBody {
		t.Fatalf("the body is %d bytes", len(body))
	}
	e := d.Events[0]
	if len(d.Events) != maxAlerts || len(e.Tags) != tidings.MaxTags || e.URL != "" || !e.Timestamp.IsZero() || e.ThreadKey == "" || tag(e, "zone-name") != "eu 1" {
		t.Errorf("%d events, %d tags, url %q, timestamp %v, key %q", len(d.Events), len(e.Tags), e.URL, e.Timestamp, e.ThreadKey)
	}
}
