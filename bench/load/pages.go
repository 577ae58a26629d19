package main

import (
	"fmt"
	"net/http"
	"strings"
	"time"
)

// pageView is one view as ls.js sends it: a path with a utm parameter and a query the
// server drops, a title and an external referrer.
const pageView = `{"user_id":"user-1042","path":"/pricing?utm_source=newsletter&email=ada@example.com","title":"Pricing — Load","referrer":"https://www.google.com/search?q=tidings"}`

// comparePages measures page views sent one per request and 10 per request (as ls.js
// batches them) against single event publishes from the same clients in the same run,
// and prints views per second and the ratios with events per second.
func comparePages(client *http.Client, srv target, token string, event phase, clients int, d time.Duration, baseRef float64) (failed bool) {
	one := phase{name: "POST /v1/page (1 view)", method: "POST", path: "/v1/page",
		body: `{"project":"load",` + strings.TrimPrefix(pageView, "{")}
	views := make([]string, 10)
	for i := range views {
		views[i] = pageView
	}
	ten := phase{name: "POST /v1/page (10 views)", method: "POST", path: "/v1/page",
		body: `{"project":"load","views":[` + strings.Join(views, ",") + `]}`}
	fmt.Printf("\n%d clients: page views against events (ratios against the baseline's single publishes)\n", clients)
	e := run(client, srv, token, event, clients, d)
	print(event.name, e, baseRef)
	p1 := run(client, srv, token, one, clients, d)
	print(one.name, p1, baseRef)
	p10 := run(client, srv, token, ten, clients, d)
	print(ten.name, p10, baseRef)
	fmt.Printf("views/s ÷ events/s: one per request %.2f, ten per request %.2f (%.0f views/s)\n",
		p1.rps/e.rps, 10*p10.rps/e.rps, 10*p10.rps)
	return e.errors > 0 || p1.errors > 0 || p10.errors > 0
}
