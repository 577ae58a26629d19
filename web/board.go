package web

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/tidings-dev/tidings"
	"github.com/tidings-dev/tidings/charts"
)

// The Charts page is the project's board: its saved charts and funnels, in the order a
// member arranged them, each drawn over the range the board's picker chose.

// ask waits for the account's turn to ask the engine questions: a page draws its
// cards one after another within one turn (Config.Questions).
func (s *Server) ask(r *http.Request) (func(), error) {
	return s.questions.Enter(r.Context(), sessionFrom(r).account.ID)
}

// boardRange is the board's range picker: a preset (range=) or from and to (days).
type boardRange struct {
	Range    string
	From, To string
}

func rangeOf(v url.Values) boardRange {
	br := boardRange{Range: v.Get("range"), From: strings.TrimSpace(v.Get("from")), To: strings.TrimSpace(v.Get("to"))}
	if br.From != "" || br.To != "" {
		br.Range = ""
	} else if br.Range == "" {
		br.Range = "30d"
	}
	return br
}

// end is the range's to as the engine reads it: a day picked as the last is whole.
func (br boardRange) end() string {
	if t, err := time.Parse("2006-01-02", br.To); err == nil {
		return t.AddDate(0, 0, 1).Format("2006-01-02")
	}
	return br.To
}

// Query is the range as URL parameters.
func (br boardRange) Query() url.Values {
	v := url.Values{}
	if br.From != "" || br.To != "" {
		v.Set("from", br.From)
		v.Set("to", br.To)
	} else if br.Range != "" && br.Range != "30d" {
		v.Set("range", br.Range)
	}
	return v
}

// Suffix is the range as a query to append: "" or "?range=7d".
func (br boardRange) Suffix() string {
	if q := br.Query().Encode(); q != "" {
		return "?" + q
	}
	return ""
}

type rangeLink struct {
	Text, URL string
	Current   bool
}

var rangeTexts = []struct{ value, text string }{{"24h", "24 hours"}, {"7d", "7 days"}, {"30d", "30 days"}, {"90d", "90 days"}, {"12m", "12 months"}}

// rangeLinks are the picker's presets as links to base.
func rangeLinks(base string, br boardRange, extra url.Values) []rangeLink {
	var out []rangeLink
	for _, rt := range rangeTexts {
		v := url.Values{}
		for k, vs := range extra {
			v[k] = vs
		}
		if rt.value != "30d" {
			v.Set("range", rt.value)
		}
		u := base
		if q := v.Encode(); q != "" {
			u += "?" + q
		}
		out = append(out, rangeLink{Text: rt.text, URL: u, Current: br.Range == rt.value})
	}
	return out
}

type boardData struct {
	Range   boardRange
	Ranges  []rangeLink
	Custom  bool
	Zone    string
	Cards   []cardView
	Preview *cardView // an empty board's live "Events per day"
	Quick   []quickChart
	Error   string // the range picker's problem
	Full    bool
}

// cardView is a card as drawn on the board or as a form's preview.
type cardView struct {
	ID          int64
	Kind        string
	Title       string
	Question    string
	Wide        bool
	First, Last bool
	Plot        *plot
	Funnel      *funnelView
	Error       string // the engine refused the question (too costly, a text tag…)
	CSV         string
	Edit        string
	Base        string     // the card's actions' URL prefix (board cards only)
	Range       boardRange // the board's range, kept by the actions
}

// quickChart is a one-click chart for an empty board.
type quickChart struct {
	Title, Measure, Split, Display string
	Wide                           bool
}

var quickCharts = []quickChart{
	{Title: "Events per day", Display: "bar", Wide: true},
	{Title: "Unique users per day", Measure: "users", Display: "line"},
	{Title: "Events by channel", Split: "channel", Display: "stacked"},
	{Title: "Events in this period", Display: "number"},
}

func (s *Server) boardPage(w http.ResponseWriter, r *http.Request) error {
	project := r.PathValue("project")
	acc := sessionFrom(r).account.ID
	br := rangeOf(r.URL.Query())
	loc := viewerZone(r)
	done, err := s.ask(r)
	if err != nil {
		return err
	}
	defer done()
	d := boardData{Range: br, Ranges: rangeLinks("/p/"+project+"/charts", br, nil), Custom: br.Range == "", Zone: loc.String()}
	cards, err := s.store.ListCards(r.Context(), acc, project)
	if err != nil {
		return err
	}
	d.Full = len(cards) >= tidings.MaxBoardCards
	status := http.StatusOK
	if _, err := tidings.ParseChart(tidings.ChartParams{Project: project, Range: br.Range, From: br.From, To: br.end(), TZ: loc.String()}, s.now()); err != nil {
		if tidings.ErrorCode(err) != tidings.EValidation {
			return err
		}
		d.Error = tidings.ErrorMessage(err)
		status = http.StatusBadRequest
		br = boardRange{Range: "30d"}
	}
	// The page's cards read at most charts.MaxPageScan events together.
	ctx := charts.WithBudget(r.Context(), charts.MaxPageScan)
	for i, c := range cards {
		v, err := s.drawCard(ctx, s.store, acc, project, c, br, loc)
		if err != nil {
			return err
		}
		v.First, v.Last = i == 0, i == len(cards)-1
		v.Base, v.Range = "/p/"+project+"/charts/"+itoa64(c.ID), br
		d.Cards = append(d.Cards, v)
	}
	if len(cards) == 0 {
		v, err := s.drawCard(ctx, s.store, acc, project, &tidings.Card{Kind: tidings.CardChart, Title: "Events per day", Params: "display=bar", Wide: true}, br, loc)
		if err != nil {
			return err
		}
		v.Edit, v.CSV = "", ""
		d.Preview, d.Quick = &v, quickCharts
	}
	return s.render(w, r, "board", &view{Title: project + " charts", Project: project, Section: "charts", Status: status, Data: d})
}

// drawCard answers a card's question over the board's range; a question the engine
// refuses shows its message in the card.
func (s *Server) drawCard(ctx context.Context, cs charts.Store, acc int64, project string, c *tidings.Card, br boardRange, loc *time.Location) (cardView, error) {
	v := cardView{ID: c.ID, Kind: c.Kind, Title: c.Title, Wide: c.Wide}
	params, _ := url.ParseQuery(c.Params)
	rq := br.Suffix()
	if c.Kind == tidings.CardFunnel {
		v.Edit = "/p/" + project + "/funnels/" + itoa64(c.ID) + "/edit" + rq
		fp := tidings.FunnelParams{Project: project, Steps: params["step"], Window: params.Get("window"), SplitBy: params.Get("split"),
			Range: br.Range, From: br.From, To: br.end(), TZ: loc.String()}
		q, err := tidings.ParseFunnel(fp, s.now())
		if err != nil {
			return v, cardProblem(&v, err)
		}
		v.Question = funnelWords(q)
		res, err := charts.Funnel(ctx, cs, acc, q)
		if err != nil {
			return v, cardProblem(&v, err)
		}
		fv := drawFunnel(res, func(k int) string {
			dq := br.Query()
			dq.Set("step", strconv.Itoa(k))
			return "/p/" + project + "/funnels/" + itoa64(c.ID) + "/dropoff?" + dq.Encode()
		})
		v.Funnel = &fv
		return v, nil
	}
	v.Edit = "/p/" + project + "/charts/" + itoa64(c.ID) + "/edit" + rq
	v.CSV = "/p/" + project + "/charts/" + itoa64(c.ID) + ".csv" + rq
	cp := chartParamsOf(project, params, br, loc)
	display := params.Get("display")
	if display == "" {
		display = "line"
	}
	q, err := tidings.ParseChart(cp, s.now())
	if err != nil {
		return v, cardProblem(&v, err)
	}
	v.Question = questionWords(q)
	p, err := s.drawQuestion(ctx, cs, acc, q, display, c.Wide)
	if err != nil {
		return v, cardProblem(&v, err)
	}
	v.Plot = p
	return v, nil
}

// cardProblem shows a question's refusal (a validation error) in its card; any other
// error is the page's.
func cardProblem(v *cardView, err error) error {
	if tidings.ErrorCode(err) == tidings.EValidation {
		v.Error = tidings.ErrorMessage(err)
		return nil
	}
	return err
}

// drawQuestion answers a chart and draws it; a single number also answers the
// period just before, for its change.
func (s *Server) drawQuestion(ctx context.Context, cs charts.Store, acc int64, q *tidings.ChartQuery, display string, wide bool) (*plot, error) {
	res, err := charts.Answer(ctx, cs, acc, q)
	if err != nil {
		return nil, err
	}
	p := drawChart(res, display, wide)
	if display != "number" {
		return &p, nil
	}
	prev := *q
	prev.From, prev.To = q.From.Add(-q.To.Sub(q.From)), q.From
	now, err := s.wholeNumber(ctx, cs, acc, res)
	if err != nil {
		return nil, err
	}
	p.Number = &plotNumber{Value: now, Trend: "flat"}
	prevRes, err := charts.Answer(ctx, cs, acc, &prev)
	if err == nil {
		before, err := s.wholeNumber(ctx, cs, acc, prevRes)
		if err == nil {
			p.Number.Prev = before
			p.Number.Change, p.Number.Trend = changeWords(now, before)
		}
	}
	p.Empty = "" // zero is a number worth showing, with its change
	p.Summary = questionWords(q) + ", " + rangeWords(q.From.In(q.Loc), q.To.In(q.Loc)) + ": " + now
	if p.Number.Change != "" {
		p.Summary += " (" + p.Number.Change + " against the period before)"
	}
	return &p, nil
}

// wholeNumber is a chart's single number over its whole range: buckets add up for
// counts and sums and bound minimums and maximums; users and averages are counted
// again over the range, within the engine's budget.
func (s *Server) wholeNumber(ctx context.Context, cs charts.Store, acc int64, res *tidings.ChartResult) (string, error) {
	if v, ok := numberOf(res); ok {
		return v, nil
	}
	q := res.Query
	eq, ok := q.Events()
	if !ok {
		return "0", nil
	}
	users := map[string]struct{}{}
	var sum float64
	var n int
	err := cs.ScanEvents(ctx, acc, eq, tidings.MaxChartScan, func(ev *tidings.Event) error {
		if !eq.Matches(ev) {
			return nil
		}
		if q.Measure == "users" {
			if ev.UserID != "" {
				users[ev.UserID] = struct{}{}
			}
			return nil
		}
		if t, ok := ev.Tags.Get(q.Key); ok && t.Kind == tidings.KindNumber {
			if f, err := strconv.ParseFloat(t.Value, 64); err == nil {
				sum += f
				n++
			}
		}
		return nil
	})
	if errors.Is(err, tidings.ErrScanBudget) {
		return "", tidings.Errorf(tidings.EValidation, "this range holds more than %d events: choose a shorter range, or filter by a channel or a tag", tidings.MaxChartScan)
	}
	if err != nil {
		return "", err
	}
	if q.Measure == "users" {
		return strconv.Itoa(len(users)), nil
	}
	if n == 0 {
		return "—", nil
	}
	return strconv.FormatFloat(sum/float64(n), 'f', -1, 64), nil
}

// chartParamsOf reads a card's (or a form's) chart parameters, with the board's range.
func chartParamsOf(project string, v url.Values, br boardRange, loc *time.Location) tidings.ChartParams {
	return tidings.ChartParams{Project: project, Measure: v.Get("measure"), Q: v.Get("q"), Split: v.Get("split"),
		Bucket: v.Get("bucket"), Range: br.Range, From: br.From, To: br.end(), TZ: loc.String()}
}

// funnelWords is a funnel's question: "3 steps within 7 d: a → b → c".
func funnelWords(q *tidings.FunnelQuery) string {
	return strconv.Itoa(len(q.Steps)) + " steps within " + durationWords(int64(q.Window.Seconds())) + ": " + strings.Join(q.Steps, " → ")
}

func itoa64(n int64) string { return strconv.FormatInt(n, 10) }

// cardID reads the {id} of a card's URL; a malformed one is not found.
func cardID(r *http.Request) (int64, error) {
	id, err := strconv.ParseInt(strings.TrimSuffix(r.PathValue("id"), ".csv"), 10, 64)
	if err != nil || id <= 0 {
		return 0, errNotFound
	}
	return id, nil
}

// pathCard is the card the request's path names ({project}, {id}) on the account's
// board. Errors: ENotFound.
func (s *Server) pathCard(r *http.Request) (*tidings.Card, error) {
	id, err := cardID(r)
	if err != nil {
		return nil, err
	}
	return s.findCard(r.Context(), s.store, sessionFrom(r).account.ID, r.PathValue("project"), id)
}

// findCard is a card of the project's board. Errors: ENotFound.
func (s *Server) findCard(ctx context.Context, cs charts.Store, acc int64, project string, id int64) (*tidings.Card, error) {
	cards, err := cs.ListCards(ctx, acc, project)
	if err != nil {
		return nil, err
	}
	for _, c := range cards {
		if c.ID == id {
			return c, nil
		}
	}
	return nil, tidings.CardNotFound(project, id)
}

// backToBoard is the board with the range the form came from, at the card.
func backToBoard(r *http.Request, id int64) string {
	br := rangeOf(r.Form)
	u := "/p/" + r.PathValue("project") + "/charts" + br.Suffix()
	if id > 0 {
		u += "#card-" + itoa64(id)
	}
	return u
}

func (s *Server) moveCard(w http.ResponseWriter, r *http.Request) error {
	id, err := cardID(r)
	if err != nil {
		return err
	}
	by := 1
	if r.PostFormValue("by") == "-1" {
		by = -1
	}
	if err := s.store.MoveCard(r.Context(), sessionFrom(r).account.ID, r.PathValue("project"), id, by); err != nil {
		return err
	}
	return redirect(w, r, backToBoard(r, id))
}

func (s *Server) resizeCard(w http.ResponseWriter, r *http.Request) error {
	c, err := s.pathCard(r)
	if err != nil {
		return err
	}
	c.Wide = r.PostFormValue("wide") == "1"
	if err := s.store.UpdateCard(r.Context(), sessionFrom(r).account.ID, r.PathValue("project"), c); err != nil {
		return err
	}
	return redirect(w, r, backToBoard(r, c.ID))
}

func (s *Server) deleteCard(w http.ResponseWriter, r *http.Request) error {
	c, err := s.pathCard(r)
	if err != nil {
		return err
	}
	if err := s.store.DeleteCard(r.Context(), sessionFrom(r).account.ID, r.PathValue("project"), c.ID); err != nil {
		return err
	}
	return s.notice(w, r, backToBoard(r, 0), "“"+c.Title+"” deleted from the board.")
}
