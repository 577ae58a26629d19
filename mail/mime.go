package mail

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"mime/quotedprintable"
	"net/mail"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/tidings-dev/tidings"
)

// The MIME writer: a message is small and ours (two text parts, no attachments), so
// the standard library's encoders do it in a page, with every header under our control.

// compose writes m as an RFC 5322 message with CRLF line ends.
func compose(from *mail.Address, m *tidings.MailMessage, to *mail.Address, msgID string, now time.Time) ([]byte, error) {
	if m.Text == "" {
		return nil, errors.New("mail: a message needs a text part")
	}
	var b bytes.Buffer
	header := func(name, value string) {
		b.WriteString(name)
		b.WriteString(": ")
		b.WriteString(value)
		b.WriteString("\r\n")
	}
	header("From", from.String())
	header("To", to.String())
	header("Subject", encodeSubject(m.Subject))
	header("Date", now.Format(time.RFC1123Z))
	if len(msgID) < 5 || msgID[0] != '<' || msgID[len(msgID)-1] != '>' || !strings.Contains(msgID, "@") ||
		strings.ContainsAny(msgID[1:len(msgID)-1], "<>\r\n\t ") {
		return nil, fmt.Errorf("mail: %q is not a Message-ID, <LOCAL@DOMAIN>", msgID)
	}
	header("Message-ID", msgID)
	header("MIME-Version", "1.0")
	// RFC 3834: a machine wrote it; vacation responders leave it alone.
	header("Auto-Submitted", "auto-generated")
	if m.ListUnsubscribe != "" {
		if strings.ContainsAny(m.ListUnsubscribe, "<>\r\n ") {
			return nil, fmt.Errorf("mail: the unsubscribe URL %q has characters a header cannot take", m.ListUnsubscribe)
		}
		header("List-Unsubscribe", "<"+m.ListUnsubscribe+">")
		header("List-Unsubscribe-Post", "List-Unsubscribe=One-Click")
	}
	if m.HTML == "" {
		writePart(&b, "text/plain; charset=utf-8", m.Text)
		return b.Bytes(), nil
	}
	boundary := "tidings-" + randomHex(8)
	header("Content-Type", `multipart/alternative; boundary="`+boundary+`"`)
	b.WriteString("\r\n")
	// Simplest first: a client shows the last part it can (RFC 2046, 5.1.4).
	for _, p := range []struct{ typ, body string }{
		{"text/plain; charset=utf-8", m.Text},
		{"text/html; charset=utf-8", m.HTML},
	} {
		b.WriteString("--" + boundary + "\r\n")
		writePart(&b, p.typ, p.body)
	}
	b.WriteString("--" + boundary + "--\r\n")
	return b.Bytes(), nil
}

// writePart writes a Content-Type, the transfer encoding the body needs, a blank line
// and the body.
func writePart(b *bytes.Buffer, contentType, body string) {
	body = crlf(body)
	b.WriteString("Content-Type: " + contentType + "\r\n")
	switch encodingOf(body) {
	case "7bit":
		b.WriteString("Content-Transfer-Encoding: 7bit\r\n\r\n")
		b.WriteString(body)
	case "base64":
		b.WriteString("Content-Transfer-Encoding: base64\r\n\r\n")
		enc := base64.StdEncoding.EncodeToString([]byte(body))
		for len(enc) > 76 {
			b.WriteString(enc[:76] + "\r\n")
			enc = enc[76:]
		}
		b.WriteString(enc)
	default:
		b.WriteString("Content-Transfer-Encoding: quoted-printable\r\n\r\n")
		w := quotedprintable.NewWriter(b)
		_, _ = w.Write([]byte(body)) // a bytes.Buffer does not fail
		_ = w.Close()
	}
	if !bytes.HasSuffix(b.Bytes(), []byte("\r\n")) {
		b.WriteString("\r\n")
	}
}

// encodingOf picks the transfer encoding: 7bit for short ASCII lines, base64 when
// most of the text is not ASCII (quoted-printable would triple it), else
// quoted-printable.
func encodingOf(body string) string {
	nonASCII, long := 0, false
	for _, line := range strings.Split(body, "\r\n") {
		if len(line) > 76 || strings.HasPrefix(line, "From ") || strings.HasSuffix(line, " ") {
			long = true
		}
		for i := 0; i < len(line); i++ {
			if c := line[i]; c >= 0x80 || (c < 0x20 && c != '\t') {
				nonASCII++
			}
		}
	}
	switch {
	case nonASCII == 0 && !long:
		return "7bit"
	case nonASCII*3 > len(body):
		return "base64"
	}
	return "quoted-printable"
}

// crlf makes every line end CRLF, the last one too.
func crlf(s string) string {
	s = strings.ReplaceAll(s, "\r\n", "\n")
	s = strings.ReplaceAll(s, "\r", "\n")
	if !strings.HasSuffix(s, "\n") {
		s += "\n"
	}
	return strings.ReplaceAll(s, "\n", "\r\n")
}

// encodeSubject encodes a subject with non-ASCII characters as RFC 2047 "Q" words,
// one per line, so that no line passes 78 characters (RFC 5322, 2.1.1).
func encodeSubject(s string) string {
	s = strings.Join(strings.Fields(s), " ") // no CR, LF or tab can break the header
	s = strings.ToValidUTF8(s, "\uFFFD")
	ascii := true
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			ascii = false
			break
		}
	}
	if ascii && !strings.Contains(s, "=?") { // "=?" would read as an encoded word
		return fold(s, len("Subject: "))
	}
	const open, end = "=?utf-8?q?", "?="
	// "Subject: " and the first word, or a space and the next, within 78.
	const room = 78 - len("Subject: ") - len(open) - len(end)
	var words []string
	var w strings.Builder
	for _, r := range s {
		var q string
		switch {
		case r == ' ':
			q = "_"
		case r < 0x80 && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("!*+-/", r)):
			q = string(r)
		default:
			var b [4]byte
			for _, c := range b[:utf8.EncodeRune(b[:], r)] {
				q += fmt.Sprintf("=%02X", c)
			}
		}
		if w.Len()+len(q) > room {
			words = append(words, open+w.String()+end)
			w.Reset()
		}
		w.WriteString(q)
	}
	words = append(words, open+w.String()+end)
	return strings.Join(words, "\r\n ")
}

// fold breaks an ASCII header value before spaces so that its lines stay within 78
// characters where it can (a word longer than that stays whole); used is how much of
// the first line the header's name takes.
func fold(s string, used int) string {
	var b strings.Builder
	line := used
	for i, w := range strings.Split(s, " ") {
		if i > 0 {
			if line+1+len(w) > 78 {
				b.WriteString("\r\n")
				line = 0
			}
			b.WriteByte(' ')
			line++
		}
		b.WriteString(w)
		line += len(w)
	}
	return b.String()
}

// newMessageID makes a Message-ID on the sender's domain.
func newMessageID(from *mail.Address) string {
	domain := from.Address[strings.LastIndexByte(from.Address, '@')+1:]
	return "<" + randomHex(16) + "@" + domain + ">"
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b) // never fails (crypto/rand)
	return hex.EncodeToString(b)
}
