package web

import (
	"errors"
	"net/http"
	"net/url"
	"strings"
	"unicode/utf8"

	"github.com/tidings-dev/tidings"
)

// The chart form makes and edits a board's chart: a GET draws its preview (the
// "Chart this" link of a feed search is one), a POST saves it.

// chartForm is the chart form's fields as the person wrote them.
type chartForm struct {
	Action   string // where Save posts
	Preview  string // where Preview gets
	ID       int64
	Title    string
	Measure  string // count, users, sum, avg, min, max
	Key      string // the number tag
	Q        string
	Split    string // "", channel, tag
	SplitKey string
	Bucket   string
	Display  string
	Wide     bool
	Range    boardRange
	Ranges   []rangeLink
	Errors   map[string]string // by field name
	Error    string            // problems of no one field
	Card     *cardView         // the preview
	CSV      string
	Back     string
}

// choice is an option of a select.
type choice struct{ Value, Text string }

var displayChoices = []choice{{"line", "Line"}, {"bar", "Bars"}, {"stacked", "Stacked bars"}, {"number", "A single number"}, {"table", "Table"}}

var rangeChoices = []choice{{"24h", "24 hours"}, {"7d", "7 days"}, {"30d", "30 days"}, {"90d", "90 days"}, {"12m", "12 months"}}

var bucketChoices = []choice{{"hour", "Hour"}, {"day", "Day"}, {"week", "Week"}, {"month", "Month"}}

// readChartForm reads the form's fields; measure and split may also be written as in
// a card's parameters (sum:amount, tag:plan).
func readChartForm(v url.Values) chartForm {
	f := chartForm{Title: strings.TrimSpace(v.Get("title")), Measure: v.Get("measure"), Key: strings.TrimSpace(v.Get("key")),
		Q: strings.TrimSpace(v.Get("q")), Split: v.Get("split"), SplitKey: strings.TrimSpace(v.Get("split_key")),
		Bucket: v.Get("bucket"), Display: v.Get("display"), Wide: v.Get("wide") == "1", Range: rangeOf(v)}
	if kind, key, ok := strings.Cut(f.Measure, ":"); ok {
		f.Measure, f.Key = kind, key
	}
	if kind, key, ok := strings.Cut(f.Split, ":"); ok {
		f.Split, f.SplitKey = kind, key
	}
	if f.Measure == "" {
		f.Measure = "count"
	}
	if f.Bucket == "" {
		f.Bucket = "day"
	}
	if f.Display == "" {
		f.Display = "line"
	}
	return f
}

// params are the card's parameters (range is the board's).
func (f *chartForm) params() url.Values {
	v := url.Values{}
	m := f.Measure
	if m != "count" && m != "users" {
		m += ":" + f.Key
	}
	v.Set("measure", m)
	if f.Q != "" {
		v.Set("q", f.Q)
	}
	switch f.Split {
	case "channel":
		v.Set("split", "channel")
	case "tag":
		v.Set("split", "tag:"+f.SplitKey)
	case "":
	default:
		v.Set("split", f.Split)
	}
	v.Set("bucket", f.Bucket)
	v.Set("display", f.Display)
	return v
}

// fieldOf maps a problem's path to the form's field that shows it.
func fieldOf(path string) string {
	switch {
	case path == "split", path == "measure", path == "q", path == "bucket", path == "display", path == "title", path == "window":
		return path
	case path == "from", path == "to", path == "range", path == "tz":
		return "range"
	case strings.HasPrefix(path, "step"):
		return path
	}
	return ""
}

// addProblems files err's problems by field; it reports whether err was a validation error.
func addProblems(errs map[string]string, general *string, err error) bool {
	var e *tidings.Error
	if !errors.As(err, &e) || e.Code != tidings.EValidation {
		return false
	}
	if len(e.Fields) == 0 {
		*general = e.Message
	}
	for _, fe := range e.Fields {
		msg := strings.TrimPrefix(fe.Message, fe.Path+": ")
		name := fieldOf(fe.Path)
		if name == "" {
			*general = fe.Message
			continue
		}
		if errs[name] == "" {
			errs[name] = msg
		}
	}
	return true
}

// check parses the form into a question and files its problems; q is nil when it has any.
func (s *Server) checkChartForm(r *http.Request, f *chartForm) *tidings.ChartQuery {
	f.Errors = map[string]string{}
	if utf8.RuneCountInString(f.Title) > tidings.MaxCardTitle {
		f.Errors["title"] = "must be at most 100 characters"
	}
	if !oneOfList(f.Display, tidings.ChartDisplays) {
		f.Errors["display"] = "must be one of line, bar, stacked, number, table"
	}
	if (f.Measure == "sum" || f.Measure == "avg" || f.Measure == "min" || f.Measure == "max") && f.Key == "" {
		f.Errors["measure"] = "name the number tag to add up, such as amount"
	}
	if f.Split == "tag" && f.SplitKey == "" {
		f.Errors["split"] = "name the tag to split by, such as plan"
	}
	if len(f.Errors) > 0 {
		return nil
	}
	p := chartParamsOf(r.PathValue("project"), f.params(), f.Range, viewerZone(r))
	q, err := tidings.ParseChart(p, s.now())
	if err != nil {
		addProblems(f.Errors, &f.Error, err)
		return nil
	}
	if len(f.Params()) > tidings.MaxCardParams {
		f.Errors["q"] = "the chart's question is too long to save"
		return nil
	}
	return q
}

// Params is the card's parameters as saved.
func (f *chartForm) Params() string { return f.params().Encode() }

func oneOfList(s string, list []string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// renderChartForm draws the form with its preview.
func (s *Server) renderChartForm(w http.ResponseWriter, r *http.Request, f chartForm, q *tidings.ChartQuery, status int) error {
	project := r.PathValue("project")
	if f.ID > 0 {
		f.Action = "/p/" + project + "/charts/" + itoa64(f.ID) + "/edit"
	} else {
		f.Action = "/p/" + project + "/charts/new"
	}
	f.Preview = f.Action
	extra := f.params()
	extra.Set("title", f.Title)
	if f.Wide {
		extra.Set("wide", "1")
	}
	f.Ranges = rangeLinks(f.Action, f.Range, extra)
	f.Back = "/p/" + project + "/charts" + f.Range.Suffix()
	if q != nil {
		done, err := s.ask(r)
		if err != nil {
			return err
		}
		defer done()
		v := cardView{Title: f.Title, Question: questionWords(q), Wide: true}
		if v.Title == "" {
			v.Title = measureWords(q)
		}
		// Drawn narrow: the preview's column is about as wide as a board's column.
		p, err := s.drawQuestion(r.Context(), s.store, sessionFrom(r).account.ID, q, f.Display, false)
		if err != nil {
			if tidings.ErrorCode(err) == tidings.EProjectNotFound {
				return err
			}
			if !addProblems(f.Errors, &f.Error, err) {
				return err
			}
			if status == http.StatusOK {
				status = http.StatusBadRequest
			}
		} else {
			v.Plot = p
			f.Card = &v
			csv := f.params()
			for k, vs := range f.Range.Query() {
				csv[k] = vs
			}
			f.CSV = "/p/" + project + "/charts/preview.csv?" + csv.Encode()
		}
	}
	title := "New chart"
	if f.ID > 0 {
		title = "Edit chart"
	}
	return s.render(w, r, "chartform", &view{Title: title, Project: project, Section: "charts", Status: status, Data: f})
}

func (s *Server) newChartPage(w http.ResponseWriter, r *http.Request) error {
	f := readChartForm(r.URL.Query())
	q := s.checkChartForm(r, &f)
	status := http.StatusOK
	if q == nil {
		status = http.StatusBadRequest
	}
	return s.renderChartForm(w, r, f, q, status)
}

func (s *Server) editChartPage(w http.ResponseWriter, r *http.Request) error {
	c, err := s.pathCard(r)
	if err != nil {
		return err
	}
	if c.Kind != tidings.CardChart {
		return redirect(w, r, "/p/"+r.PathValue("project")+"/funnels/"+itoa64(c.ID)+"/edit")
	}
	v := r.URL.Query()
	if v.Get("measure") == "" { // not a preview of changes: the card as saved
		saved, _ := url.ParseQuery(c.Params)
		for k, vs := range saved {
			v[k] = vs
		}
		v.Set("title", c.Title)
		if c.Wide {
			v.Set("wide", "1")
		}
	}
	f := readChartForm(v)
	f.ID = c.ID
	q := s.checkChartForm(r, &f)
	status := http.StatusOK
	if q == nil {
		status = http.StatusBadRequest
	}
	return s.renderChartForm(w, r, f, q, status)
}

// saveChart adds (POST …/charts/new) or updates (POST …/charts/{id}/edit) a chart.
func (s *Server) saveChart(w http.ResponseWriter, r *http.Request) error {
	var err error
	f := readChartForm(r.PostForm)
	acc, project := sessionFrom(r).account.ID, r.PathValue("project")
	if r.PathValue("id") != "" {
		if f.ID, err = cardID(r); err != nil {
			return err
		}
		if _, err := s.findCard(r.Context(), s.store, acc, project, f.ID); err != nil {
			return err
		}
	}
	q := s.checkChartForm(r, &f)
	if q == nil {
		return s.renderChartForm(w, r, f, nil, http.StatusBadRequest)
	}
	if f.Title == "" {
		f.Title = measureWords(q)
		if f.Q != "" {
			f.Title += " · " + f.Q
		}
		if utf8.RuneCountInString(f.Title) > tidings.MaxCardTitle {
			f.Title = string([]rune(f.Title)[:tidings.MaxCardTitle-1]) + "…"
		}
	}
	c := &tidings.Card{ID: f.ID, Kind: tidings.CardChart, Title: f.Title, Params: f.Params(), Wide: f.Wide}
	if f.ID > 0 {
		err = s.store.UpdateCard(r.Context(), acc, project, c)
	} else {
		c, err = s.store.AddCard(r.Context(), acc, project, c)
	}
	if tidings.ErrorCode(err) == tidings.ELimitReached {
		f.Error = tidings.ErrorMessage(err)
		return s.renderChartForm(w, r, f, q, http.StatusBadRequest)
	}
	if err != nil {
		return err
	}
	return s.notice(w, r, "/p/"+project+"/charts"+f.Range.Suffix()+"#card-"+itoa64(c.ID), "“"+c.Title+"” saved on the board.")
}

// chartThis is the chart form for a feed's search (its box, channel and user), or ""
// when the feed is not searched.
func chartThis(project, channel, box, user string) string {
	var parts []string
	if channel != "" {
		parts = append(parts, "channel:"+channel)
	}
	if user != "" && !strings.ContainsAny(user, " \"") {
		parts = append(parts, "user:"+user)
	}
	if box = strings.TrimSpace(box); box != "" {
		parts = append(parts, box)
	}
	if len(parts) == 0 || (channel != "" && len(parts) == 1) {
		return ""
	}
	return "/p/" + project + "/charts/new?" + url.Values{"q": {strings.Join(parts, " ")}, "display": {"bar"}}.Encode()
}
