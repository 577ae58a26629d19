package web

import (
	"encoding/csv"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/tidings-dev/tidings"
	"github.com/tidings-dev/tidings/charts"
)

// chartCSV downloads what a chart draws: a row per bucket, its start (RFC 3339 in the
// viewer's zone) then a column per series. GET …/charts/{id}.csv answers a saved
// chart over the board's range; GET …/charts/preview.csv one by its parameters.
func (s *Server) chartCSV(w http.ResponseWriter, r *http.Request) error {
	acc, project := sessionFrom(r).account.ID, r.PathValue("project")
	params := r.URL.Query()
	name := "chart"
	if r.PathValue("id") != "" {
		if !strings.HasSuffix(r.PathValue("id"), ".csv") {
			return errNotFound
		}
		c, err := s.pathCard(r)
		if err != nil {
			return err
		}
		if c.Kind != tidings.CardChart {
			return errNotFound
		}
		if params, err = url.ParseQuery(c.Params); err != nil {
			return err
		}
		name = c.Title
	}
	q, err := tidings.ParseChart(chartParamsOf(project, params, rangeOf(r.URL.Query()), viewerZone(r)), s.now())
	if err != nil {
		return err
	}
	done, err := s.ask(r)
	if err != nil {
		return err
	}
	defer done()
	res, err := charts.Answer(r.Context(), s.store, acc, q)
	if err != nil {
		return err
	}
	w.Header().Set("Content-Type", "text/csv; charset=utf-8")
	w.Header().Set("Content-Disposition", `attachment; filename="`+fileName(project+"-"+name)+`.csv"`)
	w.Header().Set("Cache-Control", "no-store")
	cw := csv.NewWriter(w)
	head := []string{"bucket_start"}
	for _, s := range res.Series {
		head = append(head, seriesName(q, s))
	}
	cw.Write(csvSafe(head))
	for i, start := range q.Starts() {
		row := []string{start.In(q.Loc).Format(time.RFC3339)}
		for _, s := range res.Series {
			v := ""
			if i < len(s.Points) && s.Points[i].Value != nil {
				v = *s.Points[i].Value
			}
			row = append(row, v)
		}
		cw.Write(csvSafe(row))
	}
	cw.Flush()
	return cw.Error()
}

// csvSafe keeps a spreadsheet from reading a series' name (a tag value anyone may
// publish) as a formula.
func csvSafe(row []string) []string {
	for i, v := range row {
		if v != "" && strings.ContainsRune("=+-@\t\r", rune(v[0])) {
			if _, err := strconv.ParseFloat(v, 64); err != nil {
				row[i] = "'" + v
			}
		}
	}
	return row
}

// fileName keeps the letters, digits, - and _ of a title for a download's name.
func fileName(s string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(s) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == '-', r == '_':
			b.WriteRune(r)
		case r == ' ':
			b.WriteRune('-')
		}
	}
	if b.Len() == 0 {
		return "chart"
	}
	return b.String()
}
