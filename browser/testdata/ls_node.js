// Runs ls.js (path in argv[2]) in Node with a stand-in for the page: checks what it
// sends for the queued and later commands, page views in batches, and GPC. Exits 1
// with a message on the first difference.
const assert = require("node:assert/strict");
const vm = require("node:vm");
const fs = require("node:fs");
const src = fs.readFileSync(process.argv[2], "utf8");

function page({ gpc = false, settings = {} } = {}) {
  const sent = [], handlers = {}, store = {};
  const on = (name, f) => { (handlers[name] ||= []).push(f); };
  const w = {
    lsq: [], console: { log() {}, warn() {} }, TextEncoder, setTimeout: () => 0, clearTimeout() {},
    fetch(url, init) {
      sent.push({ url, method: init.method || "GET", auth: init.headers.Authorization, body: init.body && JSON.parse(init.body), keepalive: init.keepalive });
      const answer = url.includes("/v1/page/settings") ? settings : {};
      return Promise.resolve({ ok: true, status: 200, json: async () => answer, text: async () => JSON.stringify(answer) });
    },
    document: { currentScript: { src: "https://t.example/base/web/ls.js?v=1" }, title: "Home", referrer: "https://news.example/a?session=1&utm_source=hn",
      head: null, visibilityState: "visible", addEventListener: on, getElementById: () => null },
    location: { pathname: "/", search: "?email=ada%40example.com&utm_campaign=spring", hash: "", href: "https://site.example/?email=ada%40example.com&utm_campaign=spring", origin: "https://site.example" },
    history: { pushState() {}, replaceState() {} },
    navigator: { globalPrivacyControl: gpc },
    localStorage: { getItem: (k) => store[k] ?? null, setItem: (k, v) => { store[k] = v; }, removeItem: (k) => { delete store[k]; } },
    addEventListener: on,
  };
  w.window = w;
  const go = (path) => { w.location.pathname = path; w.location.search = ""; w.location.href = "https://site.example" + path; w.history.pushState({}, "", path); };
  return { w, sent, store, handlers, go, run: () => vm.runInNewContext(src, w) };
}
const settle = () => new Promise((r) => setImmediate(r));

(async () => {
  // Commands queued before the script (track before setConfig too), then run at once.
  let p = page();
  p.w.lsq.push(["track", { channel: "payments", event: "Early" }], ["setConfig", "tok", "my-saas"], ["setUserId", 42],
    ["track", { channel: "payments", event: "Paid", userId: "u-9", typo: 1, timestamp: new Date(1790000000000), notify: null }],
    ["identify", { properties: { plan: "pro" } }]);
  p.run();
  p.w.ls("bogus");
  p.w.ls("toString");
  const logs = p.sent.filter((s) => s.url.endsWith("/v1/log")).map((s) => s.body);
  assert.deepEqual(logs, [
    { project: "my-saas", channel: "payments", event: "Early" }, // sent before setUserId
    { project: "my-saas", channel: "payments", event: "Paid", user_id: "u-9", timestamp: 1790000000 },
  ]);
  assert.equal(p.sent[0].url, "https://t.example/base/v1/log");
  assert.equal(p.sent[0].auth, "Bearer tok");
  assert.deepEqual(p.sent.find((s) => s.url.endsWith("/v1/identify")).body, { project: "my-saas", user_id: "42", properties: { plan: "pro" } });
  assert.equal(p.store["tidings:user_id"], "42");

  // Page views: the first page and 45 routes, in batches of at most 20, query strings
  // cleaned but utm_*.
  for (let i = 0; i < 45; i++) p.go("/p/" + i);
  p.handlers.pagehide.forEach((f) => f({}));
  const batches = p.sent.filter((s) => s.url.endsWith("/v1/page")).map((s) => s.body);
  assert.ok(batches.every((b) => b.project === "my-saas" && b.views.length >= 1 && b.views.length <= 20), JSON.stringify(batches.map((b) => b.views.length)));
  const views = batches.flatMap((b) => b.views);
  assert.equal(views.length, 46);
  assert.equal(views[0].path, "/?utm_campaign=spring");
  assert.equal(views[0].referrer, "https://news.example/a?utm_source=hn");
  assert.equal(views[0].title, "Home");
  assert.equal(views[1].path, "/p/0");
  assert.equal(views[1].referrer, "https://site.example/?utm_campaign=spring");
  assert.ok(views.every((v) => v.user_id === "42" && typeof v.timestamp === "number"));

  // clearUserId: forgotten, and no page view after it.
  const before = p.sent.length;
  p.w.ls("clearUserId");
  p.go("/after");
  p.handlers.pagehide.forEach((f) => f({}));
  assert.equal(p.store["tidings:user_id"], undefined);
  assert.equal(p.sent.length, before);

  // GPC: the project's setting is asked; unless it ignores GPC, nothing else is sent.
  p = page({ gpc: true, settings: { project: "my-saas", ignore_gpc: false } });
  p.w.lsq.push(["setConfig", "tok", "my-saas"], ["setUserId", "u"], ["track", { channel: "payments", event: "E" }]);
  p.run();
  await settle();
  p.go("/next");
  p.handlers.pagehide.forEach((f) => f({}));
  await settle();
  assert.deepEqual(p.sent.map((s) => s.method + " " + s.url), ["GET https://t.example/base/v1/page/settings?project=my-saas"]);
  p = page({ gpc: true, settings: { project: "my-saas", ignore_gpc: true } });
  p.w.lsq.push(["setConfig", "tok", "my-saas"], ["setUserId", "u"], ["track", { channel: "payments", event: "E" }]);
  p.run();
  await settle();
  await settle();
  p.handlers.pagehide.forEach((f) => f({}));
  assert.deepEqual(p.sent.map((s) => s.url.replace("https://t.example/base", "")).sort(), ["/v1/log", "/v1/page", "/v1/page/settings?project=my-saas"]);
  console.log("ok");
})().catch((e) => { console.error(e.message); process.exit(1); });
