// The Tidings service worker makes the dashboard installable and shows push
// notifications. It caches nothing: the feed must always be live.
self.addEventListener("install", function () { self.skipWaiting(); });
self.addEventListener("activate", function (e) { e.waitUntil(self.clients.claim()); });
self.addEventListener("fetch", function () {});

// A push carries {"title","body","url","tag",…} (encrypted by the server, decrypted by
// the browser). The same tag replaces a notification already shown, without a buzz.
self.addEventListener("push", function (e) {
  var m = {};
  try { m = e.data ? e.data.json() : {}; } catch (err) { m = { title: e.data ? e.data.text() : "Tidings" }; }
  e.waitUntil(self.registration.showNotification(m.title || "Tidings", {
    body: m.body || "",
    tag: m.tag || undefined,
    data: { url: m.url || "/" },
    icon: "/static/icon-192.png",
    badge: "/static/icon-192.png",
  }));
});

// A click opens the event's page: in a dashboard tab that is open already (brought to
// the front when the system allows), or in a new one.
self.addEventListener("notificationclick", function (e) {
  e.notification.close();
  var url = new URL((e.notification.data && e.notification.data.url) || "/", self.location.origin).href;
  e.waitUntil(self.clients.matchAll({ type: "window", includeUncontrolled: true }).then(function (tabs) {
    var tab = tabs.filter(function (t) { return new URL(t.url).origin === self.location.origin; })[0];
    if (!tab) return self.clients.openWindow(url);
    var go = tab.navigate ? tab.navigate(url) : Promise.resolve(tab);
    return go.then(function (t) { return (t || tab).focus(); }).catch(function () {
      return tab.navigate ? null : self.clients.openWindow(url);
    });
  }));
});
