package main

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tidings-dev/tidings/internal/smtptest"
	"github.com/tidings-dev/tidings/internal/testbackend"
)

// mailTestCmd runs tidings mail test with args and returns its exit code and output.
func mailTestCmd(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errs bytes.Buffer
	code := run(context.Background(), append([]string{"mail", "test"}, args...), nil, &out, &errs)
	return code, out.String(), errs.String()
}

// publicAddr is an address of this machine that is not loopback: a mail server there
// stands for one across the network.
func publicAddr(t *testing.T) string {
	t.Helper()
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && n.IP.To4() != nil && !n.IP.IsLoopback() && !n.IP.IsLinkLocalUnicast() {
			return n.IP.String()
		}
	}
	t.Skip("this machine has no address but loopback: no server can stand for a public one")
	return ""
}

func TestMailTestCommand(t *testing.T) {
	testbackend.Once(t)
	srv := smtptest.Start(t, smtptest.Options{STARTTLS: true, User: "ada", Password: "p@ss word"})

	code, out, errs := mailTestCmd(t, "bob@example.com", "--smtp-url", srv.URL(), "--mail-from", "Tidings <tidings@example.com>")
	if code != 0 || out != "sent to bob@example.com via "+srv.Addr()+"\n" {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, out, errs)
	}
	m := srv.Wait(t, 1)[0]
	if m.From != "tidings@example.com" || len(m.To) != 1 || m.To[0] != "bob@example.com" || !m.TLS || m.User != "ada" {
		t.Fatalf("envelope %+v", m)
	}
	if !bytes.Contains(m.Data, []byte("\r\nSubject: Tidings test mail\r\n")) || !bytes.Contains(m.Data, []byte(srv.Addr())) {
		t.Fatalf("message:\n%s", m.Data)
	}

	srv.Refuse(1, 550, "5.1.1 <bob@example.com>: Recipient address rejected")
	code, out, errs = mailTestCmd(t, "bob@example.com", "--smtp-url", srv.URL(), "--mail-from", "tidings@example.com")
	want := "tidings mail test: the mail server refused it: 550 5.1.1 <bob@example.com>: Recipient address rejected\n"
	if code != 1 || out != "" || errs != want {
		t.Fatalf("refused: exit %d, stdout %q, stderr %q, want %q", code, out, errs, want)
	}
	srv.Refuse(1, 451, "4.7.1 Greylisted, try again later")
	if code, _, errs = mailTestCmd(t, "bob@example.com", "--smtp-url", srv.URL(), "--mail-from", "tidings@example.com"); code != 1 ||
		!strings.Contains(errs, "refused it: 451 4.7.1 Greylisted") {
		t.Fatalf("4xx: exit %d, stderr %q", code, errs)
	}

	// The settings from the environment, the URL (with its password) from a file.
	file := filepath.Join(t.TempDir(), "smtp-url")
	if err := os.WriteFile(file, []byte(srv.URL()+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("TIDINGS_SMTP_URL_FILE", file)
	t.Setenv("TIDINGS_MAIL_FROM", "env@example.com")
	if code, out, errs = mailTestCmd(t, "carol@example.com"); code != 0 || !strings.HasPrefix(out, "sent to carol@example.com via ") {
		t.Fatalf("from the environment: exit %d, stdout %q, stderr %q", code, out, errs)
	}
	if m := srv.Wait(t, 2)[1]; m.From != "env@example.com" || m.To[0] != "carol@example.com" {
		t.Fatalf("from the environment: %+v", m)
	}
}

func TestMailTestCommandBadInput(t *testing.T) {
	testbackend.Once(t)
	srv := smtptest.Start(t, smtptest.Options{})
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"no url", []string{"a@example.com", "--mail-from", "t@example.com"}, "--smtp-url is missing"},
		{"unknown scheme", []string{"a@example.com", "--smtp-url", "imap://mail.example.com", "--mail-from", "t@example.com"}, `--smtp-url: unknown scheme "imap"`},
		{"no host", []string{"a@example.com", "--smtp-url", "smtp://:587", "--mail-from", "t@example.com"}, "--smtp-url has no host"},
		{"no from", []string{"a@example.com", "--smtp-url", srv.URL()}, "--mail-from is missing"},
		{"bad from", []string{"a@example.com", "--smtp-url", srv.URL(), "--mail-from", "tidings"}, `--mail-from "tidings" is not an address`},
		{"bad address", []string{"not-an-address", "--smtp-url", srv.URL(), "--mail-from", "t@example.com"}, `"not-an-address" is not an address`},
		{"bad --smtp-insecure", []string{"a@example.com", "--smtp-url", srv.URL(), "--mail-from", "t@example.com", "--smtp-insecure=maybe"},
			`--smtp-insecure must be true or false, not "maybe"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errs := mailTestCmd(t, tc.args...)
			if code != 1 || out != "" || !strings.HasPrefix(errs, "tidings mail test: ") || !strings.Contains(errs, tc.want) ||
				strings.Count(errs, "\n") != 1 {
				t.Fatalf("exit %d, stdout %q, stderr %q, want one line with %q", code, out, errs, tc.want)
			}
		})
	}
	if n := len(srv.Attempts()); n != 0 {
		t.Fatalf("%d messages sent", n)
	}
	if code, _, _ := mailTestCmd(t); code != 2 {
		t.Fatalf("no address: exit %d", code)
	}
	t.Setenv("TIDINGS_SMTP_INSECURE", "maybe")
	if code, _, errs := mailTestCmd(t, "a@example.com", "--smtp-url", srv.URL(), "--mail-from", "t@example.com"); code != 1 ||
		!strings.Contains(errs, "TIDINGS_SMTP_INSECURE") {
		t.Fatalf("bad TIDINGS_SMTP_INSECURE: exit %d, stderr %q", code, errs)
	}
}

func TestMailTestPublicServerWithoutSTARTTLS(t *testing.T) {
	testbackend.Once(t)
	srv := smtptest.Start(t, smtptest.Options{Host: publicAddr(t)})
	code, out, errs := mailTestCmd(t, "a@example.com", "--smtp-url", srv.URL(), "--mail-from", "t@example.com")
	if code != 1 || out != "" || !strings.Contains(errs, "does not offer STARTTLS") || !strings.Contains(errs, "--smtp-insecure") {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, out, errs)
	}
	if n := len(srv.Attempts()); n != 0 {
		t.Fatalf("%d messages sent in the clear", n)
	}
	code, out, errs = mailTestCmd(t, "a@example.com", "--smtp-url", srv.URL(), "--mail-from", "t@example.com", "--smtp-insecure")
	if code != 0 || out != "sent to a@example.com via "+srv.Addr()+"\n" {
		t.Fatalf("--smtp-insecure: exit %d, stdout %q, stderr %q", code, out, errs)
	}
	srv.Wait(t, 1)
}

// serveMail runs Main.Run with cfg's mail settings and returns Run's error and the log.
func serveMail(t *testing.T, mod func(*Config)) (*Main, error, string) {
	t.Helper()
	cfg := DefaultConfig()
	cfg.Addr, cfg.MetricsAddr, cfg.Data = "127.0.0.1:0", "", testbackend.Location(t)
	mod(&cfg)
	var buf syncBuffer
	m := &Main{Config: cfg, Logger: slog.New(slog.NewTextHandler(&buf, nil))}
	err := m.Run(t.Context())
	t.Cleanup(func() { m.Close() })
	return m, err, buf.String()
}

func TestServeRefusesBadMailSettings(t *testing.T) {
	testbackend.Once(t)
	for _, tc := range []struct {
		name string
		args []string
		want []string
	}{
		{"unknown scheme", []string{"--smtp-url", "http://mail.example.com", "--mail-from", "t@example.com"}, []string{"--smtp-url: unknown scheme"}},
		{"no host", []string{"--smtp-url", "smtps://", "--mail-from", "t@example.com"}, []string{"--smtp-url has no host"}},
		{"no from", []string{"--smtp-url", "smtp://127.0.0.1:1"}, []string{"--mail-from is missing"}},
		{"bad --smtp-insecure", []string{"--smtp-url", "smtp://127.0.0.1:1", "--mail-from", "t@example.com", "--smtp-insecure=maybe"},
			[]string{`tidings serve: --smtp-insecure must be true or false, not "maybe"`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out, errs bytes.Buffer
			args := append([]string{"serve", "--addr", "127.0.0.1:0", "--data", t.TempDir()}, tc.args...)
			code := run(context.Background(), args, nil, &out, &errs)
			if code != 1 || strings.Count(errs.String(), "\n") != 1 {
				t.Fatalf("exit %d, stderr %q: want one line", code, errs.String())
			}
			for _, w := range tc.want {
				if !strings.Contains(errs.String(), w) {
					t.Fatalf("stderr %q, want %q", errs.String(), w)
				}
			}
		})
	}
	t.Run("bad environment", func(t *testing.T) {
		t.Setenv("TIDINGS_SMTP_URL", "smtp//mail.example.com")
		t.Setenv("TIDINGS_MAIL_FROM", "t@example.com")
		var errs bytes.Buffer
		if code := run(context.Background(), []string{"serve", "--addr", "127.0.0.1:0", "--data", t.TempDir()}, nil, io.Discard, &errs); code != 1 ||
			!strings.Contains(errs.String(), "--smtp-url") {
			t.Fatalf("exit %d, stderr %q", code, errs.String())
		}
	})
}

func TestServeProbesTheMailServer(t *testing.T) {
	testbackend.Once(t)

	t.Run("public without STARTTLS", func(t *testing.T) {
		t.Parallel()
		srv := smtptest.Start(t, smtptest.Options{Host: publicAddr(t), User: "u", Password: "p"})
		_, err, _ := serveMail(t, func(c *Config) { c.SMTPURL, c.MailFrom = srv.URL(), "t@example.com" })
		if err == nil || !strings.Contains(err.Error(), "--smtp-url") || !strings.Contains(err.Error(), "--smtp-insecure") ||
			!strings.Contains(err.Error(), "STARTTLS") || strings.Contains(err.Error(), ":p@") {
			t.Fatalf("Run: %v", err)
		}
		// The operator says the network is theirs: it starts.
		m, err, _ := serveMail(t, func(c *Config) { c.SMTPURL, c.MailFrom, c.SMTPInsecure = srv.URL(), "t@example.com", true })
		if err != nil || m.mailer == nil {
			t.Fatalf("--smtp-insecure: %v, mailer %v", err, m.mailer)
		}
	})

	t.Run("public with STARTTLS", func(t *testing.T) {
		t.Parallel()
		srv := smtptest.Start(t, smtptest.Options{Host: publicAddr(t), STARTTLS: true, User: "u", Password: "p"})
		m, err, log := serveMail(t, func(c *Config) {
			c.SMTPURL, c.MailFrom, c.SMTPRootCAs, c.PublicURL = srv.URL(), "t@example.com", srv.CertPool(), "https://tidings.example.com"
		})
		if err != nil || m.mailer == nil {
			t.Fatalf("Run: %v, mailer %v", err, m.mailer)
		}
		if !strings.Contains(log, "mail goes through "+srv.Addr()) || strings.Contains(log, "level=WARN") {
			t.Fatalf("log:\n%s", log)
		}
		if srv.Connections() == 0 {
			t.Fatal("no probe reached the server")
		}
	})

	t.Run("loopback, no public URL", func(t *testing.T) {
		t.Parallel()
		srv := smtptest.Start(t, smtptest.Options{})
		m, err, log := serveMail(t, func(c *Config) { c.SMTPURL, c.MailFrom = srv.URL(), "t@example.com" })
		if err != nil || m.mailer == nil {
			t.Fatalf("Run: %v, mailer %v", err, m.mailer)
		}
		if !strings.Contains(log, "level=WARN") || !strings.Contains(log, "--public-url") {
			t.Fatalf("no warning about --public-url:\n%s", log)
		}
	})

	t.Run("unreachable", func(t *testing.T) {
		t.Parallel()
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := ln.Addr().String()
		ln.Close()
		m, err, log := serveMail(t, func(c *Config) {
			c.SMTPURL, c.MailFrom, c.PublicURL = "smtp://"+addr, "t@example.com", "https://tidings.example.com"
		})
		if err != nil || m.mailer == nil {
			t.Fatalf("an unreachable mail server must not stop the start: %v", err)
		}
		if !strings.Contains(log, "level=WARN") || !strings.Contains(log, "cannot be reached") || !strings.Contains(log, addr) {
			t.Fatalf("log:\n%s", log)
		}
	})

	t.Run("wrong password", func(t *testing.T) {
		t.Parallel()
		srv := smtptest.Start(t, smtptest.Options{STARTTLS: true, User: "u", Password: "p"})
		bad := strings.Replace(srv.URL(), "u:p@", "u:nope@", 1)
		_, err, log := serveMail(t, func(c *Config) {
			c.SMTPURL, c.MailFrom, c.PublicURL = bad, "t@example.com", "https://tidings.example.com"
		})
		if err != nil || !strings.Contains(log, "level=WARN") || !strings.Contains(log, "535") || strings.Contains(log, "nope") {
			t.Fatalf("Run: %v, log:\n%s", err, log)
		}
	})

	t.Run("no mail", func(t *testing.T) {
		t.Parallel()
		m, err, log := serveMail(t, func(c *Config) { c.MailFrom = "t@example.com" })
		if err != nil || m.mailer != nil || !strings.Contains(log, "--mail-from is set but --smtp-url is not") {
			t.Fatalf("Run: %v, mailer %v, log:\n%s", err, m.mailer, log)
		}
	})
}
