// Package attack holds the hostile clients that the tests of several packages use:
// what the audit did to the running service, as code.
package attack

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// HeldBackBody sends the headers of a POST whose body of length bytes never comes and
// returns the answer's status, failing t when none comes within two seconds or when a
// 413 does not close the connection.
func HeldBackBody(t testing.TB, baseURL, path, contentType string, length int, header ...string) string {
	t.Helper()
	conn, err := net.Dial("tcp", strings.TrimPrefix(baseURL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	req := fmt.Sprintf("POST %s HTTP/1.1\r\nHost: %s\r\nContent-Type: %s\r\nContent-Length: %d\r\n",
		path, strings.TrimPrefix(baseURL, "http://"), contentType, length)
	for i := 0; i+1 < len(header); i += 2 {
		req += header[i] + ": " + header[i+1] + "\r\n"
	}
	if _, err := io.WriteString(conn, req+"\r\n"); err != nil {
		t.Fatal(err)
	}
	conn.SetReadDeadline(time.Now().Add(2 * time.Second))
	res, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("no answer while the body is held back: %v", err)
	}
	defer res.Body.Close()
	if res.StatusCode == http.StatusRequestEntityTooLarge && !res.Close {
		t.Errorf("413 without Connection: close")
	}
	return res.Status
}
