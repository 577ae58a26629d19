// Tidings dashboard: live feed and insights over server-sent events, relative times,
// copy buttons, confirmations. No framework, no build step; loaded with defer.
"use strict";

(function () {
  // Relative times: "5 min ago", refreshed; the exact time stays in the title.
  function rel(t) {
    var d = (Date.now() - t.getTime()) / 1000;
    if (d < 0) return "in the future";
    if (d < 60) return "just now";
    if (d < 3600) return Math.floor(d / 60) + " min ago";
    if (d < 86400) return Math.floor(d / 3600) + " h ago";
    if (d < 30 * 86400) return Math.floor(d / 86400) + " d ago";
    return t.toLocaleDateString();
  }
  function refreshTimes(root) {
    (root || document).querySelectorAll("time[datetime]").forEach(function (el) {
      if (el.closest(".meta")) return; // exact times stay exact
      el.textContent = rel(new Date(el.getAttribute("datetime")));
    });
  }
  refreshTimes();
  setInterval(refreshTimes, 30000);

  // Copy buttons: data-copy names the element whose text is copied.
  document.addEventListener("click", function (e) {
    var b = e.target.closest("[data-copy]");
    if (!b) return;
    var el = document.getElementById(b.getAttribute("data-copy"));
    if (!el || !navigator.clipboard) return;
    navigator.clipboard.writeText(el.textContent.trim()).then(function () {
      var old = b.textContent;
      b.textContent = "Copied";
      setTimeout(function () { b.textContent = old; }, 1500);
    });
  });

  // Forms that destroy something ask first.
  document.addEventListener("submit", function (e) {
    var msg = e.target.getAttribute("data-confirm");
    if (msg && !window.confirm(msg)) e.preventDefault();
  });

  // The sidebar folds away on phones.
  var toggle = document.querySelector(".menu-toggle");
  if (toggle) {
    toggle.addEventListener("click", function () {
      var open = document.body.classList.toggle("sidebar-open");
      toggle.setAttribute("aria-expanded", open ? "true" : "false");
    });
  }

  // A live badge shows while a stream is connected; EventSource reconnects by itself.
  function live(root, es) {
    var badge = root.querySelector(".live");
    es.addEventListener("open", function () { root.setAttribute("data-live", "on"); if (badge) badge.hidden = false; });
    es.addEventListener("error", function () { root.removeAttribute("data-live"); if (badge) badge.hidden = true; });
  }

  function fragment(html) {
    var t = document.createElement("template");
    t.innerHTML = html;
    return t.content.firstElementChild;
  }

  // Live feed: new events at the top; a marker counts them while the reader is scrolled down.
  var feed = document.querySelector(".feed[data-stream]");
  if (feed) {
    var list = feed.querySelector(".events");
    var marker = feed.querySelector(".new-marker");
    var unseen = 0;
    marker.addEventListener("click", function () {
      window.scrollTo({ top: 0, behavior: "smooth" });
    });
    window.addEventListener("scroll", function () {
      if (window.scrollY < 80 && unseen) { unseen = 0; marker.hidden = true; }
    }, { passive: true });
    var es = new EventSource(feed.getAttribute("data-stream"));
    live(feed, es);
    endings(feed, es);
    es.addEventListener("event", function (e) {
      var card = fragment(e.data);
      if (!card || document.getElementById(card.id)) return;
      var empty = feed.querySelector(".empty");
      if (empty) empty.remove();
      card.classList.add("fresh");
      refreshTimes(card);
      // Newest first by ID: events of one batch may arrive out of order.
      var id = card.getAttribute("data-id"), next = list.firstElementChild;
      while (next && next.getAttribute("data-id") > id) next = next.nextElementSibling;
      list.insertBefore(card, next);
      if (window.scrollY > 80) {
        unseen++;
        marker.textContent = unseen + " new ↑";
        marker.hidden = false;
      }
    });
  }

  // The server may end a stream: "reload" after more missed events than a reconnect
  // replays; "end" when this session signed out (reload shows the sign-in page) or
  // opened too many live views (this one stops, instead of pushing out another).
  function endings(root, es) {
    es.addEventListener("reload", function () { es.close(); window.location.reload(); });
    es.addEventListener("end", function (e) {
      es.close();
      if (e.data === "signed-out") { window.location.reload(); return; }
      root.removeAttribute("data-live");
      var badge = root.querySelector(".live");
      if (badge) badge.hidden = true;
      var note = root.querySelector(e.data === "behind" ? ".stream-behind" : ".stream-note");
      if (note) note.hidden = false;
    });
  }

  // Live insights: a changed card replaces the old one; a new one joins the grid.
  var board = document.querySelector(".insights[data-stream]");
  if (board) {
    var grid = board.querySelector(".grid");
    var src = new EventSource(board.getAttribute("data-stream"));
    live(board, src);
    endings(board, src);
    src.addEventListener("insight", function (e) {
      var card = fragment(e.data);
      if (!card) return;
      var empty = board.querySelector(".empty");
      if (empty) empty.remove();
      card.classList.add("fresh");
      refreshTimes(card);
      var old = document.getElementById(card.id);
      if (old) old.replaceWith(card); else grid.appendChild(card);
    });
  }

  if ("serviceWorker" in navigator) {
    navigator.serviceWorker.register("/sw.js").catch(function () {});
  }
})();
