package main

import (
	"crypto/x509"
	"errors"
	"flag"
	"fmt"
	"net/netip"
	"net/url"
	"os"
	"strconv"
	"strings"

	"github.com/tidings-dev/tidings/api"
	"github.com/tidings-dev/tidings/internal/password"
	"github.com/tidings-dev/tidings/web"
)

// Config is everything `tidings serve` can be told. Defaults live here; flags and
// TIDINGS_* variables override them (flags win). Secrets may come from *_FILE.
type Config struct {
	// Passwords are argon2id's costs (zero: password.Default). Not a flag: tests pass
	// cheap ones to the servers they start; production keeps the default.
	Passwords      password.Params
	Addr           string
	Data           string
	DatabaseURL    string
	DatabaseConns  int // PostgreSQL connections of a server (pool size)
	TLSCert        string
	TLSKey         string
	LogFormat      string
	MetricsAddr    string
	TrustedProxies []netip.Prefix
	Limits         api.Limits
	OpenSignup     bool
	// Live streams of the dashboard allowed open per browser session and per account.
	MaxStreamsPerSession int
	MaxStreamsPerAccount int
	SignupsPerHour       float64 // per client address
	// MaxConnections caps the public address's open connections (0: from the file
	// limit, internal/connlimit).
	MaxConnections int
	// PublicURL is where people reach the dashboard: links in webhook messages.
	PublicURL string
	// AllowPrivateTargets lets webhooks and push endpoints be loopback and private addresses.
	AllowPrivateTargets bool
	// VAPIDKeyFile holds the push key pair's private key (base64url); "" keeps it in the store.
	VAPIDKeyFile string
	// VAPIDSubject is the contact in push requests: mailto:… or https://….
	VAPIDSubject string
	// SMTPURL is --smtp-url: mail goes through it ("": no mail). MailFrom is
	// --mail-from; SMTPInsecure is --smtp-insecure (cmd_mail.go).
	SMTPURL      string
	MailFrom     string
	SMTPInsecure bool
	// SMTPRootCAs verifies the mail server's certificate (nil: the system's roots).
	// Not a flag: tests trust their own server with it.
	SMTPRootCAs *x509.CertPool
	// envErrs are TIDINGS_* values and bool flags that could not be read; the commands
	// that take them refuse to start, in one line.
	envErrs []error
}

// DefaultConfig is the configuration of a fresh install.
func DefaultConfig() Config {
	return Config{Addr: "127.0.0.1:8080", Data: "./tidings-data", LogFormat: "text", Limits: api.DefaultLimits, DatabaseConns: 16,
		MaxStreamsPerSession: web.DefaultMaxStreamsPerSession, MaxStreamsPerAccount: web.DefaultMaxStreamsPerAccount,
		SignupsPerHour: web.DefaultSignupsPerHour}
}

// env reads TIDINGS_<name>, or the content of the file named by TIDINGS_<name>_FILE
// (checkEnvFiles has made sure that every such file can be read).
func env(name string) (string, bool) {
	if v, ok := os.LookupEnv("TIDINGS_" + name); ok {
		return v, true
	}
	if f, ok := os.LookupEnv("TIDINGS_" + name + "_FILE"); ok {
		b, err := os.ReadFile(f)
		if err == nil {
			return strings.TrimSpace(string(b)), true
		}
	}
	return "", false
}

// checkEnvFiles fails when a TIDINGS_*_FILE variable names a file that cannot be
// read: a secret that silently went missing would otherwise turn into a default (a
// missing database URL into the embedded store in ./tidings-data).
func checkEnvFiles() error {
	var errs []error
	for _, kv := range os.Environ() {
		k, f, _ := strings.Cut(kv, "=")
		if !strings.HasPrefix(k, "TIDINGS_") || !strings.HasSuffix(k, "_FILE") || k == "TIDINGS_VAPID_PRIVATE_KEY_FILE" {
			continue // the VAPID key file is a path the server reads itself, and says so
		}
		if _, err := os.ReadFile(f); err != nil {
			errs = append(errs, fmt.Errorf("%s names a file that cannot be read: %w", k, err))
		}
	}
	return errors.Join(errs...)
}

func envString(name, def string) string {
	if v, ok := env(name); ok {
		return v
	}
	return def
}

// storeFlags are the flags every command shares: where the data lives.
func storeFlags(fs *flag.FlagSet, c *Config) {
	fs.StringVar(&c.Data, "data", envString("DATA", c.Data), "data folder of the embedded SQLite store (TIDINGS_DATA)")
	fs.StringVar(&c.DatabaseURL, "database", envString("DATABASE_URL", c.DatabaseURL),
		"a PostgreSQL store instead of the data folder: postgres://USER:PASSWORD@HOST:5432/DB?sslmode=disable (or require), PostgreSQL 13 or later; the database must exist, its tables are created (TIDINGS_DATABASE_URL, or TIDINGS_DATABASE_URL_FILE naming a file that holds it)")
}

// listenFlags say where serve listens; `tidings health` reads them too, to ask it there.
func listenFlags(fs *flag.FlagSet, c *Config) {
	fs.StringVar(&c.Addr, "addr", envString("ADDR", c.Addr), "address to listen on (TIDINGS_ADDR)")
	fs.StringVar(&c.TLSCert, "tls-cert", envString("TLS_CERT", ""), "certificate file: serve HTTPS (TIDINGS_TLS_CERT)")
}

// serveFlags are the flags of `tidings serve`.
func serveFlags(fs *flag.FlagSet, c *Config) {
	storeFlags(fs, c)
	c.intFlag(fs, &c.DatabaseConns, "database-conns", "DATABASE_CONNS",
		"PostgreSQL connections of this server: one writes, the rest read (with --database)")
	listenFlags(fs, c)
	fs.StringVar(&c.TLSKey, "tls-key", envString("TLS_KEY", ""), "key file of --tls-cert (TIDINGS_TLS_KEY)")
	fs.StringVar(&c.LogFormat, "log-format", envString("LOG_FORMAT", c.LogFormat), "text or json (TIDINGS_LOG_FORMAT)")
	fs.StringVar(&c.MetricsAddr, "metrics-addr", envString("METRICS_ADDR", ""),
		"address of the Prometheus /metrics listener; empty: off (TIDINGS_METRICS_ADDR)")
	c.boolFlag(fs, &c.OpenSignup, "open-signup", "OPEN_SIGNUP", "anyone may create an account, not only the first visitor")
	fs.Func("trusted-proxies", "comma-separated addresses or CIDRs of proxies whose X-Forwarded-For is believed (TIDINGS_TRUSTED_PROXIES)",
		func(s string) (err error) { c.TrustedProxies, err = parsePrefixes(s); return err })
	if v, ok := env("TRUSTED_PROXIES"); ok {
		var err error
		if c.TrustedProxies, err = parsePrefixes(v); err != nil {
			c.envErrs = append(c.envErrs, fmt.Errorf("TIDINGS_TRUSTED_PROXIES: %w", err))
		}
	}
	c.floatFlag(fs, &c.Limits.TokenRate, "token-rate", "TOKEN_RATE", "requests per second per token; 0: no limit")
	c.intFlag(fs, &c.Limits.TokenBurst, "token-burst", "TOKEN_BURST", "burst per token")
	c.floatFlag(fs, &c.Limits.PublicIPRate, "public-ip-rate", "PUBLIC_IP_RATE", "requests per second per public token and client IP; 0: no limit")
	c.intFlag(fs, &c.Limits.PublicIPBurst, "public-ip-burst", "PUBLIC_IP_BURST", "burst per public token and client IP")
	c.intFlag(fs, &c.MaxStreamsPerSession, "max-streams-per-session", "MAX_STREAMS_PER_SESSION",
		"live dashboard views open at once per browser session; more close the oldest")
	c.intFlag(fs, &c.MaxStreamsPerAccount, "max-streams-per-account", "MAX_STREAMS_PER_ACCOUNT",
		"live dashboard views open at once per account; more are refused")
	fs.StringVar(&c.PublicURL, "public-url", envString("PUBLIC_URL", ""),
		"the dashboard's address as people reach it, e.g. https://tidings.example.com: links in webhook messages (TIDINGS_PUBLIC_URL)")
	c.boolFlag(fs, &c.AllowPrivateTargets, "allow-private-targets", "ALLOW_PRIVATE_TARGETS",
		"let webhooks and push endpoints be loopback and private addresses: for tests and closed networks only")
	fs.StringVar(&c.VAPIDKeyFile, "vapid-private-key-file", envString("VAPID_PRIVATE_KEY_FILE", ""),
		"file with the Web Push (VAPID) private key, base64url; default: made on first start and kept in the store (TIDINGS_VAPID_PRIVATE_KEY_FILE)")
	fs.StringVar(&c.VAPIDSubject, "vapid-subject", envString("VAPID_SUBJECT", "mailto:admin@localhost"),
		"contact that push services see: mailto:you@example.com or https://… (TIDINGS_VAPID_SUBJECT)")
	c.intFlag(fs, &c.MaxConnections, "max-connections", "MAX_CONNECTIONS",
		"connections open at once on --addr; at the cap the longest idle one is closed for a new one; 0: the file limit less a reserve, at most 16384")
	c.floatFlag(fs, &c.SignupsPerHour, "signups-per-hour", "SIGNUPS_PER_HOUR", "sign-up attempts per client address and hour (with --open-signup)")
	mailFlags(fs, c)
}

// boolFlag is a switch that TIDINGS_<envName>=true (or 1) also turns on.
func (c *Config) boolFlag(fs *flag.FlagSet, p *bool, name, envName, usage string) {
	switch v, _ := env(envName); v {
	case "", "false", "0":
	case "true", "1":
		*p = true
	default:
		c.envErrs = append(c.envErrs, fmt.Errorf("TIDINGS_%s=%q: use true or false", envName, v))
	}
	fs.Var(switchFlag{p: p, name: name, errs: &c.envErrs}, name, usage+" (TIDINGS_"+envName+"=true)")
}

// switchFlag is a bool flag whose bad value (--smtp-insecure=maybe) is kept with the
// configuration's errors, which the command reports in one line before it starts,
// rather than failing the parse, which prints the whole usage after the error.
type switchFlag struct {
	p    *bool
	name string
	errs *[]error
}

func (f switchFlag) String() string {
	if f.p == nil {
		return "false"
	}
	return strconv.FormatBool(*f.p)
}

func (f switchFlag) Set(s string) error {
	b, err := strconv.ParseBool(s)
	if err != nil {
		*f.errs = append(*f.errs, fmt.Errorf("--%s must be true or false, not %q", f.name, s))
		return nil
	}
	*f.p = b
	return nil
}

func (f switchFlag) IsBoolFlag() bool { return true }

func (c *Config) floatFlag(fs *flag.FlagSet, p *float64, name, envName, usage string) {
	if v, ok := env(envName); ok {
		f, err := strconv.ParseFloat(v, 64)
		if err != nil {
			c.envErrs = append(c.envErrs, fmt.Errorf("TIDINGS_%s=%q is not a number", envName, v))
		}
		*p = f
	}
	fs.Float64Var(p, name, *p, usage+" (TIDINGS_"+envName+")")
}

func (c *Config) intFlag(fs *flag.FlagSet, p *int, name, envName, usage string) {
	if v, ok := env(envName); ok {
		n, err := strconv.Atoi(v)
		if err != nil {
			c.envErrs = append(c.envErrs, fmt.Errorf("TIDINGS_%s=%q is not a whole number", envName, v))
		}
		*p = n
	}
	fs.IntVar(p, name, *p, usage+" (TIDINGS_"+envName+")")
}

func parsePrefixes(s string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		if p, err := netip.ParsePrefix(part); err == nil {
			out = append(out, p.Masked())
			continue
		}
		a, err := netip.ParseAddr(part)
		if err != nil {
			return nil, fmt.Errorf("trusted proxy %q is neither an address nor a CIDR", part)
		}
		out = append(out, netip.PrefixFrom(a.Unmap(), a.Unmap().BitLen()))
	}
	return out, nil
}

func (c Config) validate() error {
	if len(c.envErrs) > 0 {
		return errors.Join(c.envErrs...)
	}
	if (c.TLSCert == "") != (c.TLSKey == "") {
		return fmt.Errorf("--tls-cert and --tls-key go together")
	}
	if c.LogFormat != "text" && c.LogFormat != "json" {
		return fmt.Errorf("--log-format must be text or json")
	}
	if c.PublicURL != "" {
		if u, err := url.Parse(c.PublicURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return fmt.Errorf("--public-url must be an http:// or https:// address, like https://tidings.example.com")
		}
	}
	if c.SMTPURL != "" {
		if err := c.mailConfig().Check(); err != nil {
			return err
		}
	}
	if c.DatabaseConns < 2 {
		return fmt.Errorf("--database-conns must be at least 2")
	}
	if c.MaxConnections < 0 {
		return fmt.Errorf("--max-connections must not be negative (0: from the file limit)")
	}
	if c.SignupsPerHour <= 0 {
		return fmt.Errorf("--signups-per-hour must be above 0")
	}
	if c.MaxStreamsPerSession < 1 || c.MaxStreamsPerAccount < 1 {
		return fmt.Errorf("--max-streams-per-session and --max-streams-per-account must be at least 1")
	}
	if c.Limits.TokenRate < 0 || c.Limits.PublicIPRate < 0 {
		return fmt.Errorf("rates must not be negative")
	}
	if c.Limits.TokenRate > 0 && c.Limits.TokenBurst < 1 || c.Limits.PublicIPRate > 0 && c.Limits.PublicIPBurst < 1 {
		return fmt.Errorf("a burst must be at least 1 when its rate is on")
	}
	return nil
}
