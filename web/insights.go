package web

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/shopspring/decimal"
	"github.com/tidings-dev/tidings"
)

const sparkPoints = 30

type insightView struct {
	*tidings.Insight
	ID        string // stable element id from the title
	Spark     string // polyline points in a 100×30 box; "" when there is nothing to draw
	SparkLast string // the last point, for a dot
	SparkMin  string // the lowest and highest of the drawn values, exact, for a hover
	SparkMax  string
	Numeric   bool // a number: its history can draw
	Time      time.Time
	History   string // the insight's history page
}

func insightID(title string) string {
	sum := sha256.Sum256([]byte(title))
	return "insight-" + hex.EncodeToString(sum[:6])
}

func (s *Server) insightView(ctx context.Context, accountID int64, in *tidings.Insight) (insightView, error) {
	v := insightView{Insight: in, ID: insightID(in.Title), Time: in.UpdatedAt,
		History: "/p/" + url.PathEscape(in.Project) + "/insights/history?" + url.Values{"title": {in.Title}}.Encode()}
	_, err := decimal.NewFromString(in.Value)
	v.Numeric = err == nil
	hist, err := s.store.InsightHistory(ctx, accountID, in.Project, in.Title, sparkPoints)
	if err != nil {
		return v, err
	}
	v.Spark, v.SparkLast = sparkline(hist)
	if v.Spark != "" {
		v.SparkMin, v.SparkMax = extremes(hist)
	}
	return v, nil
}

// extremes are the lowest and highest numeric values of a history, as stored (exact).
func extremes(hist []tidings.InsightPoint) (lo, hi string) {
	var dlo, dhi decimal.Decimal
	first := true
	for _, p := range hist {
		d, ok := tidings.ParseDecimal(p.Value)
		if !ok {
			continue
		}
		if first || d.LessThan(dlo) {
			dlo, lo = d, p.Value
		}
		if first || dhi.LessThan(d) {
			dhi, hi = d, p.Value
		}
		first = false
	}
	return lo, hi
}

// sparkline draws the numeric points of a history in a 100×30 box (y grows downward).
func sparkline(hist []tidings.InsightPoint) (points, last string) {
	var ys []float64
	for _, p := range hist {
		d, ok := tidings.ParseDecimal(p.Value)
		if !ok {
			continue
		}
		f, _ := d.Float64() // drawing only: the shown value stays exact
		ys = append(ys, f)
	}
	if len(ys) < 2 {
		return "", ""
	}
	lo, hi := ys[0], ys[0]
	for _, y := range ys {
		lo, hi = min(lo, y), max(hi, y)
	}
	var b strings.Builder
	var x, y float64
	for i, v := range ys {
		x = float64(i) * 100 / float64(len(ys)-1)
		y = 15
		if hi > lo {
			y = 28 - (v-lo)/(hi-lo)*26
		}
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(fmtFloat(x) + "," + fmtFloat(y))
	}
	return b.String(), fmtFloat(x) + "," + fmtFloat(y)
}

func fmtFloat(f float64) string { return strconv.FormatFloat(f, 'f', 1, 64) }

func (s *Server) insightCard(ctx context.Context, accountID int64, in *tidings.Insight) (string, error) {
	v, err := s.insightView(ctx, accountID, in)
	if err != nil {
		return "", err
	}
	var b bytes.Buffer
	err = s.pages.raw.ExecuteTemplate(&b, "insight-card", v)
	return b.String(), err
}

type insightsData struct {
	Insights []insightView
	Stream   string
	More     string // the next page's URL: the project has more insights than a page shows
	Later    bool   // this is not the first page
}

// insightsPage shows a page of a project's insights in the order they were created:
// /p/{project}/insights[?after=…]. A project may hold MaxInsightsPerProject; a page
// shows DefaultInsightPage of them, and each card reads its history.
func (s *Server) insightsPage(w http.ResponseWriter, r *http.Request) error {
	project := r.PathValue("project")
	after := r.URL.Query().Get("after")
	page, err := s.store.PageInsights(r.Context(), sessionFrom(r).account.ID, tidings.InsightQuery{Project: project,
		ByCreation: true, After: after, Limit: tidings.DefaultInsightPage})
	if tidings.ErrorCode(err) == tidings.EValidation { // a cursor that is not one: start again
		return redirect(w, r, "/p/"+project+"/insights")
	}
	if err != nil {
		return err
	}
	d := insightsData{Stream: "/p/" + project + "/stream?insights=1", Later: after != ""} // insight cards only
	if page.Next != "" {
		d.More = "/p/" + project + "/insights?" + url.Values{"after": {page.Next}}.Encode()
	}
	for _, in := range page.Insights {
		v, err := s.insightView(r.Context(), sessionFrom(r).account.ID, in)
		if err != nil {
			return err
		}
		d.Insights = append(d.Insights, v)
	}
	return s.render(w, r, "insights", &view{Title: project + " insights", Project: project, Section: "insights", Data: d})
}

// deleteInsight deletes the insight named by the form's title, with its history.
func (s *Server) deleteInsight(w http.ResponseWriter, r *http.Request) error {
	project := r.PathValue("project")
	if err := s.store.DeleteInsight(r.Context(), sessionFrom(r).account.ID, project, r.FormValue("title")); err != nil {
		return err
	}
	return redirect(w, r, "/p/"+project+"/insights")
}
