/* Tidings ls.js: LogSnag's browser command queue (window.lsq / window.ls), sending to
   the Tidings server this script is loaded from. No dependencies, no cookies.
   Commands: setConfig(token, project[, options]), setUserId(id), clearUserId(),
   setDebug(flag), track(options), identify(options). */
(function (w, d) {
  "use strict";
  if (w.lsi) return; // loaded twice: the first one runs the queue
  w.lsi = true;

  var me = d.currentScript || d.getElementById("logsnag-script");
  // The API is where this script came from (a path prefix behind a proxy included).
  var base = me && me.src ? me.src.replace(/\/(web\/)?ls\.js([?#].*)?$/, "") : "";
  var KEY = "tidings:user_id";
  var HELD = 100; // commands kept until setConfig; more are dropped
  var BATCH = 20; // page views per POST /v1/page
  var FLUSH = 2000; // ms between a page view and its send
  var FIELDS = ["channel", "event", "description", "icon", "notify", "tags", "parser", "user_id", "timestamp"];

  var cfg = null, debug = false, held = [], views = [], timer = 0, lastPath = "", lastURL = "";
  // gate: "open" sends; "wait" holds (GPC: asking the project); "shut" sends nothing.
  var gate = "open", waiting = [];
  var uid = store();

  function store(v) {
    try {
      if (v === undefined) return w.localStorage.getItem(KEY);
      if (v === null) w.localStorage.removeItem(KEY);
      else w.localStorage.setItem(KEY, v);
    } catch (e) { /* storage refused (private mode, sandbox): the id lives for this page */ }
    return null;
  }

  function log() {
    if (debug) console.log.apply(console, ["[tidings]"].concat([].slice.call(arguments)));
  }

  function answer(path, status, body) {
    log(path, "←", status, body);
    if (status >= 400 || !status) {
      console.warn("[tidings] " + path + " failed (" + (status || "network") + "): " +
        (body && (body.message || body.detail || body.title) || body || ""));
    }
  }

  // post sends body; a network error or a 5xx is tried once more, a 4xx never.
  function post(path, body, retry) {
    if (gate === "shut") return;
    if (gate === "wait") {
      if (waiting.length < HELD) waiting.push([path, body]);
      return;
    }
    var json = JSON.stringify(body);
    var size = w.TextEncoder ? new TextEncoder().encode(json).length : json.length * 3;
    log(path, "→", body);
    fetch(cfg.host + path, {
      method: "POST", body: json, credentials: "omit", mode: "cors",
      keepalive: size < 60000, // leaving the page does not cancel it (64 KiB at most)
      headers: { "Content-Type": "application/json", Authorization: "Bearer " + cfg.token }
    }).then(function (r) {
      return r.text().then(function (t) {
        var j = t;
        try { j = JSON.parse(t); } catch (e) { /* not JSON */ }
        if (r.status >= 500 && !retry) return again(path, body);
        answer(path, r.status, j);
      });
    }, function (e) {
      if (!retry) return again(path, body);
      answer(path, 0, String(e));
    });
  }

  function again(path, body) {
    setTimeout(function () { post(path, body, true); }, 3000);
  }

  // clean keeps of a URL's query string only its utm_* parameters: query strings carry
  // emails, tokens and reset codes more often than anyone intends.
  function clean(search) {
    var kept = search.replace(/^\?/, "").split("&").filter(function (kv) {
      return /^utm_/i.test(kv);
    });
    return kept.length ? "?" + kept.join("&") : "";
  }

  function here() {
    var l = w.location, hash = l.hash.indexOf("#/") === 0 ? l.hash : "";
    return l.pathname + clean(l.search) + hash;
  }

  function referrer(r) {
    var m = /^(https?:\/\/[^?#]*)(\?[^#]*)?/.exec(r || "");
    return m ? m[1] + clean(m[2] || "") : "";
  }

  // view records the page now shown, once a user id and a project are known.
  function view(force) {
    if (!cfg || !uid || cfg.pageViews === false || gate === "shut") return;
    var path = here();
    if (path === lastPath && !force) return;
    views.push({
      user_id: uid, path: path, title: d.title,
      referrer: lastURL ? referrer(lastURL) : referrer(d.referrer),
      timestamp: Date.now() / 1000
    });
    lastPath = path;
    lastURL = w.location.href;
    if (views.length > BATCH * 5) views.shift(); // a page that navigates in a loop keeps a bounded queue
    if (views.length > BATCH) flush(); // a full batch, the newest kept back
    else if (!timer) timer = setTimeout(flush, FLUSH);
  }

  // title follows the page's title into its view while the view waits to be sent: a
  // single-page app sets it after it changes the address (and, back or forward, before
  // this script hears of it, which is why the title is followed, not read at the end).
  function title() {
    var v = views[views.length - 1];
    if (v && v.path === here()) v.title = d.title;
  }
  if (w.MutationObserver && d.head) new MutationObserver(title).observe(d.head, { childList: true, subtree: true, characterData: true });

  // flush sends the queued views. From the timer, a view under a second old waits for
  // the next send: an app sets the title after it changes the address.
  function flush(e) {
    clearTimeout(timer);
    timer = 0;
    if (!views.length || !cfg) return;
    var last = views[views.length - 1], keep = null;
    if (!e && Date.now() / 1000 - last.timestamp < 1) {
      keep = views.pop();
      timer = setTimeout(flush, FLUSH);
    }
    title();
    views.forEach(function (v) { // optional: left out when empty
      if (!v.title) delete v.title;
      if (!v.referrer) delete v.referrer;
    });
    while (views.length) post("/v1/page", { project: cfg.project, views: views.splice(0, BATCH) });
    if (keep) views.push(keep);
  }

  function user(o) {
    var id = o.user_id != null ? o.user_id : o.userId != null ? o.userId : uid;
    return id == null || id === "" ? null : String(id);
  }

  var run = {
    setConfig: function (token, project, options) {
      var o = options || {};
      var first = !cfg;
      cfg = {
        token: token, project: project, pageViews: o.pageViews,
        channel: o.channel || "events", host: (o.host || base || w.location.origin).replace(/\/$/, "")
      };
      if (first && w.navigator.globalPrivacyControl === true) gpc();
      var h = held;
      held = [];
      h.forEach(exec);
      view();
    },
    setUserId: function (id) {
      if (id == null || id === "") return run.clearUserId();
      if (String(id) === uid) return view();
      flush(true);
      uid = String(id);
      store(uid);
      view(true);
    },
    clearUserId: function () {
      flush(true);
      uid = null;
      store(null);
    },
    setDebug: function (flag) {
      debug = flag !== false;
    },
    track: function (o) {
      o = o || {};
      var b = { project: cfg.project };
      for (var k in o) {
        var f = k === "userId" ? "user_id" : k;
        if (o[k] == null) continue;
        if (FIELDS.indexOf(f) < 0) console.warn("[tidings] track: ignored unknown option " + k);
        else b[f] = o[k];
      }
      if (!b.channel) b.channel = cfg.channel;
      var id = user(o);
      delete b.user_id;
      if (id) b.user_id = id;
      var ts = b.timestamp; // a Date (of any frame) becomes unix seconds
      if (ts && typeof ts.getTime === "function") b.timestamp = ts.getTime() / 1000;
      post("/v1/log", b);
    },
    identify: function (o) {
      o = o || {};
      var id = user(o);
      if (!id) return console.warn("[tidings] identify: no user id (call setUserId first)");
      post("/v1/identify", { project: cfg.project, user_id: id, properties: o.properties || {} });
    }
  };

  function exec(args) {
    var name = args[0], f = Object.prototype.hasOwnProperty.call(run, name) && run[name];
    if (!f) return console.warn("[tidings] unknown command " + name);
    if (!cfg && (name === "track" || name === "identify")) {
      if (held.length < HELD) held.push(args);
      return;
    }
    try {
      f.apply(null, [].slice.call(args, 1));
    } catch (e) {
      console.warn("[tidings] " + name + ": " + e);
    }
  }

  // gpc: the visitor asks not to be tracked. Unless the project says it ignores GPC,
  // nothing is sent for this page.
  function gpc() {
    gate = "wait";
    fetch(cfg.host + "/v1/page/settings?project=" + encodeURIComponent(cfg.project), {
      credentials: "omit", mode: "cors", headers: { Authorization: "Bearer " + cfg.token }
    }).then(function (r) { return r.ok ? r.json() : {}; }).then(function (s) {
      return s && s.ignore_gpc === true;
    }, function () { return false; }).then(function (ignore) {
      var q = waiting;
      waiting = [];
      gate = ignore ? "open" : "shut";
      log("Global Privacy Control:", ignore ? "the project ignores it, sending" : "sending nothing on this page");
      if (ignore) q.forEach(function (p) { post(p[0], p[1]); });
      else views = [];
    });
  }

  function tags(el) {
    var t = {}, n = 0;
    [].forEach.call(el.attributes, function (a) {
      if (a.name.indexOf("data-tag-") !== 0) return;
      var k = a.name.slice(9).toLowerCase().replace(/[^a-z0-9]+/g, "-").replace(/^-+|-+$/g, "");
      var v = a.value;
      if (!k) return;
      t[k] = v === "true" ? true : v === "false" ? false : /^-?(0|[1-9]\d{0,14})(\.\d+)?$/.test(v) ? Number(v) : v;
      n++;
    });
    return n ? t : undefined;
  }

  // Clicks on elements with data-event are tracked (capture: an app that stops the
  // click's propagation does not hide it).
  d.addEventListener("click", function (e) {
    var el = e.target && e.target.closest ? e.target.closest("[data-event]") : null;
    if (!el) return;
    var notify = el.getAttribute("data-notify");
    exec(["track", {
      event: el.getAttribute("data-event"), channel: el.getAttribute("data-channel"),
      icon: el.getAttribute("data-icon"), description: el.getAttribute("data-description"),
      notify: notify === null ? null : notify !== "false", tags: tags(el)
    }]);
  }, true);

  ["pushState", "replaceState"].forEach(function (m) {
    var orig = w.history[m];
    w.history[m] = function () {
      var r = orig.apply(this, arguments);
      view();
      return r;
    };
  });
  w.addEventListener("popstate", function () { view(); });
  w.addEventListener("pageshow", function (e) {
    if (e.persisted) view(true); // back from the back/forward cache: a new view of this page
  });
  w.addEventListener("pagehide", flush);
  d.addEventListener("visibilitychange", function () {
    if (d.visibilityState === "hidden") flush(true);
  });

  // Replay what was queued, then run commands at once, pushed onto lsq or called.
  var queued = w.lsq || [];
  var live = [];
  live.push = function () {
    [].forEach.call(arguments, exec);
    return 0;
  };
  w.lsq = live;
  w.ls = function () { exec(arguments); };
  [].forEach.call(queued, exec);
})(window, document);
