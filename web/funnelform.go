package web

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/tidings-dev/tidings"
	"github.com/tidings-dev/tidings/charts"
)

// The funnel form makes and edits a board's funnel: 2 to 8 steps (feed searches), a
// window; "Add a step" and Preview are GETs that draw the form again, Save posts.

type funnelForm struct {
	Action  string
	ID      int64
	Title   string
	Steps   []funnelField
	Window  string
	Split   string // a user property: a funnel per value
	Windows []choice
	Wide    bool
	CanAdd  bool
	Range   boardRange
	Ranges  []rangeLink
	Errors  map[string]string
	Error   string
	Card    *cardView
	Back    string
}

type funnelField struct {
	N     int // from 1
	Name  string
	Value string
	Error string
}

var funnelWindows = []choice{{"1h", "1 hour"}, {"24h", "24 hours"}, {"7d", "7 days"}, {"14d", "14 days"}, {"30d", "30 days"}, {"90d", "90 days"}}

// readFunnelForm reads the steps as written, without blank ones (at least three
// inputs are shown, plus one when "Add a step" was pressed).
func readFunnelForm(v url.Values) (funnelForm, []string) {
	f := funnelForm{Title: strings.TrimSpace(v.Get("title")), Window: v.Get("window"), Split: strings.TrimSpace(v.Get("split")),
		Wide: v.Get("wide") == "1", Range: rangeOf(v)}
	if f.Window == "" {
		f.Window = "7d"
	}
	var steps []string
	for _, s := range v["step"] {
		if s = strings.TrimSpace(s); s != "" {
			steps = append(steps, s)
		}
	}
	shown := steps // the steps written, then blank inputs up to three
	if v.Get("add") != "" {
		shown = append(v["step"][:len(v["step"]):len(v["step"])], "") // as typed, and one more
	}
	n := min(max(len(shown), 3), tidings.MaxFunnelSteps)
	for i := 0; i < n; i++ {
		fd := funnelField{N: i + 1, Name: "step"}
		if i < len(shown) {
			fd.Value = strings.TrimSpace(shown[i])
		}
		f.Steps = append(f.Steps, fd)
	}
	f.CanAdd = n < tidings.MaxFunnelSteps
	return f, steps
}

func (f *funnelForm) params(steps []string) url.Values { return funnelQuery(steps, f.Window, f.Split) }

// checkFunnelForm parses the form's funnel; nil when it has problems, which it files.
func (s *Server) checkFunnelForm(r *http.Request, f *funnelForm, steps []string) *tidings.FunnelQuery {
	f.Errors = map[string]string{}
	if utf8.RuneCountInString(f.Title) > tidings.MaxCardTitle {
		f.Errors["title"] = "must be at most 100 characters"
	}
	q, err := tidings.ParseFunnel(tidings.FunnelParams{Project: r.PathValue("project"), Steps: steps, Window: f.Window, SplitBy: f.Split,
		Range: f.Range.Range, From: f.Range.From, To: f.Range.end(), TZ: viewerZone(r).String()}, s.now())
	if err != nil && !addProblems(f.Errors, &f.Error, err) {
		f.Error = tidings.ErrorMessage(err)
	}
	if len(f.params(steps).Encode()) > tidings.MaxCardParams {
		f.Errors["step"] = "the funnel's steps are too long to save"
	}
	for i := range f.Steps {
		f.Steps[i].Error = f.Errors["step["+strconv.Itoa(i)+"]"]
	}
	if len(f.Errors) > 0 || f.Error != "" {
		return nil
	}
	return q
}

func (s *Server) renderFunnelForm(w http.ResponseWriter, r *http.Request, f funnelForm, steps []string, q *tidings.FunnelQuery, status int) error {
	project := r.PathValue("project")
	f.Action = "/p/" + project + "/funnels/new"
	if f.ID > 0 {
		f.Action = "/p/" + project + "/funnels/" + itoa64(f.ID) + "/edit"
	}
	f.Windows = funnelWindows
	known := false
	for _, c := range f.Windows {
		known = known || c.Value == f.Window
	}
	if !known {
		f.Windows = append([]choice{{f.Window, f.Window}}, f.Windows...)
	}
	extra := f.params(steps)
	extra.Set("title", f.Title)
	f.Ranges = rangeLinks(f.Action, f.Range, extra)
	f.Back = "/p/" + project + "/charts" + f.Range.Suffix()
	if q != nil {
		done, err := s.ask(r)
		if err != nil {
			return err
		}
		defer done()
		res, err := charts.Funnel(r.Context(), s.store, sessionFrom(r).account.ID, q)
		if err != nil {
			if tidings.ErrorCode(err) != tidings.EValidation {
				return err
			}
			addProblems(f.Errors, &f.Error, err)
			status = http.StatusBadRequest
		} else {
			drop := f.params(steps)
			for k, vs := range f.Range.Query() {
				drop[k] = vs
			}
			fv := drawFunnel(res, func(k int) string {
				return "/p/" + project + "/funnels/dropoff?" + drop.Encode() + "&drop=" + strconv.Itoa(k)
			})
			f.Card = &cardView{Kind: tidings.CardFunnel, Title: f.Title, Question: funnelWords(q), Funnel: &fv, Wide: true}
			if f.Card.Title == "" {
				f.Card.Title = "Funnel"
			}
		}
	}
	title := "New funnel"
	if f.ID > 0 {
		title = "Edit funnel"
	}
	return s.render(w, r, "funnelform", &view{Title: title, Project: project, Section: "charts", Status: status, Data: f})
}

func (s *Server) newFunnelPage(w http.ResponseWriter, r *http.Request) error {
	f, steps := readFunnelForm(r.URL.Query())
	var q *tidings.FunnelQuery
	status := http.StatusOK
	if len(steps) > 0 && r.URL.Query().Get("add") == "" {
		if q = s.checkFunnelForm(r, &f, steps); q == nil {
			status = http.StatusBadRequest
		}
	}
	return s.renderFunnelForm(w, r, f, steps, q, status)
}

func (s *Server) editFunnelPage(w http.ResponseWriter, r *http.Request) error {
	c, err := s.pathCard(r)
	if err != nil {
		return err
	}
	if c.Kind != tidings.CardFunnel {
		return redirect(w, r, "/p/"+r.PathValue("project")+"/charts/"+itoa64(c.ID)+"/edit")
	}
	v := r.URL.Query()
	if len(v["step"]) == 0 {
		saved, _ := url.ParseQuery(c.Params)
		for k, vs := range saved {
			v[k] = vs
		}
		v.Set("title", c.Title)
		if c.Wide {
			v.Set("wide", "1")
		}
	}
	f, steps := readFunnelForm(v)
	f.ID = c.ID
	var q *tidings.FunnelQuery
	status := http.StatusOK
	if v.Get("add") == "" {
		if q = s.checkFunnelForm(r, &f, steps); q == nil {
			status = http.StatusBadRequest
		}
	}
	return s.renderFunnelForm(w, r, f, steps, q, status)
}

func (s *Server) saveFunnel(w http.ResponseWriter, r *http.Request) error {
	var err error
	acc, project := sessionFrom(r).account.ID, r.PathValue("project")
	f, steps := readFunnelForm(r.PostForm)
	if r.PathValue("id") != "" {
		if f.ID, err = cardID(r); err != nil {
			return err
		}
		if _, err := s.findCard(r.Context(), s.store, acc, project, f.ID); err != nil {
			return err
		}
	}
	q := s.checkFunnelForm(r, &f, steps)
	if q == nil {
		return s.renderFunnelForm(w, r, f, steps, nil, http.StatusBadRequest)
	}
	if f.Title == "" {
		f.Title = "Funnel: " + steps[0] + " → " + steps[len(steps)-1]
		if utf8.RuneCountInString(f.Title) > tidings.MaxCardTitle {
			f.Title = string([]rune(f.Title)[:tidings.MaxCardTitle-1]) + "…"
		}
	}
	c := &tidings.Card{ID: f.ID, Kind: tidings.CardFunnel, Title: f.Title, Params: f.params(steps).Encode(), Wide: f.Wide}
	if f.ID > 0 {
		err = s.store.UpdateCard(r.Context(), acc, project, c)
	} else {
		c, err = s.store.AddCard(r.Context(), acc, project, c)
	}
	if tidings.ErrorCode(err) == tidings.ELimitReached {
		f.Error = tidings.ErrorMessage(err)
		return s.renderFunnelForm(w, r, f, steps, nil, http.StatusBadRequest)
	}
	if err != nil {
		return err
	}
	return s.notice(w, r, "/p/"+project+"/charts"+f.Range.Suffix()+"#card-"+itoa64(c.ID), "“"+c.Title+"” saved on the board.")
}

// dropoffData lists the users who stopped at a step.
type dropoffData struct {
	Title    string
	Step     int
	From, To string // the step and the next
	Dropped  int
	Users    []string
	Back     string
	Question string
}

// dropoffPage lists up to tidings.MaxFunnelUsers users who did step K and not the
// next: of a saved funnel (…/funnels/{id}/dropoff?step=K) or of one by its
// parameters (…/funnels/dropoff?step=…&step=…&drop=K).
func (s *Server) dropoffPage(w http.ResponseWriter, r *http.Request) error {
	acc, project := sessionFrom(r).account.ID, r.PathValue("project")
	v := r.URL.Query()
	params, at, title := v, v.Get("drop"), "Funnel"
	back := "/p/" + project + "/funnels/new?" + funnelQuery(v["step"], v.Get("window"), v.Get("split")).Encode()
	if r.PathValue("id") != "" {
		c, err := s.pathCard(r)
		if err != nil {
			return err
		}
		id := c.ID
		if c.Kind != tidings.CardFunnel {
			return errNotFound
		}
		if params, err = url.ParseQuery(c.Params); err != nil {
			return err
		}
		at, title = v.Get("step"), c.Title
		back = "/p/" + project + "/charts" + rangeOf(v).Suffix() + "#card-" + itoa64(id)
	}
	br := rangeOf(v)
	q, err := tidings.ParseFunnel(tidings.FunnelParams{Project: project, Steps: params["step"], Window: params.Get("window"),
		SplitBy: params.Get("split"), Range: br.Range, From: br.From, To: br.end(), TZ: viewerZone(r).String()}, s.now())
	if err != nil {
		return err
	}
	k, err := strconv.Atoi(at)
	if err != nil || k < 1 || k >= len(q.Steps) {
		return tidings.Errorf(tidings.EValidation, "step must be a step of the funnel before its last, 1 to %d (got %q)", len(q.Steps)-1, at)
	}
	done, err := s.ask(r)
	if err != nil {
		return err
	}
	defer done()
	res, err := charts.Funnel(r.Context(), s.store, acc, q)
	if err != nil {
		return err
	}
	st := res.Steps[k-1]
	d := dropoffData{Title: title, Step: k, From: q.Steps[k-1], To: q.Steps[k], Dropped: st.Users - res.Steps[k].Users,
		Users: st.Dropped, Back: back, Question: funnelWords(q) + ", " + rangeWords(q.From.In(q.Loc), q.To.In(q.Loc))}
	return s.render(w, r, "dropoff", &view{Title: "Dropped at step " + at, Project: project, Section: "charts", Data: d})
}
