// The live view's page: shows the tab's frames and forwards input. It
// loads nothing from other hosts (no telegram-web-app.js): Telegram's
// launch parameters are read from the URL fragment, which no server sees.
"use strict";
(function () {
  const session = document.querySelector('meta[name="lv-session"]').content;
  const needsAuth = document.querySelector('meta[name="lv-auth"]').content === "initdata";
  const $ = (id) => document.getElementById(id);
  const screen = $("screen"), status = $("status"), host = $("host"), urlLine = $("url"), text = $("text");
  const launch = new URLSearchParams(location.hash.slice(1));
  history.replaceState(null, "", location.pathname); // the fragment carries initData: keep it out of history
  let seq = 0, ended = false, objectURL = "";

  // Telegram's theme, when opened as a Mini App.
  try {
    const theme = JSON.parse(launch.get("tgWebAppThemeParams") || "{}");
    const vars = { bg_color: "--bg", text_color: "--text", hint_color: "--hint", secondary_bg_color: "--secondary-bg",
      button_color: "--button", button_text_color: "--button-text", destructive_text_color: "--danger" };
    if (theme.bg_color && !theme.secondary_bg_color) theme.secondary_bg_color = theme.bg_color; // an older client's theme
    for (const [k, v] of Object.entries(vars)) {
      if (typeof theme[k] === "string" && /^#[0-9a-fA-F]{3,8}$/.test(theme[k])) {
        document.documentElement.style.setProperty(v, theme[k]);
      }
    }
  } catch (e) { /* no theme: the defaults */ }

  function post(path, body, type) {
    return fetch("../s/" + path, { method: "POST", headers: { "X-Live-Session": session, "Content-Type": type || "application/json" },
      body: body, credentials: "omit", cache: "no-store" });
  }
  function end(msg) {
    ended = true;
    document.body.classList.add("ended");
    status.textContent = msg;
  }
  // Inputs go one after another, in order: a tap that focuses a field must
  // land before the text typed into it.
  let queue = Promise.resolve();
  function send(input) {
    queue = queue.then(() => {
      if (ended) return;
      return post("input", JSON.stringify(input)).then((r) => {
        if (r.status === 404) end("This live view has ended.");
      }).catch(() => {});
    });
    return queue;
  }

  function showURL(raw) {
    let u;
    try { u = new URL(decodeURIComponent(raw)); } catch (e) { host.textContent = raw || "…"; host.className = ""; return; }
    host.textContent = u.host || u.protocol;
    host.className = u.protocol === "https:" ? "secure" : (u.protocol === "http:" ? "insecure" : "");
    urlLine.textContent = u.href;
  }

  async function frames() {
    while (!ended) {
      let r;
      try {
        r = await fetch("../s/frame?after=" + seq, { headers: { "X-Live-Session": session }, credentials: "omit", cache: "no-store" });
      } catch (e) { await new Promise((ok) => setTimeout(ok, 1000)); continue; }
      if (r.status === 404) { end("This live view has ended."); return; }
      if (r.status === 204) continue;
      if (r.status !== 200) { status.textContent = "The browser tab cannot be reached; retrying…"; await new Promise((ok) => setTimeout(ok, 2000)); continue; }
      seq = Number(r.headers.get("X-Frame-Seq")) || seq;
      screen.dataset.w = r.headers.get("X-Frame-Width") || "";
      showURL(r.headers.get("X-Page-Url") || "");
      const blob = await r.blob();
      const next = URL.createObjectURL(blob);
      screen.src = next;
      if (objectURL) URL.revokeObjectURL(objectURL);
      objectURL = next;
      status.textContent = "";
    }
  }

  // Taps and drags on the frame: a short move is a tap, a longer one scrolls.
  let down = null;
  screen.addEventListener("pointerdown", (e) => { down = { x: e.clientX, y: e.clientY }; e.preventDefault(); });
  screen.addEventListener("pointerup", (e) => {
    if (!down) return;
    const box = screen.getBoundingClientRect();
    const dx = e.clientX - down.x, dy = e.clientY - down.y;
    const fx = (down.x - box.left) / box.width, fy = (down.y - box.top) / box.height;
    down = null;
    if (Math.hypot(dx, dy) < 10) send({ kind: "tap", x: fx, y: fy });
    else send({ kind: "scroll", x: fx, y: fy, dx: -dx / box.width, dy: -dy / box.height });
  });
  screen.addEventListener("wheel", (e) => {
    e.preventDefault();
    const box = screen.getBoundingClientRect();
    send({ kind: "scroll", x: (e.clientX - box.left) / box.width, y: (e.clientY - box.top) / box.height,
      dx: e.deltaX / box.width, dy: e.deltaY / box.height });
  }, { passive: false });

  function typeText(thenEnter) {
    const t = text.value;
    text.value = "";
    if (t) send({ kind: "text", text: t });
    if (thenEnter) send({ kind: "key", key: "Enter" });
  }
  $("typing").addEventListener("submit", (e) => { e.preventDefault(); typeText(true); });
  $("insert").addEventListener("click", () => typeText(false));
  $("bksp").addEventListener("click", () => send({ kind: "key", key: "Backspace" }));
  $("back").addEventListener("click", () => send({ kind: "back" }));
  $("hide").addEventListener("change", (e) => { text.type = e.target.checked ? "password" : "text"; });
  $("done").addEventListener("click", () => {
    queue.then(() => post("done", "")).finally(() => end("Done: the bot goes on from here. You can close this."));
  });

  async function start() {
    if (needsAuth) {
      const initData = launch.get("tgWebAppData") || "";
      const r = await post("auth", initData, "text/plain").catch(() => null);
      if (!r || r.status !== 204) { end("This link is not for you, or it has expired."); return; }
    }
    frames();
  }
  start();
})();
