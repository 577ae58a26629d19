package main

import (
	"github.com/chromedp/chromedp"
)

// The phone checks of every page: nothing wider than the screen, and nothing to tap
// smaller than 24×24 px (WCAG 2.2's 2.5.8, with its one exception that matters here: a
// link inside a sentence, whose size is its line's).

// targetCheck lists the visible things to click or tap smaller than 24×24 px, each as
// "tag.class 'text' W×H". A checkbox or radio inside its label counts as the label,
// which is what a thumb hits; a link stretched over its card, as the card.
const targetCheck = `(() => {
  const inSentence = (el) => {
    const cs = getComputedStyle(el);
    if (el.tagName !== "A" || cs.display !== "inline") return false;
    for (let p = el.parentElement; p; p = p.parentElement) {
      const d = getComputedStyle(p).display;
      if (d === "inline") continue;
      const own = [...p.childNodes].filter((n) => n !== el && !n.contains?.(el)).map((n) => n.textContent).join("").trim();
      return own.length > 0;
    }
    return false;
  };
  const bad = [];
  const sel = "a[href], button, summary, select, input:not([type=hidden]), textarea, [role=button], [tabindex]:not([tabindex='-1'])";
  for (const el of document.querySelectorAll(sel)) {
    if (el.closest("[hidden], .sr, .skip, details:not([open]) > :not(summary)")) continue;
    if (el.matches("main[tabindex]")) continue;
    const cs = getComputedStyle(el);
    if (cs.display === "none" || cs.visibility === "hidden" || +cs.opacity === 0) continue;
    let target = el;
    if ((el.type === "checkbox" || el.type === "radio") && el.closest("label")) target = el.closest("label");
    // A stretched link (its ::after laid over its card) is as large as the card.
    const after = getComputedStyle(el, "::after");
    if (after.content !== "none" && after.position === "absolute") {
      for (let p = el.parentElement; p; p = p.parentElement) if (getComputedStyle(p).position !== "static") { target = p; break; }
    }
    const r = target.getBoundingClientRect();
    if (r.width === 0 && r.height === 0) continue;
    if (inSentence(el)) continue;
    if (r.width < 23.5 || r.height < 23.5) {
      bad.push(el.tagName.toLowerCase() + "." + [...el.classList].join(".") + " '" + (el.textContent || el.value || el.name || "").trim().slice(0, 30) + "' " + Math.round(r.width) + "×" + Math.round(r.height));
    }
  }
  return bad;
})()`

// fits checks the page on screen at the viewport's width: no sideways scroll, and no
// target too small to tap.
func (b *browser) fits(page string, width int64) {
	b.t.Helper()
	if w := get(b, chromedp.Evaluate[int](`document.documentElement.scrollWidth - window.innerWidth`)); w > 0 {
		b.t.Errorf("%s scrolls sideways by %d px at %d px", page, w, width)
	}
	if small := get(b, chromedp.Evaluate[[]string](targetCheck)); len(small) > 0 {
		b.t.Errorf("%s at %d px: tap targets smaller than 24×24 px: %v", page, width, small)
	}
}

// assess checks the page on screen against axe-core (src: axeSource) and the contrast
// check; what is wrong is reported as page (label): ….
func (b *browser) assess(page, label, src string) {
	b.t.Helper()
	if bad := get(b, chromedp.Evaluate[[]string](contrastCheck)); len(bad) > 0 {
		b.t.Errorf("%s (%s): text below 4.5:1 contrast (3:1 when large): %v", page, label, bad)
	}
	for _, v := range b.axe(src) {
		b.t.Errorf("%s (%s): axe-core: %s", page, label, v)
	}
}
