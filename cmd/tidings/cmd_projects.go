// The project and channel commands: tidings project …, tidings channel ….

package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/tidings-dev/tidings"
)

// projectSettings are the flags of project create and update; "" leaves a setting as is.
type projectSettings struct {
	autoCreate, retention, changeDefault, ignoreGPC string
	repeatEvery, repeatTimes                        string // an urgent event's escalation
	escalateAfter                                   string // then everyone, this long without an acknowledgement
	escalateSet                                     bool   // --escalate-after was given ("" is refused)
	notify                                          string // who is notified: everyone, nobody, emails (a channel: project)
	notifySet                                       bool   // --notify was given (--notify "" is refused, not "as is")
}

// setFlag is a boolean flag that remembers whether it was given (--name, --name=false).
type setFlag struct{ v *string }

func (f setFlag) String() string {
	if f.v == nil {
		return ""
	}
	return *f.v
}

func (f setFlag) Set(s string) error {
	b, err := strconv.ParseBool(s)
	if err != nil {
		return fmt.Errorf("must be true or false, not %q", s)
	}
	*f.v = strconv.FormatBool(b)
	return nil
}

func (f setFlag) IsBoolFlag() bool { return true }

func projectFlags(fs *flag.FlagSet, c *cli) {
	accountFlag(fs, c)
	fs.Var(setFlag{&c.settings.autoCreate}, "auto-create-channels", "true: an event to a channel that does not exist creates it; false: it is refused (404)")
	fs.StringVar(&c.settings.retention, "retention-days", "", fmt.Sprintf("days the project keeps events, by their timestamp: one of %v (0 keeps them forever)", tidings.RetentionChoices))
	fs.StringVar(&c.settings.changeDefault, "insight-change-default", "",
		`update: an insight update without "change" replaces the value (turn it on for the LogSnag SDKs' insight.track); none: it is refused (the default)`)
	fs.Var(setFlag{&c.settings.ignoreGPC}, "ignore-gpc", "true: record the page views of visitors whose browser signals Global Privacy Control; false: record nothing of them (the default)")
	fs.StringVar(&c.settings.repeatEvery, "repeat-urgent-every", "",
		fmt.Sprintf("push an unacknowledged urgent event again this often: a `duration` from 1m to 24h, like 5m or 1h30m (default %s)", fmtEvery(tidings.RepeatUrgentEvery)))
	fs.StringVar(&c.settings.repeatTimes, "repeat-urgent-times", "",
		fmt.Sprintf("push an unacknowledged urgent event again at most this many `times`: 0 (never) to %d (default %d)", tidings.MaxRepeatUrgentTimes, tidings.RepeatUrgentTimes))
	fs.Var(givenString{&c.settings.escalateAfter, &c.settings.escalateSet}, "escalate-after",
		"then everyone: an urgent event that nobody acknowledged this long after it arrived is sent to every member, recipients or not; a `duration` from 1m to 24h, like 10m, or 0 (never, the default)")
	fs.Var(notifyFlag{&c.settings}, "notify",
		"`who` is notified of the project's events: everyone (the default), nobody, or members' emails separated by commas; channels without their own setting follow it")
}

// escalate reads --escalate-after: 0 (never) or 1m–24h.
func (ps projectSettings) escalate() (time.Duration, error) {
	d, err := time.ParseDuration(strings.TrimSpace(ps.escalateAfter)) // "0" is 0
	if err != nil || tidings.CheckEscalateAfter(d) != nil {
		return 0, tidings.Errorf(tidings.EValidation, "--escalate-after must be 0 (never) or a duration from 1m to 24h, like 10m or 1h30m, not %q", ps.escalateAfter)
	}
	return d, nil
}

// fmtEscalate writes a project's escalation delay as --escalate-after takes it.
func fmtEscalate(d time.Duration) string {
	if d == 0 {
		return "0"
	}
	return fmtEvery(d)
}

// notifyFlag is --notify, remembering that it was given: --notify "" is a mistake
// that parseNotify says in one line, not "leave it as is".
type notifyFlag struct{ ps *projectSettings }

func (f notifyFlag) String() string {
	if f.ps == nil {
		return ""
	}
	return f.ps.notify
}

func (f notifyFlag) Set(s string) error {
	f.ps.notify, f.ps.notifySet = s, true
	return nil
}

// notifyProject is --notify's value that makes a channel follow its project again.
const notifyProject = "project"

// parseNotify reads --notify: nil for "project" when a channel may follow its
// project (forChannel), the recipients otherwise; the message names the flag.
func parseNotify(s string, forChannel bool) (*tidings.Recipients, error) {
	if strings.TrimSpace(s) == "" {
		also := ""
		if forChannel {
			also = `, or "project"`
		}
		return nil, tidings.Errorf(tidings.EValidation, `--notify must be "everyone", "nobody", or members' emails separated by commas%s (got "")`, also)
	}
	if strings.TrimSpace(s) == notifyProject {
		if !forChannel {
			return nil, tidings.Errorf(tidings.EValidation, `--notify project is for a channel (it follows its project again): a project's is everyone, nobody, or members' emails separated by commas`)
		}
		return nil, nil
	}
	r, err := tidings.ParseRecipients(s)
	if err != nil {
		return nil, flagError(err, "notify")
	}
	return &r, nil
}

// flagError writes a domain problem of a field ("notify: must be …", "chat_id: …")
// as one of the flag that set it ("--notify must be …", "--chat-id …").
func flagError(err error, fields ...string) error {
	var e *tidings.Error
	if !errors.As(err, &e) {
		return err
	}
	msg := e.Message
	for _, f := range fields {
		msg = strings.ReplaceAll(msg, f+": ", "--"+strings.ReplaceAll(f, "_", "-")+" ")
	}
	return &tidings.Error{Code: e.Code, Message: msg, Fields: e.Fields}
}

// checkMembers refuses, before anything is saved, recipients that are not members
// of the account (the store checks again when it saves them).
func checkMembers(ctx context.Context, s tidings.Store, account int64, r *tidings.Recipients) error {
	if r == nil || r.Mode != tidings.NotifyMembers {
		return nil
	}
	us, err := s.ListUsers(ctx, account)
	if err != nil {
		return err
	}
	members := map[string]bool{}
	for _, u := range us {
		members[strings.ToLower(u.Email)] = true
	}
	for _, e := range r.Emails {
		if !members[e] {
			return tidings.Errorf(tidings.EValidation, "--notify not a member of the account: %s", e)
		}
	}
	return nil
}

// repeatUrgent reads --repeat-urgent-every and --repeat-urgent-times over the
// project's current escalation (every, times), saying what is accepted when one is wrong.
func (ps projectSettings) repeatUrgent(every time.Duration, times int) (time.Duration, int, error) {
	if ps.repeatEvery != "" {
		d, err := time.ParseDuration(ps.repeatEvery)
		if err != nil || d < tidings.MinRepeatUrgentEvery || d > tidings.MaxRepeatUrgentEvery {
			return 0, 0, tidings.Errorf(tidings.EValidation, "--repeat-urgent-every must be a duration from 1m to 24h, like 5m or 1h30m, not %q", ps.repeatEvery)
		}
		every = d
	}
	if ps.repeatTimes != "" {
		n, err := strconv.Atoi(ps.repeatTimes)
		if err != nil || n < 0 || n > tidings.MaxRepeatUrgentTimes {
			return 0, 0, tidings.Errorf(tidings.EValidation, "--repeat-urgent-times must be a whole number from 0 (never) to %d, not %q", tidings.MaxRepeatUrgentTimes, ps.repeatTimes)
		}
		times = n
	}
	return every, times, tidings.CheckRepeatUrgent(every, times)
}

// fmtEvery writes an escalation's interval as the flag takes it: 5m, 1h30m, 90s.
func fmtEvery(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

// escalation is a project's escalation, its defaults when the store has none.
func escalation(p *tidings.Project) (time.Duration, int) {
	if p.RepeatUrgentEvery == 0 {
		return tidings.RepeatUrgentEvery, tidings.RepeatUrgentTimes
	}
	return p.RepeatUrgentEvery, p.RepeatUrgentTimes
}

// parsed is the settings checked: auto-creation, days kept, insight change default.
func (ps projectSettings) parsed() (auto bool, days int, change string, err error) {
	auto = ps.autoCreate == "true" // the flag took only a boolean
	if ps.retention != "" {
		var err error
		if days, err = strconv.Atoi(strings.TrimSuffix(ps.retention, "d")); err != nil || tidings.CheckRetention(days) != nil {
			return false, 0, "", tidings.Errorf(tidings.EValidation, "--retention-days must be one of %v (0 keeps events forever), not %q", tidings.RetentionChoices, ps.retention)
		}
	}
	if _, _, err := ps.repeatUrgent(tidings.RepeatUrgentEvery, tidings.RepeatUrgentTimes); err != nil {
		return false, 0, "", err
	}
	if ps.notifySet {
		if _, err := parseNotify(ps.notify, false); err != nil {
			return false, 0, "", err
		}
	}
	if ps.escalateSet {
		if _, err := ps.escalate(); err != nil {
			return false, 0, "", err
		}
	}
	switch ps.changeDefault {
	case "", "none":
	case tidings.ChangeUpdate:
		change = tidings.ChangeUpdate
	default:
		return false, 0, "", tidings.Errorf(tidings.EValidation, "--insight-change-default must be update or none, not %q", ps.changeDefault)
	}
	return auto, days, change, nil
}

// apply sets the settings that were given.
func (ps projectSettings) apply(ctx context.Context, s tidings.Store, account int64, project string) error {
	auto, days, change, err := ps.parsed()
	if err != nil {
		return err
	}
	if ps.notifySet { // first: the store refuses a non-member, and nothing else is saved then
		r, _ := parseNotify(ps.notify, false) // parsed checked it
		if err := s.SetRecipients(ctx, account, project, "", r); err != nil {
			return flagError(err, "notify")
		}
	}
	if ps.autoCreate != "" {
		if err := s.SetAutoCreateChannels(ctx, account, project, auto); err != nil {
			return err
		}
	}
	if ps.retention != "" {
		if err := s.SetRetention(ctx, account, project, days); err != nil {
			return err
		}
	}
	if ps.changeDefault != "" {
		if err := s.SetInsightChangeDefault(ctx, account, project, change); err != nil {
			return err
		}
	}
	if ps.ignoreGPC != "" {
		if err := s.SetIgnoreGPC(ctx, account, project, ps.ignoreGPC == "true"); err != nil { // the flag took only a boolean
			return err
		}
	}
	if ps.repeatEvery != "" || ps.repeatTimes != "" {
		p, err := s.FindProject(ctx, account, project)
		if err != nil {
			return err
		}
		every, times, err := ps.repeatUrgent(escalation(p)) // the one not given stays
		if err != nil {
			return err
		}
		if err := s.SetRepeatUrgent(ctx, account, project, every, times); err != nil {
			return err
		}
	}
	if ps.escalateSet {
		d, _ := ps.escalate() // parsed checked it
		if err := s.SetEscalation(ctx, account, project, d); err != nil {
			return flagError(err, "escalate_after")
		}
	}
	return nil
}

func (ps projectSettings) any() bool { return ps != projectSettings{} }

func projectCreate(ctx context.Context, c *cli, args []string) error {
	return withAccount(ctx, c, func(s tidings.Store, a *tidings.Account) error {
		if _, _, _, err := c.settings.parsed(); err != nil {
			return err // a wrong setting is said before the project exists
		}
		if c.settings.notifySet {
			r, _ := parseNotify(c.settings.notify, false)
			if err := checkMembers(ctx, s, a.ID, r); err != nil {
				return err // so is a recipient who is not a member
			}
		}
		p, err := s.CreateProject(ctx, a.ID, args[0])
		if err != nil {
			return err
		}
		if err := c.settings.apply(ctx, s, a.ID, p.Name); err != nil {
			return err
		}
		fmt.Fprintf(c.stdout, "created project %s in account %s\n", p.Name, a.Name)
		return nil
	})
}

// projectUpdate changes the settings given and prints the project's settings.
func projectUpdate(ctx context.Context, c *cli, args []string) error {
	return withAccount(ctx, c, func(s tidings.Store, a *tidings.Account) error {
		if !c.settings.any() {
			return tidings.Errorf(tidings.EValidation, "nothing to change: give --auto-create-channels=BOOL, --retention-days N, --insight-change-default update|none, --ignore-gpc=BOOL, --repeat-urgent-every DURATION, --repeat-urgent-times N, --escalate-after DURATION or --notify everyone|nobody|EMAILS")
		}
		if err := c.settings.apply(ctx, s, a.ID, args[0]); err != nil {
			return err
		}
		p, err := s.FindProject(ctx, a.ID, args[0])
		if err != nil {
			return err
		}
		r, _, err := s.RecipientsOf(ctx, a.ID, p.Name, "")
		if err != nil {
			return err
		}
		fmt.Fprintf(c.stdout, "updated project %s: %s\n", p.Name, settingsLine(p, r))
		return nil
	})
}

// settingsLine is a project's settings as project list and update print them.
func settingsLine(p *tidings.Project, notify tidings.Recipients) string {
	keep := "forever"
	if p.RetentionDays > 0 {
		keep = fmt.Sprintf("%dd", p.RetentionDays)
	}
	change := "none"
	if p.InsightChangeDefault != "" {
		change = p.InsightChangeDefault
	}
	every, times := escalation(p)
	return fmt.Sprintf("auto-create-channels=%t\tkeep=%s\tinsight-change-default=%s\tignore-gpc=%t\tescalate-after=%s\trepeat-urgent-every=%s\trepeat-urgent-times=%d\tnotify=%s",
		p.AutoCreateChannels, keep, change, p.IgnoreGPC, fmtEscalate(p.EscalateAfter), fmtEvery(every), times, notify)
}

func projectList(ctx context.Context, c *cli, _ []string) error {
	return withReadAccount(ctx, c, func(s tidings.Store, a *tidings.Account) error {
		ps, err := s.ListProjects(ctx, a.ID)
		if err != nil {
			return err
		}
		w := tabwriter.NewWriter(c.stdout, 0, 4, 2, ' ', 0)
		if isTerminal(c.stdout) {
			fmt.Fprintln(w, "PROJECT\tEVENTS\tCHANNELS\tAUTO-CREATE\tKEEP\tINSIGHT-CHANGE\tIGNORE-GPC\tESCALATE-AFTER\tREPEAT-EVERY\tREPEAT-TIMES\tNOTIFY")
		}
		for _, p := range ps {
			n, err := s.CountEvents(ctx, a.ID, p.Name, "")
			if err != nil {
				return err
			}
			chs, err := s.ListChannels(ctx, a.ID, p.Name)
			if err != nil {
				return err
			}
			r, _, err := s.RecipientsOf(ctx, a.ID, p.Name, "")
			if err != nil {
				return err
			}
			fmt.Fprintf(w, "%s\tevents=%d\tchannels=%d\t%s\n", p.Name, n, len(chs), settingsLine(p, r))
		}
		return w.Flush()
	})
}

func projectDelete(ctx context.Context, c *cli, args []string) error {
	// Without --yes it only says what would go: it reads.
	with := withAccount
	if !c.yes {
		with = withReadAccount
	}
	return with(ctx, c, func(s tidings.Store, a *tidings.Account) error {
		n, err := s.CountEvents(ctx, a.ID, args[0], "")
		if err != nil {
			return err
		}
		chs, err := s.ListChannels(ctx, a.ID, args[0])
		if err != nil {
			return err
		}
		what := fmt.Sprintf("project %s with %s and %s", args[0], plural(len(chs), "channel"), plural(n, "event"))
		if !c.yes {
			return fmt.Errorf("this deletes %s, and its insights: run it again with --yes to do so", what)
		}
		if err := s.DeleteProject(ctx, a.ID, args[0]); err != nil {
			return err
		}
		fmt.Fprintf(c.stdout, "deleted %s\n", what)
		return nil
	})
}

func channelDelete(ctx context.Context, c *cli, args []string) error {
	// Without --yes it only says what would go: it reads.
	with := withAccount
	if !c.yes {
		with = withReadAccount
	}
	return with(ctx, c, func(s tidings.Store, a *tidings.Account) error {
		n, err := s.CountEvents(ctx, a.ID, args[0], args[1])
		if err != nil {
			return err
		}
		what := fmt.Sprintf("channel %s of project %s with %s", args[1], args[0], plural(n, "event"))
		if !c.yes {
			return fmt.Errorf("this deletes %s: run it again with --yes to do so", what)
		}
		if err := s.DeleteChannel(ctx, a.ID, args[0], args[1]); err != nil {
			return err
		}
		fmt.Fprintf(c.stdout, "deleted %s\n", what)
		return nil
	})
}

// plural is "1 event", "2 events".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

func channelCreate(ctx context.Context, c *cli, args []string) error {
	return withAccount(ctx, c, func(s tidings.Store, a *tidings.Account) error {
		ch, err := s.CreateChannel(ctx, a.ID, args[0], args[1])
		if err == nil {
			fmt.Fprintf(c.stdout, "created channel %s in project %s\n", ch.Name, ch.Project)
		}
		return err
	})
}

func channelList(ctx context.Context, c *cli, args []string) error {
	return withReadAccount(ctx, c, func(s tidings.Store, a *tidings.Account) error {
		cs, err := s.ListChannels(ctx, a.ID, args[0])
		if err != nil {
			return err
		}
		w := tabwriter.NewWriter(c.stdout, 0, 4, 2, ' ', 0)
		if isTerminal(c.stdout) {
			fmt.Fprintln(w, "CHANNEL\tEVENTS\tNOTIFY")
		}
		for _, ch := range cs {
			n, err := s.CountEvents(ctx, a.ID, args[0], ch.Name)
			if err != nil {
				return err
			}
			r, own, err := s.RecipientsOf(ctx, a.ID, args[0], ch.Name)
			if err != nil {
				return err
			}
			fmt.Fprintf(w, "%s\tevents=%d\tnotify=%s\n", ch.Name, n, channelNotify(r, own))
		}
		return w.Flush()
	})
}

// channelNotify is a channel's setting as channel list and update print it: its own
// (everyone, nobody, the emails), or project(…) with the project's when it follows it.
func channelNotify(r tidings.Recipients, own bool) string {
	if own {
		return r.String()
	}
	return notifyProject + "(" + r.String() + ")"
}

// channelUpdate changes a channel's settings (who is notified) and prints them.
func channelUpdate(ctx context.Context, c *cli, args []string) error {
	if !c.settings.notifySet {
		return tidings.Errorf(tidings.EValidation, "nothing to change: give --notify everyone|nobody|EMAILS|project")
	}
	r, err := parseNotify(c.settings.notify, true)
	if err != nil {
		return err
	}
	return withAccount(ctx, c, func(s tidings.Store, a *tidings.Account) error {
		if err := s.SetRecipients(ctx, a.ID, args[0], args[1], r); err != nil {
			return flagError(err, "notify")
		}
		got, own, err := s.RecipientsOf(ctx, a.ID, args[0], args[1])
		if err != nil {
			return err
		}
		fmt.Fprintf(c.stdout, "updated channel %s of project %s: notify=%s\n", args[1], args[0], channelNotify(got, own))
		return nil
	})
}

func channelFlags(fs *flag.FlagSet, c *cli) {
	accountFlag(fs, c)
	fs.Var(notifyFlag{&c.settings}, "notify",
		"`who` is notified of the channel's events: everyone, nobody, members' emails separated by commas, or project (follow the project's setting again, as a new channel does)")
}
