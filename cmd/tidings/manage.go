package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/netip"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/tidings-dev/tidings"
	"github.com/tidings-dev/tidings/internal/netguard"
	"github.com/tidings-dev/tidings/internal/password"
	"github.com/tidings-dev/tidings/sqlite"
)

// errMessage is what a failing command prints: the domain message, or the error text
// for errors of the machine (an unreadable data folder) that the operator must see.
func errMessage(err error) string {
	var e *tidings.Error
	if errors.As(err, &e) {
		return e.Message
	}
	return err.Error()
}

// withStore opens the store for one management command. It works beside running
// servers: SQLite serialises the writers, each waits for the other's lock; PostgreSQL
// takes them all (a command uses two connections).
func withStore(ctx context.Context, c *cli, fn func(s tidings.Store) error) error {
	s, err := openStore(ctx, c.cfg, nil, 2)
	if err != nil {
		return err
	}
	return errors.Join(fn(s), s.Close())
}

// withAccount runs fn on the store with the account that --account names (or the only one).
func withAccount(ctx context.Context, c *cli, fn func(s tidings.Store, a *tidings.Account) error) error {
	return withStore(ctx, c, func(s tidings.Store) error {
		a, err := findAccount(ctx, s, c.account)
		if err != nil {
			return err
		}
		return fn(s, a)
	})
}

// findAccount resolves --account, or the only account when it was left out.
func findAccount(ctx context.Context, s tidings.Store, name string) (*tidings.Account, error) {
	if name != "" {
		return s.FindAccount(ctx, name)
	}
	all, err := s.ListAccounts(ctx)
	if err != nil {
		return nil, err
	}
	switch len(all) {
	case 1:
		return all[0], nil
	case 0:
		return nil, errors.New("there is no account yet: create one with `tidings account create NAME`")
	}
	return nil, fmt.Errorf("%d accounts exist: say which with --account NAME", len(all))
}

func accountCreate(ctx context.Context, c *cli, args []string) error {
	return withStore(ctx, c, func(s tidings.Store) error {
		a, err := s.CreateAccount(ctx, args[0])
		if err == nil {
			fmt.Fprintf(c.stdout, "created account %s\n", a.Name)
		}
		return err
	})
}

func accountList(ctx context.Context, c *cli, _ []string) error {
	return withStore(ctx, c, func(s tidings.Store) error {
		all, err := s.ListAccounts(ctx)
		for _, a := range all {
			fmt.Fprintf(c.stdout, "%s\t%s\n", a.Name, a.CreatedAt.Format(time.RFC3339))
		}
		return err
	})
}

func userCreate(ctx context.Context, c *cli, args []string) error {
	email := strings.TrimSpace(args[0])
	if !strings.Contains(email, "@") || strings.ContainsAny(email, " \t\r\n") {
		return fmt.Errorf("%q is not an email address", email)
	}
	if c.role != tidings.UserOwner && c.role != tidings.UserMember {
		return fmt.Errorf("--role must be owner or member")
	}
	hash, err := readPassword(c, "user create")
	if err != nil {
		return err
	}
	return withAccount(ctx, c, func(s tidings.Store, a *tidings.Account) error {
		u := &tidings.User{AccountID: a.ID, Email: email, PasswordHash: hash, Role: c.role}
		if err := s.CreateUser(ctx, u); err != nil {
			return err
		}
		fmt.Fprintf(c.stdout, "created %s %s in account %s\n", u.Role, u.Email, a.Name)
		return nil
	})
}

// readPassword reads a password from the first line of standard input and hashes it.
func readPassword(c *cli, cmd string) (string, error) {
	line, err := bufio.NewReader(c.stdin).ReadString('\n')
	if err != nil && line == "" {
		return "", fmt.Errorf("give the password on standard input, for example: echo 'secret…' | tidings %s …", cmd)
	}
	return password.Hash(strings.TrimRight(line, "\r\n"))
}

// isTerminal reports whether w is a terminal (a person reads it, not a script).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

func userList(ctx context.Context, c *cli, _ []string) error {
	return withAccount(ctx, c, func(s tidings.Store, a *tidings.Account) error {
		us, err := s.ListUsers(ctx, a.ID)
		if err != nil {
			return err
		}
		w := tabwriter.NewWriter(c.stdout, 0, 4, 2, ' ', 0)
		if isTerminal(c.stdout) {
			fmt.Fprintln(w, "EMAIL\tROLE\tCREATED")
		}
		for _, u := range us {
			fmt.Fprintf(w, "%s\t%s\t%s\n", u.Email, u.Role, u.CreatedAt.Format(time.RFC3339))
		}
		return w.Flush()
	})
}

func userResetPassword(ctx context.Context, c *cli, args []string) error {
	hash, err := readPassword(c, "user reset-password")
	if err != nil {
		return err
	}
	return withStore(ctx, c, func(s tidings.Store) error {
		u, err := s.FindUserByEmail(ctx, strings.TrimSpace(args[0]))
		if tidings.ErrorCode(err) == tidings.ENotFound {
			return fmt.Errorf("no user with the email %s (tidings user list shows them)", args[0])
		}
		if err != nil {
			return err
		}
		if err := s.SetPassword(ctx, u.ID, hash, nil); err != nil {
			return err
		}
		fmt.Fprintf(c.stdout, "set the password of %s and signed them out everywhere\n", u.Email)
		return nil
	})
}

func userDelete(ctx context.Context, c *cli, args []string) error {
	return withStore(ctx, c, func(s tidings.Store) error {
		u, err := s.FindUserByEmail(ctx, strings.TrimSpace(args[0]))
		if tidings.ErrorCode(err) == tidings.ENotFound {
			return fmt.Errorf("no user with the email %s (tidings user list shows them)", args[0])
		}
		if err != nil {
			return err
		}
		if u.Role == tidings.UserOwner {
			all, err := s.ListUsers(ctx, u.AccountID)
			if err != nil {
				return err
			}
			owners := 0
			for _, o := range all {
				if o.Role == tidings.UserOwner {
					owners++
				}
			}
			if owners == 1 {
				return fmt.Errorf("%s is the account's only owner: create another owner first (tidings user create EMAIL --role owner)", u.Email)
			}
		}
		if err := s.DeleteUser(ctx, u.AccountID, u.ID); err != nil {
			return err
		}
		fmt.Fprintf(c.stdout, "deleted user %s and signed them out everywhere\n", u.Email)
		return nil
	})
}

// projectSettings are the flags of project create and update; "" leaves a setting as is.
type projectSettings struct{ autoCreate, retention, changeDefault string }

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
	return nil
}

func (ps projectSettings) any() bool { return ps != projectSettings{} }

func projectCreate(ctx context.Context, c *cli, args []string) error {
	return withAccount(ctx, c, func(s tidings.Store, a *tidings.Account) error {
		if _, _, _, err := c.settings.parsed(); err != nil {
			return err // a wrong setting is said before the project exists
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
			return tidings.Errorf(tidings.EValidation, "nothing to change: give --auto-create-channels=BOOL, --retention-days N or --insight-change-default update|none")
		}
		if err := c.settings.apply(ctx, s, a.ID, args[0]); err != nil {
			return err
		}
		p, err := s.FindProject(ctx, a.ID, args[0])
		if err != nil {
			return err
		}
		fmt.Fprintf(c.stdout, "updated project %s: %s\n", p.Name, settingsLine(p))
		return nil
	})
}

// settingsLine is a project's settings as project list and update print them.
func settingsLine(p *tidings.Project) string {
	keep := "forever"
	if p.RetentionDays > 0 {
		keep = fmt.Sprintf("%dd", p.RetentionDays)
	}
	change := "none"
	if p.InsightChangeDefault != "" {
		change = p.InsightChangeDefault
	}
	return fmt.Sprintf("auto-create-channels=%t\tkeep=%s\tinsight-change-default=%s", p.AutoCreateChannels, keep, change)
}

func projectList(ctx context.Context, c *cli, _ []string) error {
	return withAccount(ctx, c, func(s tidings.Store, a *tidings.Account) error {
		ps, err := s.ListProjects(ctx, a.ID)
		if err != nil {
			return err
		}
		w := tabwriter.NewWriter(c.stdout, 0, 4, 2, ' ', 0)
		if isTerminal(c.stdout) {
			fmt.Fprintln(w, "PROJECT\tEVENTS\tCHANNELS\tAUTO-CREATE\tKEEP")
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
			fmt.Fprintf(w, "%s\tevents=%d\tchannels=%d\t%s\n", p.Name, n, len(chs), settingsLine(p))
		}
		return w.Flush()
	})
}

func projectDelete(ctx context.Context, c *cli, args []string) error {
	return withAccount(ctx, c, func(s tidings.Store, a *tidings.Account) error {
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
	return withAccount(ctx, c, func(s tidings.Store, a *tidings.Account) error {
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
	return withAccount(ctx, c, func(s tidings.Store, a *tidings.Account) error {
		cs, err := s.ListChannels(ctx, a.ID, args[0])
		if err != nil {
			return err
		}
		w := tabwriter.NewWriter(c.stdout, 0, 4, 2, ' ', 0)
		if isTerminal(c.stdout) {
			fmt.Fprintln(w, "CHANNEL\tEVENTS")
		}
		for _, ch := range cs {
			n, err := s.CountEvents(ctx, a.ID, args[0], ch.Name)
			if err != nil {
				return err
			}
			fmt.Fprintf(w, "%s\tevents=%d\n", ch.Name, n)
		}
		return w.Flush()
	})
}

func tokenCreate(ctx context.Context, c *cli, _ []string) error {
	if c.access == "" {
		return errors.New("--access is required: public (may only publish) or full (may also read)")
	}
	var roles []string
	for _, r := range strings.Split(c.roles, ",") {
		if r = strings.TrimSpace(r); r != "" {
			roles = append(roles, r)
		}
	}
	return withAccount(ctx, c, func(s tidings.Store, a *tidings.Account) error {
		id, secret, hash := tidings.NewTokenSecret()
		t := &tidings.Token{ID: id, AccountID: a.ID, Name: c.name, Access: c.access, Project: c.project,
			Channel: c.channel, Roles: roles, Hash: hash}
		if err := s.CreateToken(ctx, t); err != nil {
			return err
		}
		fmt.Fprintln(c.stdout, secret)
		return nil
	})
}

func tokenList(ctx context.Context, c *cli, _ []string) error {
	return withAccount(ctx, c, func(s tidings.Store, a *tidings.Account) error {
		ts, err := s.ListTokens(ctx, a.ID)
		if err != nil {
			return err
		}
		w := tabwriter.NewWriter(c.stdout, 0, 4, 2, ' ', 0)
		if isTerminal(c.stdout) { // scripts read one line per token, id first (the contract)
			fmt.Fprintln(w, "ID\tNAME\tACCESS\tLIMITS\tCREATED\tLAST USED\tSTATE\tROLES")
		}
		for _, t := range ts {
			fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", t.ID, orDash(t.Name), t.Access, limits(t),
				t.CreatedAt.Format(time.RFC3339), when(t.LastUsedAt, "never-used"), when(t.RevokedAt, "active"),
				strings.Join(t.Roles, ","))
		}
		return w.Flush()
	})
}

func limits(t *tidings.Token) string {
	switch {
	case t.Channel != "":
		return "project=" + t.Project + ",channel=" + t.Channel
	case t.Project != "":
		return "project=" + t.Project
	}
	return "all-projects"
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func when(t time.Time, zero string) string {
	if t.IsZero() {
		return zero
	}
	return t.Format(time.RFC3339)
}

func tokenRevoke(ctx context.Context, c *cli, args []string) error {
	return withAccount(ctx, c, func(s tidings.Store, a *tidings.Account) error {
		if err := s.RevokeToken(ctx, a.ID, args[0], time.Now()); err != nil {
			return err
		}
		fmt.Fprintf(c.stdout, "revoked token %s\n", args[0])
		return nil
	})
}

func webhookCreate(ctx context.Context, c *cli, _ []string) error {
	nw := tidings.NewWebhook{Project: c.project, Channel: c.channel, URL: c.url, Format: c.format, Events: c.events, Name: c.name}
	var p tidings.Problems
	nw.Check(&p)
	if err := p.Err(); err != nil {
		return err
	}
	return withAccount(ctx, c, func(s tidings.Store, a *tidings.Account) error {
		w := &tidings.Webhook{ID: tidings.NewID("wh_"), Project: nw.Project, Channel: nw.Channel, URL: nw.URL,
			Format: nw.Format, Events: nw.Events, Name: nw.Name}
		if w.Format == tidings.FormatStandard {
			w.Secret = tidings.NewWebhookSecret()
		}
		if err := s.CreateWebhook(ctx, a.ID, w); err != nil {
			return err
		}
		fmt.Fprintln(c.stdout, w.ID)
		if w.Secret != "" {
			fmt.Fprintln(c.stdout, w.Secret)
		}
		if privateTarget(ctx, w.URL) {
			fmt.Fprintf(c.stderr, "warning: %s is a loopback or private address: the server refuses to deliver to it unless started with --allow-private-targets\n", w.URL)
		}
		return nil
	})
}

// privateTarget reports whether a URL's host is, or resolves only to, loopback,
// private or link-local addresses, which the server refuses by default.
func privateTarget(ctx context.Context, raw string) bool {
	u, err := url.Parse(raw)
	if err != nil {
		return false
	}
	host := u.Hostname()
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return true
	}
	var addrs []netip.Addr
	if a, err := netip.ParseAddr(host); err == nil {
		addrs = []netip.Addr{a}
	} else {
		ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		defer cancel()
		if addrs, err = net.DefaultResolver.LookupNetIP(ctx, "ip", host); err != nil {
			return false // unknown here; the server says so when it tries
		}
	}
	for _, a := range addrs {
		if netguard.Public(a.Unmap()) {
			return false
		}
	}
	return len(addrs) > 0
}

func webhookList(ctx context.Context, c *cli, _ []string) error {
	return withAccount(ctx, c, func(s tidings.Store, a *tidings.Account) error {
		ws, err := s.ListWebhooks(ctx, a.ID)
		if err != nil {
			return err
		}
		w := tabwriter.NewWriter(c.stdout, 0, 4, 2, ' ', 0)
		if isTerminal(c.stdout) {
			fmt.Fprintln(w, "ID\tNAME\tPROJECT\tCHANNEL\tFORMAT\tEVENTS\tURL")
		}
		for _, h := range ws {
			fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", h.ID, orDash(h.Name), h.Project, orDash(h.Channel), h.Format, h.Events, h.URL)
		}
		return w.Flush()
	})
}

func webhookDelete(ctx context.Context, c *cli, args []string) error {
	return withAccount(ctx, c, func(s tidings.Store, a *tidings.Account) error {
		if err := s.DeleteWebhook(ctx, a.ID, args[0]); err != nil {
			return err
		}
		fmt.Fprintf(c.stdout, "deleted webhook %s\n", args[0])
		return nil
	})
}

func backup(ctx context.Context, c *cli, _ []string) error {
	if c.to == "" {
		return errors.New("--to FILE is required: where to write the copy")
	}
	if c.cfg.DatabaseURL != "" {
		return errors.New("backup copies the embedded store; for PostgreSQL use pg_dump")
	}
	return withStore(ctx, c, func(s tidings.Store) error {
		db, ok := s.(tidings.BackerUp)
		if !ok {
			return errors.New("this store cannot be backed up by tidings: use its own tools")
		}
		if err := db.Backup(ctx, c.to); err != nil {
			return err
		}
		fmt.Fprintf(c.stdout, "backed up %s to %s\n", c.cfg.Data, c.to)
		return nil
	})
}

func runServe(ctx context.Context, c *cli, _ []string) error {
	m := &Main{Config: c.cfg, Logger: newLogger(c.stderr, c.cfg.LogFormat)}
	if err := m.Run(ctx); err != nil {
		return err
	}
	m.Logger.Info("tidings is serving: open "+m.URL(), "url", m.URL(), "data", storeName(c.cfg))
	if n, err := m.store.CountUsers(ctx); err == nil && n == 0 {
		m.Logger.Info("this store has no account yet: open " + m.URL() + " to create the first one (you become its owner)")
	}
	select {
	case <-ctx.Done():
		m.Logger.Info("shutting down")
	case err := <-m.served:
		m.Close()
		return err
	}
	return m.Close()
}

// storeName is where the store lives, for the log: PostgreSQL, or the data folder's
// absolute path (the default ./tidings-data depends on where the server was started).
func storeName(c Config) string {
	if c.DatabaseURL != "" {
		return "postgres"
	}
	if abs, err := filepath.Abs(c.Data); err == nil {
		return abs
	}
	return c.Data
}

// migrateStore copies the data folder --from into the PostgreSQL database --to, from
// one snapshot, and checks every table's count. Stop the server first: what it accepts
// after the snapshot would stay behind.
func migrateStore(ctx context.Context, c *cli, _ []string) error {
	if c.from == "" || c.to == "" {
		return errors.New("--from DIR and --to postgres://… are both required")
	}
	file := filepath.Join(c.from, sqlite.FileName)
	if _, err := os.Stat(file); err != nil {
		return fmt.Errorf("%s holds no Tidings store (no %s)", c.from, sqlite.FileName)
	}
	// Opening it brings the folder's schema up to this version's.
	src, err := openStore(ctx, Config{Data: c.from}, nil, 2) // PostgreSQL indexes the copy for search itself
	if err != nil {
		return err
	}
	defer src.Close()
	cfg := c.cfg
	cfg.DatabaseURL = c.to
	dst, err := openStore(ctx, cfg, nil, 2)
	if err != nil {
		return err
	}
	defer dst.Close()
	dumper, ok1 := src.(tidings.Dumper)
	loader, ok2 := dst.(tidings.Loader)
	if !ok1 || !ok2 {
		return errors.New("these stores cannot be copied one into the other")
	}
	snapshot, err := dumper.Dump(ctx)
	if err != nil {
		return err
	}
	defer snapshot.Close()
	counts, err := loader.Load(ctx, snapshot)
	if err != nil {
		return err
	}
	w := tabwriter.NewWriter(c.stdout, 0, 4, 2, ' ', 0)
	for _, tc := range counts {
		fmt.Fprintf(w, "%s\t%d\n", tc.Table, tc.Rows)
	}
	w.Flush()
	fmt.Fprintf(c.stdout, "copied and verified %d tables; serve with --database now\n", len(counts))
	return nil
}

func eventDelete(ctx context.Context, c *cli, args []string) error {
	return withAccount(ctx, c, func(s tidings.Store, a *tidings.Account) error {
		ev, err := s.FindEventByID(ctx, a.ID, args[0])
		if err != nil {
			return err
		}
		if err := s.DeleteEvent(ctx, a.ID, ev.Project, ev.ID); err != nil {
			return err
		}
		fmt.Fprintf(c.stdout, "deleted event %s (%q in %s #%s)\n", ev.ID, ev.Event, ev.Project, ev.Channel)
		return nil
	})
}

func insightDelete(ctx context.Context, c *cli, args []string) error {
	return withAccount(ctx, c, func(s tidings.Store, a *tidings.Account) error {
		if err := s.DeleteInsight(ctx, a.ID, args[0], args[1]); err != nil {
			return err
		}
		fmt.Fprintf(c.stdout, "deleted insight %q of project %s with its history\n", args[1], args[0])
		return nil
	})
}
