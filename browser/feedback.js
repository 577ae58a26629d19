// Tidings feedback widget (a module script): every element with data-logsnag-feedback
// and data-logsnag-token, -project, -channel (optionally -user-id and -tag-*) opens a
// small dialog whose message is published to that channel as an event. The dialog
// lives in a shadow root: the page's styles do not reach it, and its own stay inside.
// No dependencies, no cookies.

const api = import.meta.url.replace(/\/feedback\/ls\.js([?#].*)?$/, "");
const A = "data-logsnag-";
const done = new WeakSet();

// Sizes in px: rem would follow the page's root font size.
const css = `
:host { all: initial !important; }
dialog {
  --bg: #fff; --fg: #1f2328; --muted: #59636e; --line: #d1d9e0; --field: #fff;
  --accent: #0969da; --on-accent: #fff; --bad: #cf222e; --good: #1a7f37;
  box-sizing: border-box; width: min(448px, calc(100vw - 32px)); max-height: calc(100dvh - 32px);
  margin: auto; padding: 20px; border: 1px solid var(--line); border-radius: 12px;
  background: var(--bg); color: var(--fg); box-shadow: 0 12px 40px rgb(0 0 0 / .25);
  font: 15px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; text-align: start;
}
dialog::backdrop { background: rgb(0 0 0 / .4); }
@media (prefers-color-scheme: dark) {
  dialog {
    --bg: #1c2128; --fg: #e6edf3; --muted: #9198a1; --line: #3d444d; --field: #0d1117;
    --accent: #4493f8; --on-accent: #0d1117; --bad: #f85149; --good: #3fb950;
  }
  dialog::backdrop { background: rgb(0 0 0 / .6); }
}
* { box-sizing: border-box; }
h2 { margin: 0 0 12px; font-size: 18.4px; font-weight: 600; }
label { display: block; margin: 12px 0 4px; font-weight: 500; }
label span { color: var(--muted); font-weight: 400; }
textarea, input {
  display: block; width: 100%; margin: 0; padding: 8px 10px; border: 1px solid var(--line);
  border-radius: 6px; background: var(--field); color: var(--fg); font: inherit;
}
textarea { min-height: 112px; resize: vertical; }
textarea:focus-visible, input:focus-visible, button:focus-visible {
  outline: 2px solid var(--accent); outline-offset: 1px;
}
.status { min-height: 1.45em; margin: 12px 0 0; }
.status.bad { color: var(--bad); }
.status.good { color: var(--good); }
.row { display: flex; gap: 8px; justify-content: flex-end; margin-top: 16px; }
button {
  min-height: 40px; padding: 8px 16px; border: 1px solid var(--line); border-radius: 6px;
  background: transparent; color: var(--fg); font: inherit; font-weight: 500; cursor: pointer;
}
button.send { background: var(--accent); border-color: var(--accent); color: var(--on-accent); }
button:disabled { opacity: .6; cursor: default; }
@media (max-width: 480px) {
  dialog { width: calc(100vw - 16px); padding: 16px; }
  .row button { flex: 1; }
}
`;

const html = `
<dialog aria-labelledby="title">
  <form novalidate>
    <h2 id="title">Send feedback</h2>
    <label for="message">Message</label>
    <textarea id="message" name="message" required maxlength="10000"></textarea>
    <label for="email">Email <span>(optional)</span></label>
    <input id="email" name="email" type="email" autocomplete="email" maxlength="254">
    <p class="status" role="status" aria-live="polite"></p>
    <div class="row">
      <button type="button" class="close">Cancel</button>
      <button type="submit" class="send">Send</button>
    </div>
  </form>
</dialog>`;

let sheet = null;

// styles is the widget's style sheet: a constructed one, which a page's
// Content-Security-Policy without 'unsafe-inline' styles still lets through.
function styles(root) {
  try {
    if (!sheet) {
      sheet = new CSSStyleSheet();
      sheet.replaceSync(css);
    }
    root.adoptedStyleSheets = [sheet];
  } catch {
    const s = document.createElement("style");
    s.textContent = css;
    root.append(s);
  }
}

function tagsOf(el) {
  const tags = {};
  for (const a of el.attributes) {
    if (!a.name.startsWith(A + "tag-")) continue;
    const k = a.name.slice(A.length + 4).toLowerCase().replace(/[^a-z0-9]+/g, "-").replace(/^-+|-+$/g, "");
    if (k) tags[k] = a.value;
  }
  return tags;
}

// open shows the dialog for the feedback element el.
function open(el) {
  const host = document.createElement("tidings-feedback");
  const root = host.attachShadow({ mode: "open" });
  styles(root);
  root.innerHTML = html;
  document.body.append(host);
  const dialog = root.querySelector("dialog");
  const form = root.querySelector("form");
  const message = root.querySelector("#message");
  const email = root.querySelector("#email");
  const status = root.querySelector(".status");
  const send = root.querySelector(".send");
  const close = root.querySelector(".close");

  const say = (text, kind) => {
    status.textContent = text;
    status.className = "status " + (kind || "");
  };
  const focusable = () => [...dialog.querySelectorAll("textarea, input, button")].filter((x) => !x.disabled);

  dialog.addEventListener("keydown", (e) => {
    if (e.key !== "Tab") return;
    // Focus stays in the dialog: past the last field it comes back to the first.
    const f = focusable(), first = f[0], last = f[f.length - 1], at = root.activeElement;
    if (e.shiftKey && (at === first || !dialog.contains(at))) {
      e.preventDefault();
      last.focus();
    } else if (!e.shiftKey && (at === last || !dialog.contains(at))) {
      e.preventDefault();
      first.focus();
    }
  });
  // Escape closes (the dialog's cancel), and so do Cancel and a click on the backdrop.
  dialog.addEventListener("close", () => {
    host.remove();
    el.focus();
  });
  close.addEventListener("click", () => dialog.close());
  dialog.addEventListener("click", (e) => {
    if (e.target === dialog) {
      const r = dialog.getBoundingClientRect();
      if (e.clientX < r.left || e.clientX > r.right || e.clientY < r.top || e.clientY > r.bottom) dialog.close();
    }
  });

  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    const text = message.value.trim();
    if (!text) {
      say("Please write a message first.", "bad");
      message.focus();
      return;
    }
    if (email.value && !email.checkValidity()) {
      say("That email address does not look right.", "bad");
      email.focus();
      return;
    }
    const get = (n) => el.getAttribute(A + n);
    const tags = tagsOf(el);
    if (email.value.trim()) tags.email = email.value.trim();
    const body = {
      project: get("project"), channel: get("channel"), event: "Feedback",
      description: text, icon: "\u{1F4AC}", notify: true, tags,
    };
    if (get("user-id")) body.user_id = get("user-id");
    send.disabled = true;
    say("Sending\u2026");
    try {
      const r = await fetch(api + "/v1/log", {
        method: "POST", credentials: "omit", mode: "cors", body: JSON.stringify(body),
        headers: { "Content-Type": "application/json", Authorization: "Bearer " + get("token") },
      });
      let answer = null;
      try {
        answer = await r.json();
      } catch {
        // not JSON: the status says enough
      }
      if (r.ok) {
        say("Sent. Thank you for your feedback!", "good");
        message.value = "";
        email.value = "";
        close.textContent = "Close";
        close.focus();
      } else {
        say("Not sent: " + ((answer && (answer.message || answer.detail || answer.title)) || "the server answered " + r.status) + ".", "bad");
      }
    } catch (err) {
      say("Not sent: the server could not be reached (" + err.message + ").", "bad");
    } finally {
      send.disabled = false;
    }
  });

  dialog.showModal();
  message.focus();
}

function init(el) {
  if (done.has(el)) return;
  done.add(el);
  if (!(el instanceof HTMLButtonElement)) {
    // Not a button: it becomes one for the keyboard and for screen readers.
    el.setAttribute("role", "button");
    if (!el.hasAttribute("tabindex")) el.tabIndex = 0;
    el.addEventListener("keydown", (e) => {
      if (e.key === "Enter" || e.key === " ") {
        e.preventDefault();
        open(el);
      }
    });
  }
  el.setAttribute("aria-haspopup", "dialog");
  el.addEventListener("click", (e) => {
    e.preventDefault();
    open(el);
  });
}

const scan = (node) => {
  if (node.matches && node.matches("[" + A + "feedback]")) init(node);
  if (node.querySelectorAll) node.querySelectorAll("[" + A + "feedback]").forEach(init);
};

scan(document);
// Buttons a single-page app adds later are picked up too.
new MutationObserver((changes) => {
  for (const c of changes) c.addedNodes.forEach(scan);
}).observe(document.documentElement, { childList: true, subtree: true });
