package mail

import (
	"bytes"
	"mime"
	"net/mail"
	"strings"
	"testing"
	"time"

	"github.com/tidings-dev/tidings"
)

func TestSubjectEncoding(t *testing.T) {
	from := &mail.Address{Address: "t@example.com"}
	to := &mail.Address{Address: "a@example.com"}
	for _, subject := range []string{
		"Deploy finished · #ci",
		"A long ASCII subject about a deploy that finished on the production cluster in region eu-west-1 · #deploys",
		"Looks =?utf-8?q?encoded?= but is not",
		"🚀",
		"🚨 Zahlungsausfall bei Müller & Söhne: Rückbuchung über 1.234,56 € für Bestellung #98765 · #payments",
		"支払いを受け取りました。注文番号 1042、お客様：山田太郎 様 · #決済",
		"_underscores_ and ?question=marks? and \"quotes\" · #x",
	} {
		data, err := compose(from, &tidings.MailMessage{Subject: subject, Text: "x"}, to, "<id@example.com>", time.Now())
		if err != nil {
			t.Fatal(err)
		}
		head, _, _ := strings.Cut(string(data), "\r\n\r\n")
		for _, line := range strings.Split(head, "\r\n") {
			if len(line) > 78 {
				t.Errorf("%q: header line of %d characters: %q", subject, len(line), line)
			}
		}
		m, err := mail.ReadMessage(bytes.NewReader(data))
		if err != nil {
			t.Fatal(err)
		}
		var dec mime.WordDecoder
		got, err := dec.DecodeHeader(m.Header.Get("Subject"))
		if err != nil || got != subject {
			t.Errorf("subject %q came back as %q (%v)\n%s", subject, got, err, head)
		}
	}
}

func TestTransferEncodings(t *testing.T) {
	for body, want := range map[string]string{
		"short ASCII\nlines\n":                           "7bit",
		strings.Repeat("x", 80):                          "quoted-printable",
		"Grüße aus Köln":                                 "quoted-printable",
		"From the start of a line, mbox would mangle it": "quoted-printable",
		"trailing space ":                                "quoted-printable",
		"日本語のテキストです":                                     "base64",
		"Привет, это уведомление о событии в вашем проекте": "base64",
	} {
		if got := encodingOf(crlf(body)); got != want {
			t.Errorf("%q: %s, want %s", body, got, want)
		}
	}
}
