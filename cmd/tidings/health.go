package main

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"time"
)

// healthTimeout bounds one health check: a container runtime kills a check that hangs,
// but a clear "not ready" is better than being killed.
const healthTimeout = 5 * time.Second

// health asks the local server whether it is ready: the container image's HEALTHCHECK.
// It finds the server where serve listens (--addr, TIDINGS_ADDR, --tls-cert).
func health(ctx context.Context, c *cli, _ []string) error {
	ctx, cancel := context.WithTimeout(ctx, healthTimeout)
	defer cancel()
	u, err := healthURL(c.cfg.Addr, c.cfg.TLSCert != "")
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return err
	}
	client := &http.Client{
		// The server's certificate names its public host, not the loopback address
		// asked here; what is checked is readiness, and no secret is sent.
		Transport:     &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	resp, err := client.Do(req)
	if err != nil {
		return fmt.Errorf("not ready: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("not ready: GET %s answered %s", u, resp.Status)
	}
	fmt.Fprintln(c.stdout, "ready")
	return nil
}

// healthURL is /readyz on the address serve listens on: an unspecified host (":8080",
// "0.0.0.0:8080", "[::]:8080") is asked on the loopback address.
func healthURL(addr string, https bool) (string, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "", fmt.Errorf("--addr %q: %w", addr, err)
	}
	switch host {
	case "", "0.0.0.0":
		host = "127.0.0.1"
	case "::":
		host = "::1"
	}
	scheme := "http"
	if https {
		scheme = "https"
	}
	return scheme + "://" + net.JoinHostPort(host, port) + "/readyz", nil
}
