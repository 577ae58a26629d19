package mail_test

import (
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/tidings-dev/tidings/mail"
)

func TestConfigCheck(t *testing.T) {
	for _, tc := range []struct {
		url, from string
		want      string // a part of the error; "" for none
	}{
		{"smtp://u:p@mail.example.com:587", "tidings@example.com", ""},
		{"smtp://mail.example.com", "Tidings <tidings@example.com>", ""},
		{"smtps://u:p%40x@mail.example.com", "tidings@example.com", ""},
		{"SMTPS://127.0.0.1:2465", "tidings@example.com", ""},
		{"smtp://[::1]:25", "tidings@example.com", ""},
		{"", "tidings@example.com", "--smtp-url is missing"},
		{"http://mail.example.com", "tidings@example.com", `--smtp-url: unknown scheme "http"`},
		{"submission://mail.example.com", "tidings@example.com", "--smtp-url: unknown scheme"},
		{"mail.example.com:587", "tidings@example.com", "--smtp-url"},
		{"mail.example.com", "tidings@example.com", "--smtp-url has no scheme"},
		{"smtp://", "tidings@example.com", "--smtp-url has no host"},
		{"smtp://u:p@:587", "tidings@example.com", "--smtp-url has no host"},
		{"smtp:mail.example.com", "tidings@example.com", "--smtp-url has no host"},
		{"smtp://mail.example.com:0", "tidings@example.com", "--smtp-url: port"},
		{"smtp://mail.example.com:99999", "tidings@example.com", "--smtp-url: port"},
		{"smtp://mail.example.com/x", "tidings@example.com", "--smtp-url takes no path"},
		{"smtp://mail.example.com?tls=1", "tidings@example.com", "--smtp-url takes no path"},
		{"smtp://:secret@mail.example.com", "tidings@example.com", "no user name"},
		{"smtp://u:p@mail.example.com", "", "--mail-from is missing"},
		{"smtp://u:p@mail.example.com", "tidings", "--mail-from"},
		{"smtp://u:p@mail.example.com", "Tidings <tidings", "--mail-from"},
		{"smtp://u:p@mail.example.com", "a@example.com, b@example.com", "--mail-from"},
	} {
		err := mail.Config{URL: tc.url, From: tc.from}.Check()
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%q %q: %v", tc.url, tc.from, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%q %q: %v, want %q", tc.url, tc.from, err, tc.want)
		}
		if err != nil && strings.Contains(err.Error(), "secret") {
			t.Errorf("%q: the error shows the password: %v", tc.url, err)
		}
		if _, nerr := mail.New(mail.Config{URL: tc.url, From: tc.from}); (nerr == nil) != (err == nil) {
			t.Errorf("%q: New %v, Check %v", tc.url, nerr, err)
		}
	}
}

func TestConfigBadURLHidesPassword(t *testing.T) {
	err := mail.Config{URL: "smtp://user:secret%zz@mail.example.com", From: "a@example.com"}.Check()
	if err == nil || strings.Contains(err.Error(), "secret") || !strings.Contains(err.Error(), "--smtp-url") {
		t.Fatalf("%v", err)
	}
}

func TestSenderAddr(t *testing.T) {
	for url, want := range map[string]string{
		"smtp://mail.example.com":        "mail.example.com:587",
		"smtps://mail.example.com":       "mail.example.com:465",
		"smtp://u:p@mail.example.com:25": "mail.example.com:25",
		"smtp://[::1]":                   "[::1]:587",
	} {
		s, err := mail.New(mail.Config{URL: url, From: "a@example.com"})
		if err != nil || s.Addr() != want {
			t.Errorf("%s: %v %v, want %s", url, s, err, want)
		}
	}
}

// A send leaves nothing running behind it: no goroutine of ours or of the test server.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
