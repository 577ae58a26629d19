// The Tidings service worker makes the dashboard installable and will carry push
// notifications. It caches nothing: the feed must always be live.
self.addEventListener("install", function () { self.skipWaiting(); });
self.addEventListener("activate", function (e) { e.waitUntil(self.clients.claim()); });
self.addEventListener("fetch", function () {});
