// Tidings dashboard: live feed and insights over server-sent events, relative times,
// copy buttons, confirmations. No framework, no build step; loaded with defer.
"use strict";

(function () {
  // Times: the server sends ISO instants; the page shows them in the viewer's time zone.
  // Relative ("5 min ago", refreshed) in lists, exact in .meta; the exact local time is
  // always in the title.
  var exactFmt = window.Intl ? new Intl.DateTimeFormat(undefined, { weekday: "short", year: "numeric", month: "short",
    day: "numeric", hour: "2-digit", minute: "2-digit", second: "2-digit", timeZoneName: "short" }) : null;
  function exact(t) { return exactFmt ? exactFmt.format(t) : t.toString(); }
  // A page view in a journey's fold: its local time of day ("14:03"), with its date
  // when it is not today's (a fold may span days).
  var clockFmt = window.Intl ? new Intl.DateTimeFormat(undefined, { hour: "2-digit", minute: "2-digit" }) : null;
  var dateClockFmt = window.Intl ? new Intl.DateTimeFormat(undefined, { day: "numeric", month: "short", hour: "2-digit", minute: "2-digit" }) : null;
  function clock(t) {
    if (!clockFmt) return t.toTimeString().slice(0, 5);
    return t.toDateString() === new Date().toDateString() ? clockFmt.format(t) : dateClockFmt.format(t);
  }
  function rel(t) {
    var d = (Date.now() - t.getTime()) / 1000;
    if (d < -60) return "in the future";
    if (d < 60) return "just now";
    if (d < 3600) return Math.floor(d / 60) + " min ago";
    if (d < 86400) return Math.floor(d / 3600) + " h ago";
    if (d < 30 * 86400) return Math.floor(d / 86400) + " d ago";
    return t.toLocaleDateString();
  }
  function refreshTimes(root) {
    (root || document).querySelectorAll("time[datetime]").forEach(function (el) {
      var t = new Date(el.getAttribute("datetime"));
      if (isNaN(t)) return;
      el.title = exact(t);
      el.textContent = el.hasAttribute("data-clock") ? clock(t) : el.closest(".meta, [data-exact]") ? exact(t) : rel(t);
    });
  }

  // Day headings in event lists ("Today", "Yesterday", "Mon 16 Nov"), by the viewer's
  // local date of each event's time; redone when live events arrive.
  function dayKey(t) { return t.getFullYear() + "-" + t.getMonth() + "-" + t.getDate(); }
  function dayLabel(t) {
    var now = new Date(), y = new Date(now.getFullYear(), now.getMonth(), now.getDate() - 1);
    if (dayKey(t) === dayKey(now)) return "Today";
    if (dayKey(t) === dayKey(y)) return "Yesterday";
    var o = { weekday: "short", day: "numeric", month: "short" };
    if (t.getFullYear() !== now.getFullYear()) o.year = "numeric";
    return t.toLocaleDateString(undefined, o);
  }
  // A day heading is one level below the page's last heading before the list: h2 under
  // the page's h1, h3 under a section's h2 ("Journey").
  function dayLevel(list) {
    var before = [].filter.call(document.querySelectorAll("h1, h2"), function (h) {
      return h.compareDocumentPosition(list) & Node.DOCUMENT_POSITION_FOLLOWING;
    });
    var prev = before[before.length - 1];
    return prev && prev.tagName === "H2" ? "h3" : "h2";
  }
  function groupDays(list) {
    list.querySelectorAll(":scope > .day").forEach(function (h) { h.remove(); });
    var last = null, level = dayLevel(list);
    // A fold of page views (a profile's journey) is headed by the day of its newest.
    list.querySelectorAll(":scope > article.event, :scope > .views-fold").forEach(function (card) {
      var tm = card.querySelector("header time[datetime], summary time[datetime]");
      if (!tm) return;
      var t = new Date(tm.getAttribute("datetime")), k = dayKey(t);
      if (k === last) return;
      last = k;
      var h = document.createElement(level);
      h.className = "day";
      h.textContent = dayLabel(t);
      list.insertBefore(h, card);
    });
  }

  // Long descriptions are clamped, with "Show more".
  function clamp(root) {
    (root || document).querySelectorAll(".events .ev-desc").forEach(function (d) {
      if (d.hasAttribute("data-clamp")) return;
      d.setAttribute("data-clamp", "");
      if (d.scrollHeight <= 220) return;
      d.classList.add("clamped");
      var b = document.createElement("button");
      b.type = "button";
      b.className = "link show-more";
      b.textContent = "Show more";
      b.setAttribute("aria-expanded", "false");
      b.addEventListener("click", function () {
        var open = !d.classList.toggle("clamped");
        b.textContent = open ? "Show less" : "Show more";
        b.setAttribute("aria-expanded", open ? "true" : "false");
      });
      d.after(b);
    });
  }

  // Insight values: numbers get the viewer's thousands separators and decimal mark,
  // digit for digit (the server's value is exact: no rounding through floats); long
  // values get a smaller size rather than breaking mid-number.
  var sep = { group: ",", decimal: "." };
  if (window.Intl && Intl.NumberFormat.prototype.formatToParts) {
    new Intl.NumberFormat().formatToParts(12345.6).forEach(function (p) {
      if (p.type === "group" || p.type === "decimal") sep[p.type] = p.value;
    });
  }
  function formatNumbers(root) {
    (root || document).querySelectorAll(".card .num:not([data-raw])").forEach(function (el) {
      var raw = el.textContent.trim(), m = raw.match(/^(-?)(\d+)(?:\.(\d+))?$/);
      el.setAttribute("data-raw", raw);
      if (m) {
        var whole = m[2].replace(/\B(?=(\d{3})+(?!\d))/g, sep.group);
        el.textContent = m[1] + whole + (m[3] !== undefined ? sep.decimal + m[3] : "");
      }
      var len = el.parentNode.textContent.length;
      el.parentNode.classList.toggle("long", len > 12);
      el.parentNode.classList.toggle("longer", len > 20);
    });
  }
  formatNumbers();

  document.documentElement.classList.add("js");
  // A select that applies on change (the charts' channel), without its button.
  document.querySelectorAll("select[data-autosubmit]").forEach(function (sel) {
    sel.addEventListener("change", function () { sel.form.submit(); });
  });
  // The viewer's time zone, for what the server draws (charts): kept in a cookie; a
  // page drawn in another zone is drawn again once.
  var viewerZone = window.Intl ? Intl.DateTimeFormat().resolvedOptions().timeZone : "";
  if (viewerZone && document.cookie.indexOf("tz=" + viewerZone) < 0) {
    document.cookie = "tz=" + viewerZone + "; path=/; max-age=31536000; samesite=lax";
    var drawn = document.querySelector("[data-zone]");
    if (drawn && drawn.getAttribute("data-zone") !== viewerZone) window.location.reload();
  }

  function refresh() {
    refreshTimes();
    document.querySelectorAll(".events[data-days]").forEach(groupDays);
  }
  refresh();
  clamp();
  setInterval(refresh, 30000);

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
      // A version already folded under its thread's card (a reconnect replays the
      // last moments) is not shown again.
      if (card.hasAttribute("data-thread") && list.querySelector('.thread-list > li[data-id="' + card.getAttribute("data-id") + '"]')) return;
      feed.querySelectorAll(".empty, .empty-state").forEach(function (el) { el.remove(); });
      card.classList.add("fresh");
      refreshTimes(card);
      // Newest first by ID: events of one batch may arrive out of order.
      var id = card.getAttribute("data-id"), next = list.firstElementChild;
      // A fold of page views older than the new event stops it too.
      while (next && (next.tagName !== "ARTICLE" && !next.classList.contains("views-fold") || next.getAttribute("data-id") > id)) next = next.nextElementSibling;
      list.insertBefore(card, next);
      foldThread(card);
      clamp(card.parentNode);
      if (list.hasAttribute("data-days")) groupDays(list);
      if (window.scrollY > 80) {
        unseen++;
        marker.textContent = unseen + " new ↑";
        marker.hidden = false;
      }
    });
  }

  // Versions of a key (a feed without a search): a new version's card takes the place
  // of the thread's card, which folds under it with the versions before it, and the
  // count goes up. The card that arrives is the newest of its thread by ID, or it is
  // folded into the newer one already shown.
  var maxFolded = 10;
  function foldThread(card) {
    var thread = card.getAttribute("data-thread");
    if (!thread) return;
    var cards = [].filter.call(list.querySelectorAll(":scope > article.event[data-thread]"), function (c) {
      return c.getAttribute("data-thread") === thread;
    });
    if (cards.length < 2) return;
    var latest = cards[0]; // the list is newest first
    var versions = 0, earlier = [];
    cards.forEach(function (c) {
      versions += +(c.getAttribute("data-versions") || 1);
      if (c !== latest) earlier.push(versionItem(c));
      c.querySelectorAll(".thread-list > li").forEach(function (li) { earlier.push(li); });
    });
    earlier.sort(function (a, b) { return a.getAttribute("data-id") < b.getAttribute("data-id") ? 1 : -1; });
    var more = 0;
    cards.forEach(function (c) {
      var m = c.querySelector(".thread-more");
      if (m) more += +(m.getAttribute("data-more") || 0);
    });
    more += Math.max(0, earlier.length - maxFolded);
    earlier = earlier.slice(0, maxFolded);
    cards.forEach(function (c) { if (c !== latest) c.remove(); });
    latest.setAttribute("data-versions", versions);
    var fold = latest.querySelector(".thread");
    if (!fold) {
      fold = document.createElement("details");
      fold.className = "thread";
      var sum = document.createElement("summary"), n = document.createElement("span"), ol = document.createElement("ol");
      n.className = "thread-n";
      sum.append("Updated ", n);
      ol.className = "thread-list";
      fold.append(sum, ol);
      latest.querySelector(".ev-body").appendChild(fold);
    }
    fold.querySelector(".thread-n").textContent = (versions - 1) + (versions === 2 ? " time" : " times");
    var ol2 = fold.querySelector(".thread-list");
    ol2.replaceChildren.apply(ol2, earlier);
    var moreEl = fold.querySelector(".thread-more");
    if (more > 0) {
      if (!moreEl) {
        moreEl = document.createElement("p");
        moreEl.className = "muted small-text thread-more";
        fold.appendChild(moreEl);
      }
      moreEl.setAttribute("data-more", more);
      moreEl.textContent = "… and " + more + " older";
    } else if (moreEl) moreEl.remove();
  }
  // A card as an earlier version: its title linking to its page, its mark and time.
  function versionItem(c) {
    var li = document.createElement("li"), a = document.createElement("a");
    li.setAttribute("data-id", c.getAttribute("data-id"));
    a.href = (c.querySelector(".ev-when") || c.querySelector(".ev-name")).getAttribute("href");
    var name = c.querySelector(".ev-name");
    a.textContent = name.firstChild ? name.firstChild.textContent.trim() : name.textContent;
    li.appendChild(a);
    var prio = c.querySelector("header .prio");
    if (prio) li.append(" ", prio.cloneNode(true));
    var tm = c.querySelector("header time[datetime]");
    if (tm) li.append(" ", tm.cloneNode(true));
    return li;
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
      board.querySelectorAll(".empty, .empty-state").forEach(function (el) { el.remove(); });
      card.classList.add("fresh");
      refreshTimes(card);
      formatNumbers(card);
      var old = document.getElementById(card.id);
      // A new insight joins the last page only: the others end where the next begins.
      if (old) old.replaceWith(card); else if (!board.hasAttribute("data-more")) grid.appendChild(card);
    });
  }

  if ("serviceWorker" in navigator) {
    navigator.serviceWorker.register("/sw.js").catch(function () {});
  }

  // Settings → Notifications: the time zone fields (quiet hours, and each project's
  // digest) default to the browser's zone, which saving a form then keeps.
  if (window.Intl) {
    document.querySelectorAll("[data-default-zone]").forEach(function (zone) {
      if (!zone.value) zone.value = Intl.DateTimeFormat().resolvedOptions().timeZone || "";
    });
  }

  // A row of tabs that scrolls sideways (on a phone) shows the current tab.
  document.querySelectorAll(".tabs").forEach(function (tabs) {
    if (tabs.scrollWidth <= tabs.clientWidth) return;
    var cur = tabs.querySelector("[aria-current]");
    if (cur) tabs.scrollLeft = cur.offsetLeft - tabs.offsetLeft - (tabs.clientWidth - cur.offsetWidth) / 2;
    var edge = function () { tabs.classList.toggle("at-end", tabs.scrollLeft + tabs.clientWidth >= tabs.scrollWidth - 2); };
    tabs.classList.add("scrolls");
    edge();
    tabs.addEventListener("scroll", edge, { passive: true });
  });

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

  // Sign-up: a team name typed as "Acme Inc" becomes its slug, acme-inc, shown as it
  // is typed. (Without this script the field's pattern and title say the rule.)
  var team = document.querySelector('form[action="/signup"] #account');
  if (team) {
    var help = document.getElementById("account-help"), rule = help.cloneNode(true);
    var slug = function (v) {
      return v.toLowerCase().normalize("NFKD").replace(/[\u0300-\u036f]/g, "")
        .replace(/[^a-z0-9]+/g, "-").replace(/^-+|-+$/g, "").slice(0, 64);
    };
    team.removeAttribute("pattern");
    team.addEventListener("input", function () {
      var s = slug(team.value);
      if (team.value && s !== team.value) {
        help.textContent = s ? "Your team’s address will be " + s + "." : "Use letters or digits.";
      } else {
        help.replaceWith(rule);
        help = rule;
        rule = help.cloneNode(true);
      }
    });
    team.form.addEventListener("submit", function () { team.value = slug(team.value) || team.value; });
  }
  // The webhook form: the fields of one chat service (Telegram's chat id, Pushover's
  // keys) are shown only when it is the format picked. Without scripts all are shown,
  // each saying which format it is for.
  var hookForm = document.getElementById("create-webhook");
  if (hookForm) {
    var extras = hookForm.querySelectorAll(".format-extra[data-format]");
    var showExtras = function () {
      var picked = hookForm.querySelector("input[name=format]:checked");
      extras.forEach(function (fs) { fs.hidden = !picked || fs.getAttribute("data-format") !== picked.value; });
    };
    hookForm.querySelectorAll("input[name=format]").forEach(function (r) { r.addEventListener("change", showExtras); });
    showExtras();
  }
  // The inbound hook form: Stripe's user option and the JSON template are shown only
  // for their source. Without scripts all are shown, each saying which source it is for.
  var inForm = document.getElementById("create-hook");
  if (inForm) {
    var sourceExtras = inForm.querySelectorAll(".source-extra[data-source]");
    var showSourceExtras = function () {
      var picked = inForm.querySelector("input[name=source]:checked");
      sourceExtras.forEach(function (fs) { fs.hidden = !picked || fs.getAttribute("data-source") !== picked.value; });
    };
    inForm.querySelectorAll("input[name=source]").forEach(function (r) { r.addEventListener("change", showSourceExtras); });
    showSourceExtras();
  }
  // == PROJECTS ==
  // Settings that save at once (form[data-autosave]): changing a switch, a select or a
  // number posts its form with fetch, the same fields its Save button (hidden, with
  // scripts) would send. The server answers with a redirect to the page, which fetch
  // follows: that page's notice is what the toast says. Refused, or not sent, the
  // control goes back to what is saved and the toast says why.
  var autosaves = document.querySelectorAll("form[data-autosave]");
  if (autosaves.length) {
    var toast = document.querySelector(".toast");
    if (!toast) { // made before any change, so that screen readers know the live region
      toast = document.createElement("p");
      toast.className = "toast";
      toast.setAttribute("role", "status");
      toast.setAttribute("aria-live", "polite");
      document.body.appendChild(toast);
    }
    var toastTimer;
    var toastSay = function (msg, bad) {
      clearTimeout(toastTimer);
      toast.classList.toggle("bad", !!bad);
      toast.textContent = msg;
      toastTimer = setTimeout(function () { toast.textContent = ""; }, bad ? 8000 : 4000);
    };
    var fields = function (form) { return form.querySelectorAll("input:not([type=hidden]), select"); };
    var remember = function (form) {
      fields(form).forEach(function (el) { el.setAttribute("data-saved", el.type === "checkbox" ? String(el.checked) : el.value); });
      // A hint that matters only while its switch is off (the SDK hint) follows it.
      var hint = form.querySelector("[data-off-hint]"), sw = form.querySelector("input[type=checkbox]");
      if (hint && sw) hint.hidden = sw.checked;
    };
    var restore = function (form) {
      fields(form).forEach(function (el) {
        var v = el.getAttribute("data-saved");
        if (el.type === "checkbox") el.checked = v === "true"; else el.value = v;
      });
    };
    var problem = function (html, status) {
      var doc = new DOMParser().parseFromString(html, "text/html");
      var el = doc.querySelector("main .error, .error-card .lead, .error-page .lead");
      return el ? el.textContent.trim() : "the server answered " + status + ".";
    };
    autosaves.forEach(function (form) {
      remember(form);
      var save = function () {
        if (!form.checkValidity()) { form.reportValidity(); return; }
        form.setAttribute("aria-busy", "true");
        fetch(form.action, { method: "POST", body: new URLSearchParams(new FormData(form)), credentials: "same-origin" })
          .then(function (res) {
            return res.text().then(function (html) {
              if (res.redirected && new URL(res.url).pathname === "/login") throw new Error("you are signed out; sign in again.");
              if (!res.ok) throw new Error(problem(html, res.status));
              var notice = new DOMParser().parseFromString(html, "text/html").querySelector(".notice-ok");
              remember(form);
              toastSay(notice ? notice.textContent.trim() : "Saved.");
            });
          })
          .catch(function (err) {
            restore(form);
            remember(form);
            toastSay("Not saved: " + (err instanceof TypeError ? "the server could not be reached." : err.message), true);
          })
          .finally(function () { form.removeAttribute("aria-busy"); });
      };
      form.addEventListener("change", save);
      form.addEventListener("submit", function (e) { e.preventDefault(); save(); });
    });
  }
  // A deletion's confirmation: its button waits for the name typed (the field's
  // pattern says the same without scripts).
  document.querySelectorAll("form[data-confirm-name]").forEach(function (form) {
    var input = form.querySelector("input[name=confirm]"), button = form.querySelector("button[type=submit]");
    var check = function () { button.disabled = input.value.trim() !== form.getAttribute("data-confirm-name"); };
    input.addEventListener("input", check);
    check();
  });

  /* == ROWS == */
  // A card with a secret just made (a token, a webhook's signing secret, a link):
  // scrolled fully into view below the sticky header (its scroll-margin-top) and
  // focused, so that the person and a screen reader start there.
  var created = document.querySelector(".created[tabindex]");
  if (created) {
    var box = created.getBoundingClientRect(), bar = document.querySelector(".top");
    var headerBottom = bar ? bar.getBoundingClientRect().bottom : 0;
    created.focus({ preventScroll: true });
    if (box.top < headerBottom || box.bottom > window.innerHeight) created.scrollIntoView({ block: "start" });
  }
  // == FIRSTRUN ==
  // The getting-started checklist ticks itself: the first event on one of the team's
  // project streams (the server pushes it: no polling), and notifications when this
  // browser has a push subscription (asked of the service worker's registration).
  var gs = document.querySelector(".getting-started");
  if (gs) {
    var tick = function (key, text, href) {
      var step = gs.querySelector('.gs-step[data-step="' + key + '"]');
      if (!step || step.classList.contains("done")) return;
      step.classList.remove("current");
      step.classList.add("done", "ticked");
      step.querySelector(".gs-state").textContent = " (done)";
      step.querySelectorAll(".gs-example, .gs-do").forEach(function (el) { el.remove(); });
      var hint = step.querySelector(".gs-hint");
      hint.textContent = text;
      if (href) {
        var a = document.createElement("a");
        a.href = href;
        a.textContent = "Open the feed";
        hint.append(" ", a);
      }
      var done = gs.querySelectorAll(".gs-step.done").length;
      gs.querySelector(".gs-n").textContent = done;
      gs.querySelector("#gs-bar").value = done;
      var next = gs.querySelector(".gs-step:not(.done)");
      if (next) {
        next.classList.add("current");
        var action = next.querySelector(".gs-do .button-link");
        if (action) action.classList.remove("secondary");
      } else {
        gs.querySelector(".gs-all").hidden = false;
      }
    };
    var streams = (gs.getAttribute("data-streams") || "").split(" ").filter(Boolean);
    var sources = streams.map(function (url) {
      var es = new EventSource(url);
      live(gs, es); // data-live: the page listens (the tests wait for it)
      endings(gs, es);
      es.addEventListener("event", function () {
        sources.forEach(function (s) { s.close(); });
        tick("event", "Your first event arrived.", url.replace(/\/stream$/, ""));
      });
      return es;
    });
    if (gs.querySelector('.gs-step[data-step="push"]:not(.done)') && "serviceWorker" in navigator && "PushManager" in window) {
      navigator.serviceWorker.getRegistration().then(function (reg) { return reg && reg.pushManager.getSubscription(); })
        .then(function (sub) { if (sub) tick("push", "Notifications are on for this device."); })
        .catch(function () {});
    }
  }
})();
