package main

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// viewers are open dashboard feeds: signed-in sessions, each with up to ten live
// streams of the project, read as a browser's EventSource does, reconnecting after two
// seconds with Last-Event-ID when the server drops them.
type viewers struct {
	opened, refused   atomic.Int64
	events, reconnect atomic.Int64
	reloads, paused   atomic.Int64
	cancel            context.CancelFunc
	wg                sync.WaitGroup
}

// openViewers signs in sessions (as the users email-1… of the load account, each from
// its own forwarded address, which the server believes with --trusted-proxies) and
// opens n streams, ten per session.
func openViewers(base, project, emailPattern, password string, users, n int) (*viewers, error) {
	ctx, cancel := context.WithCancel(context.Background())
	v := &viewers{cancel: cancel}
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	streamClient := &http.Client{Transport: &http.Transport{MaxConnsPerHost: 0, MaxIdleConnsPerHost: n}}
	sessions := (n + 9) / 10
	for s := 0; s < sessions; s++ {
		form := url.Values{"email": {fmt.Sprintf(emailPattern, s%users+1)}, "password": {password}}
		req, _ := http.NewRequest("POST", base+"/login", strings.NewReader(form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("X-Forwarded-For", fmt.Sprintf("198.18.%d.%d", s/250, s%250+1))
		res, err := noRedirect.Do(req)
		if err != nil {
			return nil, err
		}
		res.Body.Close()
		var cookie *http.Cookie
		for _, c := range res.Cookies() {
			if c.Name == "tidings_session" {
				cookie = c
			}
		}
		if cookie == nil {
			return nil, fmt.Errorf("sign-in %d: %s (create the users with load.sh)", s, res.Status)
		}
		for i := 0; i < 10 && s*10+i < n; i++ {
			first := make(chan bool, 1)
			v.wg.Add(1)
			go v.read(ctx, streamClient, base+"/p/"+project+"/stream", cookie, first)
			if <-first {
				v.opened.Add(1)
			} else {
				v.refused.Add(1)
			}
		}
	}
	return v, nil
}

// read keeps one stream open like EventSource: it counts the event messages and, when
// the server drops it, reconnects after the advertised retry with Last-Event-ID.
func (v *viewers) read(ctx context.Context, client *http.Client, streamURL string, cookie *http.Cookie, first chan<- bool) {
	defer v.wg.Done()
	last := ""
	for attempt := 0; ctx.Err() == nil; attempt++ {
		req, _ := http.NewRequestWithContext(ctx, "GET", streamURL, nil)
		req.AddCookie(cookie)
		if last != "" {
			req.Header.Set("Last-Event-ID", last)
		}
		res, err := client.Do(req)
		ok := err == nil && res.StatusCode == 200
		if attempt == 0 {
			first <- ok
		}
		if !ok {
			if res != nil {
				res.Body.Close()
			}
			return // refused (the account's cap): a browser would show the error
		}
		if attempt > 0 && last != "" {
			v.reconnect.Add(1)
		}
		sc := bufio.NewScanner(res.Body)
		sc.Buffer(make([]byte, 256<<10), 1<<20)
		ended, behind := false, false
		for sc.Scan() {
			line := sc.Text()
			switch {
			case line == "event: end":
				ended = true
			case ended && line == "data: behind":
				behind = true
			case strings.HasPrefix(line, "id: "):
				last = line[4:]
			case line == "event: event":
				v.events.Add(1)
			case line == "event: reload":
				v.reloads.Add(1)
				last = "" // a browser reloads the page: the stream starts afresh
			}
		}
		res.Body.Close()
		wait := 2 * time.Second // EventSource's retry
		if behind {
			// The page paused: its reader clicks "Show the newest" a few seconds later.
			v.paused.Add(1)
			wait, last = 5*time.Second, ""
		}
		select {
		case <-ctx.Done():
		case <-time.After(wait):
		}
	}
}

func (v *viewers) close() {
	v.cancel()
	v.wg.Wait()
}
