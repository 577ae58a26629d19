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

  // Settings → Notifications: the time zone defaults to the browser's.
  var zone = document.querySelector("[data-default-zone]");
  if (zone && !zone.value && window.Intl) {
    zone.value = Intl.DateTimeFormat().resolvedOptions().timeZone || "";
  }

  // Settings → Devices: subscribe this browser with the server's VAPID key.
  var enable = document.getElementById("enable-button");
  if (enable) {
    var status = document.querySelector(".push-status");
    var say = function (msg, bad) {
      status.hidden = false;
      status.textContent = msg;
      status.classList.toggle("error-text", !!bad);
    };
    var keyBytes = function (b64) {
      var s = (b64 + "===".slice((b64.length + 3) % 4)).replace(/-/g, "+").replace(/_/g, "/");
      var raw = atob(s), out = new Uint8Array(raw.length);
      for (var i = 0; i < raw.length; i++) out[i] = raw.charCodeAt(i);
      return out;
    };
    var guess = function () {
      var ua = navigator.userAgent;
      if (/iPhone/.test(ua)) return "iPhone";
      if (/iPad/.test(ua)) return "iPad";
      if (/Android/.test(ua)) return "Android phone";
      if (/Mac OS X/.test(ua)) return "Mac";
      if (/Windows/.test(ua)) return "Windows PC";
      return "This computer";
    };
    enable.addEventListener("click", function () {
      if (!("serviceWorker" in navigator) || !("PushManager" in window) || !("Notification" in window)) {
        say("This browser cannot receive push notifications here. On an iPhone, add Tidings to the home screen first (see below).", true);
        document.getElementById("guide-iphone").open = true;
        return;
      }
      enable.disabled = true;
      say("Asking for permission…");
      var reg;
      navigator.serviceWorker.register("/sw.js").then(function () { return navigator.serviceWorker.ready; })
        .then(function (r) { reg = r; return Notification.requestPermission(); })
        .then(function (perm) {
          if (perm !== "granted") throw { denied: true };
          return fetch("/push/vapid-key").then(function (res) { return res.json(); });
        })
        .then(function (k) {
          return reg.pushManager.subscribe({ userVisibleOnly: true, applicationServerKey: keyBytes(k.key) });
        })
        .then(function (sub) {
          var body = sub.toJSON();
          body.name = document.getElementById("device-name").value.trim() || guess();
          return fetch("/push/subscriptions", { method: "POST", headers: { "Content-Type": "application/json" },
            credentials: "same-origin", body: JSON.stringify(body) });
        })
        .then(function (res) {
          if (!res.ok) return res.json().then(function (p) { throw { message: p.detail || res.statusText }; });
          say("Notifications are on for this device.");
          window.location.reload();
        })
        .catch(function (err) {
          enable.disabled = false;
          if (err && err.denied) {
            say("Notifications are blocked for this site: allow them in the browser's settings, then try again.", true);
            document.getElementById("guide-denied").open = true;
            return;
          }
          say("Could not enable notifications: " + ((err && err.message) || err), true);
        });
    });
  }
})();
