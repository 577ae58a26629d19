package main

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// TestChartsInChromium makes a chart from a feed search ("Chart this"), saves it,
// changes the board's range and the chart's split, builds a 3-step funnel and opens a
// drop-off list; the board is screenshotted light, dark and on a phone.
func TestChartsInChromium(t *testing.T) {
	m, b, token := signedInBrowser(t)
	now := time.Now()
	// Six users sign up over the last days; four create a project, two of them pay.
	for i, u := range []string{"ada", "bob", "cy", "dee", "eve", "fay"} {
		at := now.Add(-time.Duration(i*20+3) * time.Hour)
		plan := []string{"pro", "free"}[i%2]
		steps := []string{"Signed up", "Created project", "Paid"}[:[]int{3, 3, 2, 2, 1, 1}[i]]
		for k, ev := range steps {
			body := fmt.Sprintf(`{"project":"my-saas","channel":"payments","event":%q,"user_id":%q,"tags":{"plan":%q,"amount":%d},"timestamp":%d}`,
				ev, u, plan, 10*(i+1), at.Add(time.Duration(k)*95*time.Minute).Unix())
			if status, resp := post(t, m.URL()+"/v1/log", token, body); status != 200 {
				t.Fatalf("publish: %d %s", status, resp)
			}
		}
	}

	// A feed search, then Chart this: the form comes filled in, with a preview.
	b.do(chromedp.Navigate(m.URL() + "/p/my-saas?q=plan%3Apro"))
	b.mustUntil(`document.querySelector("a.chart-this") !== null`)
	b.click(`document.querySelector("a.chart-this").click()`)
	b.mustUntil(`location.pathname === "/p/my-saas/charts/new" && document.querySelector("#cf-q").value === "plan:pro" && document.querySelector(".preview svg.plot rect.bar") !== null`)
	b.checkLabels("chart form")
	b.screenshot("charts-form")
	b.do(chromedp.SetValue(chromedp.CSS("#cf-title"), "Pro plan events"))
	b.click(`document.querySelector(".chart-form button.primary").click()`)
	b.mustUntil(`location.pathname === "/p/my-saas/charts" && document.querySelector(".board-card h2") && document.querySelector(".board-card h2").textContent === "Pro plan events"`)

	// The board's range applies to its cards.
	b.click(`[...document.querySelectorAll(".range-picker a")].find(a => a.textContent === "7 days").click()`)
	b.mustUntil(`location.search === "?range=7d" && document.querySelector(".range-picker a[aria-current]").textContent === "7 days" && document.querySelectorAll(".board-card svg.plot rect.bar").length > 0`)
	if n := get(b, chromedp.Evaluate[int](`document.querySelectorAll(".board-card .numbers-table tbody tr").length`)); n != 7 {
		t.Errorf("%d days in the chart's table over 7 days", n)
	}

	// Edit: split by the plan tag, as stacked bars.
	b.click(`[...document.querySelectorAll(".card-actions a")].find(a => a.textContent === "Edit").click()`)
	b.mustUntil(`location.pathname.endsWith("/edit") && document.querySelector("#cf-title").value === "Pro plan events"`)
	b.do(chromedp.Evaluate[chromedp.Void](`document.querySelector("#cf-q").value = ""`), chromedp.SetValue(chromedp.CSS("#cf-split"), "tag"),
		chromedp.SetValue(chromedp.CSS("#cf-split-key"), "plan"), chromedp.SetValue(chromedp.CSS("#cf-display"), "stacked"),
		chromedp.SetValue(chromedp.CSS("#cf-title"), "Events by plan"))
	b.click(`document.querySelector(".chart-form button.primary").click()`)
	b.mustUntil(`location.pathname === "/p/my-saas/charts" && location.search === "?range=7d" && document.querySelector(".board-card .question").textContent.includes("by tag plan") && document.querySelectorAll(".board-card .legend li").length === 2`)
	hover := get(b, chromedp.Evaluate[string](`document.querySelector(".board-card svg.plot rect.bar title").textContent`))
	if !strings.Contains(hover, " · plan ") || !strings.Contains(hover, " event") {
		t.Errorf("a stacked bar's hover: %q", hover)
	}

	// A 3-step funnel: preview, save, and the users who dropped at step 2.
	b.do(chromedp.Navigate(m.URL() + "/p/my-saas/funnels/new?range=7d"))
	b.checkLabels("funnel form")
	b.do(chromedp.SetValue(chromedp.CSS("#ff-title"), "Activation"),
		chromedp.SetValue(chromedp.CSS("#ff-step-1"), `event:"Signed up"`),
		chromedp.SetValue(chromedp.CSS("#ff-step-2"), `event:"Created project"`),
		chromedp.SetValue(chromedp.CSS("#ff-step-3"), `event:"Paid"`))
	b.click(`[...document.querySelectorAll(".chart-form button")].find(x => x.textContent === "Preview").click()`)
	b.mustUntil(`document.querySelectorAll(".preview .funnel-step").length === 3`)
	b.screenshot("charts-funnel-form")
	b.click(`document.querySelector(".chart-form button.primary").click()`)
	b.mustUntil(`location.pathname === "/p/my-saas/charts" && document.querySelectorAll(".board-card .funnel-step").length === 3`)
	stats := get(b, chromedp.Evaluate[string](`document.querySelectorAll(".board-card .funnel-stats")[1].textContent`))
	if !strings.Contains(stats, "4 users") || !strings.Contains(stats, "67 %") && !strings.Contains(stats, "66.7 %") || !strings.Contains(stats, "median 1 h 35 min") {
		t.Errorf("step 2: %q", stats)
	}
	// The board, screenshotted light, dark and on a phone.
	b.screenshot("charts-board-light")
	b.colorScheme("dark")
	b.screenshot("charts-board-dark")
	b.colorScheme("light")
	b.do(chromedp.EmulateViewport(390, 844))
	b.do(chromedp.Navigate(m.URL() + "/p/my-saas/charts?range=7d"))
	if w := get(b, chromedp.Evaluate[int](`document.documentElement.scrollWidth - window.innerWidth`)); w > 0 {
		t.Errorf("the board scrolls sideways by %d px on a phone", w)
	}
	b.screenshot("charts-board-phone")
	b.do(chromedp.EmulateViewport(1280, 900))

	b.click(`document.querySelectorAll(".board-card .funnel-stats")[1].querySelector("a").click()`)
	b.mustUntil(`location.pathname.endsWith("/dropoff") && document.querySelectorAll(".dropped-users a").length === 2`)
	users := get(b, chromedp.Evaluate[string](`[...document.querySelectorAll(".dropped-users a")].map(a => a.getAttribute("href")).sort().join(" ")`))
	if users != "/p/my-saas/users/cy /p/my-saas/users/dee" {
		t.Errorf("dropped after step 2: %s", users)
	}
	b.screenshot("charts-dropoff")
}
