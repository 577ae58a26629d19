// The Tidings service worker makes the dashboard installable and shows push
// notifications. It caches nothing: the feed must always be live.
self.addEventListener("install", function () { self.skipWaiting(); });
self.addEventListener("activate", function (e) { e.waitUntil(self.clients.claim()); });
self.addEventListener("fetch", function () {});

// A push carries {"title","body","url","event_url","tag","priority","actions","ack",
// "press",…} (encrypted by the server, decrypted by the browser). The same tag replaces
// a notification already shown: without a buzz, unless "renotify" (a repeat of an
// urgent event, a new version of a key). min and low arrive silently; urgent stays on
// screen until dismissed.
self.addEventListener("push", function (e) {
  var m = {};
  try { m = e.data ? e.data.json() : {}; } catch (err) { m = { title: e.data ? e.data.text() : "Tidings" }; }
  var opts = {
    body: m.body || "",
    tag: m.tag || undefined,
    data: { url: m.url || "/", event_url: m.event_url || m.url || "/", event_id: m.event_id || "",
      actions: m.actions || [], press: m.press || null },
    icon: "/static/icon-192.png",
    badge: "/static/icon-192.png",
    silent: !!m.silent,
    requireInteraction: !!m.require_interaction,
    // renotify needs a tag: without one the browser refuses the notification.
    renotify: !!(m.renotify && m.tag),
    actions: buttons(m),
  };
  e.waitUntil(self.registration.showNotification(m.title || "Tidings", opts));
});

// buttons are the notification's actions, as many as the platform shows: Acknowledge
// first (what an urgent event asks for), then the event's buttons in order. An id
// action or Acknowledge presses through /push/press and needs the press token; a URL
// action opens its URL (the event page when the server dropped it to fit).
function buttons(m) {
  var max = (self.Notification && self.Notification.maxActions) || 2, out = [];
  if (m.ack && m.press) out.push({ action: "ack", title: "Acknowledge" });
  (m.actions || []).forEach(function (a, i) {
    if (a.id && !m.press) return;
    out.push({ action: a.id ? "id:" + a.id : "url:" + i, title: a.label });
  });
  return out.slice(0, max);
}

// A click on a button presses it (in the background: no window opens) or opens its
// URL; a click on the notification opens its url, or the event's page: in a dashboard
// tab that is open already (brought to the front when the system allows), or in a new one.
self.addEventListener("notificationclick", function (e) {
  var n = e.notification, d = n.data || {};
  n.close();
  if (e.action === "ack" || e.action.indexOf("id:") === 0) {
    e.waitUntil(press(n, d, e.action === "ack" ? "" : e.action.slice(3), e.action === "ack"));
    return;
  }
  var url = d.url || "/";
  if (e.action.indexOf("url:") === 0) {
    var a = (d.actions || [])[+e.action.slice(4)];
    url = (a && a.url) || d.event_url || url;
  }
  e.waitUntil(open(new URL(url, self.location.origin).href));
});

// press records a button's press on the server, authorised by the press token the
// notification carries. If it fails the notification comes back, saying so, and a
// tap on it opens the event's page.
function press(n, d, action, ack) {
  var p = d.press || {};
  return fetch("/push/press", { method: "POST", headers: { "Content-Type": "application/json" }, credentials: "omit",
    body: JSON.stringify({ sub: p.sub || "", event_id: d.event_id || "", token: p.token || "", action: action, ack: ack }) })
    .then(function (res) { if (!res.ok) throw new Error("status " + res.status); })
    .catch(function () {
      return self.registration.showNotification("Not recorded: " + n.title, {
        body: "The press did not reach Tidings. Tap to open the event.", tag: n.tag || undefined,
        data: { url: d.event_url || "/", event_url: d.event_url || "/" }, icon: "/static/icon-192.png",
      });
    });
}

function open(url) {
  return self.clients.matchAll({ type: "window", includeUncontrolled: true }).then(function (tabs) {
    // Another site's URL opens in a new window: a dashboard tab stays where it is.
    if (new URL(url).origin !== self.location.origin) return self.clients.openWindow(url);
    var tab = tabs.filter(function (t) { return new URL(t.url).origin === self.location.origin; })[0];
    if (!tab) return self.clients.openWindow(url);
    var go = tab.navigate ? tab.navigate(url) : Promise.resolve(tab);
    return go.then(function (t) { return (t || tab).focus(); }).catch(function () {
      return tab.navigate ? null : self.clients.openWindow(url);
    });
  });
}
