package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"
)

// signIn signs a dashboard user in and returns the session cookie.
func signIn(base, email, password, forwardedFor string) (*http.Cookie, error) {
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	form := url.Values{"email": {email}, "password": {password}}
	req, _ := http.NewRequest("POST", base+"/login", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("X-Forwarded-For", forwardedFor)
	res, err := noRedirect.Do(req)
	if err != nil {
		return nil, err
	}
	res.Body.Close()
	for _, c := range res.Cookies() {
		if c.Name == "tidings_session" {
			return c, nil
		}
	}
	return nil, fmt.Errorf("sign-in as %s: %s (create the user with load.sh)", email, res.Status)
}

// liveLatency publishes n events one after another into channel "live" of project
// "load" and measures, for each, the time from sending POST /v1/log to its card
// arriving on a signed-in dashboard stream of that channel: what a person watching
// the feed waits.
func liveLatency(base, token, email, password string, n int) ([]time.Duration, error) {
	cookie, err := signIn(base, email, password, "198.19.0.1")
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", base+"/p/load/stream?channel=live", nil)
	req.AddCookie(cookie)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	if res.StatusCode != 200 {
		return nil, fmt.Errorf("live stream: %s", res.Status)
	}
	type arrival struct {
		id string
		at time.Time
	}
	arrived := make(chan arrival, 1024)
	go func() {
		sc := bufio.NewScanner(res.Body)
		sc.Buffer(make([]byte, 256<<10), 1<<20)
		id := ""
		for sc.Scan() {
			line := sc.Text()
			switch {
			case strings.HasPrefix(line, "id: "):
				id = line[4:]
			case line == "event: event":
				arrived <- arrival{id, time.Now()}
			}
		}
		close(arrived)
	}()
	time.Sleep(200 * time.Millisecond) // the stream's catch-up is done
	client := &http.Client{Timeout: 10 * time.Second}
	var out []time.Duration
	for i := range n {
		body := fmt.Sprintf(`{"project":"load","channel":"live","event":"Live %d","icon":"⏱️","tags":{"probe":%d}}`, i, i)
		req, _ := http.NewRequest("POST", base+"/v1/log", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+token)
		t0 := time.Now()
		res, err := client.Do(req)
		if err != nil {
			return nil, err
		}
		var ev struct{ ID string }
		err = json.NewDecoder(res.Body).Decode(&ev)
		res.Body.Close()
		if err != nil || res.StatusCode != 200 {
			return nil, fmt.Errorf("publish: %d %v", res.StatusCode, err)
		}
		timeout := time.After(5 * time.Second)
	wait:
		for {
			select {
			case a, ok := <-arrived:
				if !ok {
					return nil, fmt.Errorf("the live stream ended")
				}
				if a.id == ev.ID {
					out = append(out, a.at.Sub(t0))
					break wait
				}
			case <-timeout:
				return nil, fmt.Errorf("event %s did not reach the live stream within 5 s", ev.ID)
			}
		}
		time.Sleep(5 * time.Millisecond)
	}
	return out, nil
}

func printLatency(name string, ds []time.Duration) {
	slices.Sort(ds)
	q := func(p int) time.Duration { return ds[min(len(ds)-1, len(ds)*p/100)].Round(10 * time.Microsecond) }
	fmt.Printf("%-44s %d events: p50 %v, p90 %v, p99 %v, max %v\n", name, len(ds), q(50), q(90), q(99), ds[len(ds)-1].Round(10*time.Microsecond))
}
