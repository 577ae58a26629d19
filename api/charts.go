package api

import (
	"net/http"
	"net/url"
	"time"

	"github.com/tidings-dev/tidings"
	"github.com/tidings-dev/tidings/charts"
)

// handleChartQuery answers a chart's question:
// GET /v1/charts/query?project=P&measure=M&q=FILTER&split=S&bucket=B&from=T&to=T&tz=Z.
func (s *Server) handleChartQuery(w http.ResponseWriter, r *http.Request) error {
	tok, v, err := s.question(w, r)
	if err != nil {
		return err
	}
	q, err := tidings.ParseChart(tidings.ChartParams{Project: v.Get("project"), Measure: v.Get("measure"), Q: v.Get("q"),
		Split: v.Get("split"), Bucket: v.Get("bucket"), Range: v.Get("range"), From: v.Get("from"), To: v.Get("to"), TZ: v.Get("tz")}, s.now())
	if err != nil {
		return err
	}
	if err := allowQuestion(tok, q.Project, q.Search); err != nil {
		return err
	}
	leave, err := s.questions.Enter(r.Context(), tok.AccountID)
	if err != nil {
		w.Header().Set("Retry-After", "1")
		return err
	}
	defer leave()
	res, err := charts.Answer(r.Context(), s.store, tok.AccountID, q)
	if err != nil {
		return err
	}
	return writeJSON(w, chartOut(res))
}

// question authenticates a question's request and checks its project's name.
func (s *Server) question(w http.ResponseWriter, r *http.Request) (*tidings.Token, url.Values, error) {
	tok, err := s.authenticate(w, r)
	if err != nil {
		return nil, nil, err
	}
	v := r.URL.Query()
	var p tidings.Problems
	tidings.CheckName(&p, "project", v.Get("project"))
	return tok, v, p.Err()
}

// allowQuestion lets a full token ask about its project, and a channel-limited one
// about its channel only (the question names it: channel:C).
func allowQuestion(tok *tidings.Token, project string, s tidings.Search) error {
	if err := tok.AllowRead(project, tok.Channel); err != nil {
		return err
	}
	if tok.Channel != "" && s.Channel != tok.Channel {
		return tidings.Errorf(tidings.EForbidden, "this token is limited to channel %q of project %q: add channel:%s to the question's filter", tok.Channel, tok.Project, tok.Channel)
	}
	return nil
}

type chartJSON struct {
	Measure string            `json:"measure"`
	Bucket  string            `json:"bucket"`
	TZ      string            `json:"tz"`
	From    string            `json:"from"`
	To      string            `json:"to"`
	Series  []chartSeriesJSON `json:"series"`
}

type chartSeriesJSON struct {
	Key    *string          `json:"key"`
	Other  bool             `json:"other,omitempty"`
	Points []chartPointJSON `json:"points"`
}

type chartPointJSON struct {
	Start string  `json:"start"`
	Value *string `json:"value"`
}

func chartOut(res *tidings.ChartResult) chartJSON {
	q := res.Query
	m := q.Measure
	if q.Key != "" {
		m += ":" + q.Key
	}
	out := chartJSON{Measure: m, Bucket: q.Bucket, TZ: q.Loc.String(), From: q.From.In(q.Loc).Format(time.RFC3339),
		To: q.To.In(q.Loc).Format(time.RFC3339), Series: make([]chartSeriesJSON, len(res.Series))}
	for i, s := range res.Series {
		js := chartSeriesJSON{Key: s.Key, Other: s.Other, Points: make([]chartPointJSON, len(s.Points))}
		for j, p := range s.Points {
			js.Points[j] = chartPointJSON{Start: p.Start.Format(time.RFC3339), Value: p.Value}
		}
		out.Series[i] = js
	}
	return out
}

// handleFunnelQuery answers a funnel:
// GET /v1/funnels/query?project=P&step=FILTER&step=FILTER[…]&window=7d&from=T&to=T.
func (s *Server) handleFunnelQuery(w http.ResponseWriter, r *http.Request) error {
	tok, v, err := s.question(w, r)
	if err != nil {
		return err
	}
	q, err := tidings.ParseFunnel(tidings.FunnelParams{Project: v.Get("project"), Steps: v["step"], Window: v.Get("window"),
		Range: v.Get("range"), From: v.Get("from"), To: v.Get("to"), TZ: v.Get("tz"), SplitBy: v.Get("split")}, s.now())
	if err != nil {
		return err
	}
	for i, step := range q.Searches {
		if err := allowQuestion(tok, q.Project, step); err != nil {
			return tidings.Errorf(tidings.EForbidden, "step %d: %s", i+1, tidings.ErrorMessage(err))
		}
	}
	leave, err := s.questions.Enter(r.Context(), tok.AccountID)
	if err != nil {
		w.Header().Set("Retry-After", "1")
		return err
	}
	defer leave()
	res, err := charts.Funnel(r.Context(), s.store, tok.AccountID, q)
	if err != nil {
		return err
	}
	return writeJSON(w, funnelOut(res))
}

type funnelJSON struct {
	Window string            `json:"window"`
	From   string            `json:"from"`
	To     string            `json:"to"`
	Steps  []funnelStepJSON  `json:"steps"`
	Split  string            `json:"split,omitempty"`
	Groups []funnelGroupJSON `json:"groups,omitempty"`
}

// funnelGroupJSON is the funnel of the users with one value of the split's property
// (value null and other true: the rest, and those without it).
type funnelGroupJSON struct {
	Value *string          `json:"value"`
	Other bool             `json:"other,omitempty"`
	Steps []funnelStepJSON `json:"steps"`
}

func stepsOut(steps []tidings.FunnelStep) []funnelStepJSON {
	out := make([]funnelStepJSON, len(steps))
	for i, st := range steps {
		out[i] = funnelStepJSON{Q: st.Q, Users: st.Users, MedianSeconds: st.MedianSeconds, Dropped: st.Dropped}
	}
	return out
}

type funnelStepJSON struct {
	Q             string   `json:"q"`
	Users         int      `json:"users"`
	MedianSeconds *int64   `json:"median_seconds"`
	Dropped       []string `json:"dropped"`
}

func funnelOut(res *tidings.FunnelResult) funnelJSON {
	q := res.Query
	out := funnelJSON{Window: tidings.WindowText(q.Window), From: q.From.In(q.Loc).Format(time.RFC3339), To: q.To.In(q.Loc).Format(time.RFC3339)}
	out.Steps = stepsOut(res.Steps)
	if q.SplitBy != "" {
		out.Split, out.Groups = q.SplitBy, make([]funnelGroupJSON, len(res.Groups))
		for i, g := range res.Groups {
			out.Groups[i] = funnelGroupJSON{Value: g.Value, Other: g.Other, Steps: stepsOut(g.Steps)}
		}
	}
	return out
}
