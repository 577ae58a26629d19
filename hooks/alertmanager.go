package hooks

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"sort"
	"strings"
	"time"

	"github.com/tidings-dev/tidings"
)

// Alertmanager: the webhook receiver's version 4 body, one event per alert. When the
// hook has a secret, requests carry it as "Authorization: Bearer SECRET"
// (alertmanager.yml: http_config.authorization.credentials).
// https://prometheus.io/docs/alerting/latest/configuration/#webhook_config
//
// Alertmanager sends no delivery id. The delivery's id is made from what identifies a
// notification: the group key and each alert's fingerprint, status, startsAt and
// endsAt. A retried notification has the same, so it stores nothing twice; a repeat
// of an unchanged firing group after repeat_interval has the same too, and is not
// stored again either.

func init() { sources[tidings.HookAlertmanager] = alertSource{name: "Alertmanager"} }

// alertSource reads Alertmanager's body and Grafana's, which extends it.
type alertSource struct {
	name  string
	basic bool // Grafana can send basic auth: the password is the secret
}

func (s alertSource) Verify(h *tidings.Hook, r *Request) error { return checkBearer(h, r, s.basic) }

// alertBody is Alertmanager's webhook body (version "4"); Grafana's adds orgId,
// title, state and message, and per alert the dashboard and panel URLs.
type alertBody struct {
	Version           string            `json:"version"`
	GroupKey          string            `json:"groupKey"`
	TruncatedAlerts   int               `json:"truncatedAlerts"`
	Status            string            `json:"status"`
	Receiver          string            `json:"receiver"`
	GroupLabels       map[string]string `json:"groupLabels"`
	CommonLabels      map[string]string `json:"commonLabels"`
	CommonAnnotations map[string]string `json:"commonAnnotations"`
	ExternalURL       string            `json:"externalURL"`
	Alerts            []alert           `json:"alerts"`
	// Grafana
	OrgID any    `json:"orgId"`
	Title string `json:"title"`
	State string `json:"state"`
}

type alert struct {
	Status       string            `json:"status"`
	Labels       map[string]string `json:"labels"`
	Annotations  map[string]string `json:"annotations"`
	StartsAt     string            `json:"startsAt"`
	EndsAt       string            `json:"endsAt"`
	GeneratorURL string            `json:"generatorURL"`
	Fingerprint  string            `json:"fingerprint"`
	// Grafana
	DashboardURL string `json:"dashboardURL"`
	PanelURL     string `json:"panelURL"`
	ValueString  string `json:"valueString"`
}

// maxAlerts bounds the events of one delivery (Alertmanager's max_alerts does the
// same on its side; truncatedAlerts says how many it left out).
const maxAlerts = 100

func (s alertSource) Map(h *tidings.Hook, r *Request) (*Delivery, error) {
	var b alertBody
	if err := json.Unmarshal(r.Body, &b); err != nil {
		return nil, BadBody("the body is not an %s notification: %s", s.name, jsonError(err))
	}
	if len(b.Alerts) == 0 {
		return nil, BadBody("the body is not an %s notification: no alerts", s.name)
	}
	if len(b.Alerts) > maxAlerts {
		b.Alerts = b.Alerts[:maxAlerts]
	}
	id := sha256.New()
	id.Write([]byte(b.GroupKey))
	d := &Delivery{}
	for _, a := range b.Alerts {
		fp := a.Fingerprint
		if fp == "" {
			fp = labelsFingerprint(a.Labels)
		}
		for _, part := range []string{fp, a.Status, a.StartsAt, a.EndsAt} {
			id.Write([]byte{0})
			id.Write([]byte(part))
		}
		d.Events = append(d.Events, alertEvent(h, &a, fp, r.Now))
	}
	d.ID = "alerts:" + hex.EncodeToString(id.Sum(nil)[:16])
	return d, nil
}

func alertEvent(h *tidings.Hook, a *alert, fingerprint string, now time.Time) *tidings.NewEvent {
	e := event(h)
	name := line(a.Labels["alertname"], tidings.MaxEventNameLen-20)
	if !strings.ContainsFunc(name, visible) {
		name = "Alert"
	}
	var at string
	switch a.Status {
	case "firing":
		e.Event, e.Icon, e.Notify = name+" firing", "🔥", true
		if strings.EqualFold(a.Labels["severity"], "critical") {
			e.Priority = "high"
		}
		at = a.StartsAt
	case "resolved":
		e.Event, e.Icon = name+" resolved", "✅"
		at = a.EndsAt
	default:
		e.Event, e.Icon = label(name+" "+a.Status, name), "🔔"
		at = a.StartsAt
	}
	if t, err := time.Parse(time.RFC3339Nano, at); err == nil && t.Year() >= 2000 && !t.After(now) {
		e.Timestamp = t.UTC()
	}
	var tags tagger
	tags.add("status", a.Status)
	keys := make([]string, 0, len(a.Labels))
	for k := range a.Labels {
		keys = append(keys, k)
	}
	sort.Strings(keys) // deterministic which labels are kept past MaxTags
	for _, k := range []string{"alertname", "severity"} {
		tags.add(k, a.Labels[k])
	}
	for _, k := range keys {
		tags.add(k, a.Labels[k])
	}
	e.Tags = tags.tags
	var desc []string
	for _, k := range []string{"summary", "description", "message"} {
		if v := strings.TrimSpace(a.Annotations[k]); v != "" {
			desc = append(desc, v)
		}
	}
	if a.ValueString != "" {
		desc = append(desc, "Values: "+a.ValueString)
	}
	e.Description = text(strings.Join(desc, "\n\n"))
	e.ThreadKey = threadKey(fingerprint)
	for _, u := range []string{a.PanelURL, a.DashboardURL, a.GeneratorURL} {
		if e.URL = link(u); e.URL != "" {
			break
		}
	}
	return e
}

// labelsFingerprint stands in for a missing fingerprint: a hash of the sorted labels,
// which is what identifies an alert.
func labelsFingerprint(labels map[string]string) string {
	keys := make([]string, 0, len(labels))
	for k := range labels {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	h := sha256.New()
	for _, k := range keys {
		h.Write([]byte(k))
		h.Write([]byte{0})
		h.Write([]byte(labels[k]))
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil)[:8])
}
