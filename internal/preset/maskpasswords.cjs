// Written by volcanicbot into its browser folder; @playwright/mcp loads it
// with --config (browser.initPage) for every tab it opens.
//
// It keeps the values of password fields out of page snapshots. Playwright
// builds a snapshot in its own isolated JavaScript world of the page (the
// "utility world", named after the page), reading each field's value there.
// This script runs in that world only, before any page script and in every
// document the tab loads, and makes a password field's value read as a mask
// there. The page's own world, the field itself and the form it posts are
// untouched: typing into the field and signing in work as before.
"use strict";

const bullets = "\u2022".repeat(8);

const source = `(() => {
  if (globalThis.__volcanicPasswordsMasked) return;
  Object.defineProperty(globalThis, "__volcanicPasswordsMasked", { value: true });
  const proto = HTMLInputElement.prototype;
  const value = Object.getOwnPropertyDescriptor(proto, "value");
  const type = Object.getOwnPropertyDescriptor(proto, "type");
  Object.defineProperty(proto, "value", {
    configurable: true,
    enumerable: value.enumerable,
    get() {
      const v = value.get.call(this);
      return v !== "" && String(type.get.call(this)).toLowerCase() === "password" ? ${JSON.stringify(bullets)} : v;
    },
    set(v) { value.set.call(this, v); },
  });
})();`;

// A Session speaks the Chrome DevTools Protocol to one target: the tab, or
// a frame of another site, which Chromium runs in a process of its own, a
// target of its own (the tab's scripts do not reach it).
//
// A Session asks Chromium to attach it to every such frame the target
// opens, paused before the frame's first document: the frame starts only
// when every client attached to it (Playwright and this script) lets it
// go, and this script lets it go once the frame's utility world is masked.
// So no snapshot can see a frame before its mask — whatever the load of
// the machine. Its frames are reached through it ("Target.sendMessageToTarget"),
// which needs nothing of Playwright's connection but the tab's own session.
class Session {
  constructor(send) {
    this.send = send;
    this.children = new Map(); // sessionId → Child
  }

  // event handles an event of this target.
  event(method, params) {
    switch (method) {
      case "Target.attachedToTarget":
        this.attached(params);
        break;
      case "Target.receivedMessageFromTarget":
        this.children.get(params.sessionId)?.message(params.message);
        break;
      case "Target.detachedFromTarget": {
        const child = this.children.get(params.sessionId);
        this.children.delete(params.sessionId);
        child?.detached();
        break;
      }
    }
  }

  // guard masks the target's documents, now and to come, and its frames of
  // other sites, now and to come.
  async guard(worldName) {
    this.worldName = worldName;
    // A target answers in the order it is asked: no need to wait in between.
    // The script runs only in a target whose Page domain is on.
    await Promise.all([
      this.send("Page.enable"),
      this.send("Page.addScriptToEvaluateOnNewDocument", { source, worldName, runImmediately: true }),
      this.send("Target.setAutoAttach", { autoAttach: true, waitForDebuggerOnStart: true, flatten: false }),
    ]);
  }

  // attached guards a frame, then lets it start; anything else (a worker)
  // starts at once and is let go.
  async attached({ sessionId, targetInfo, waitingForDebugger }) {
    const child = new Child(this, sessionId);
    this.children.set(sessionId, child);
    try {
      if (targetInfo.type === "iframe")
        await child.guard(this.worldName);
    } catch (e) {
      // The frame is gone (it navigated away or closed): nothing to mask.
      if (!child.gone)
        process.stderr.write(`volcanicbot: a frame's password mask failed: ${e.message}\n`);
    } finally {
      if (waitingForDebugger)
        await child.send("Runtime.runIfWaitingForDebugger").catch(() => {});
      if (targetInfo.type !== "iframe")
        await this.send("Target.detachFromTarget", { sessionId }).catch(() => {});
    }
  }
}

// A Child is a target reached through its parent's session.
class Child extends Session {
  constructor(parent, sessionId) {
    let lastId = 0;
    super((method, params = {}) => new Promise((resolve, reject) => {
      if (this.gone)
        return reject(new Error("the frame is gone"));
      const id = ++lastId;
      this.pending.set(id, { resolve, reject });
      parent.send("Target.sendMessageToTarget", { sessionId, message: JSON.stringify({ id, method, params }) })
        .catch((e) => {
          this.pending.delete(id);
          reject(e);
        });
    }));
    this.pending = new Map(); // id → the caller waiting for the answer
    this.gone = false;
  }

  message(raw) {
    let m;
    try {
      m = JSON.parse(raw);
    } catch {
      return;
    }
    if (m.id === undefined)
      return this.event(m.method, m.params);
    const call = this.pending.get(m.id);
    this.pending.delete(m.id);
    if (m.error)
      call?.reject(new Error(m.error.message));
    else
      call?.resolve(m.result);
  }

  detached() {
    this.gone = true;
    for (const call of this.pending.values())
      call.reject(new Error("the frame is gone"));
    this.pending.clear();
    for (const child of this.children.values())
      child.detached();
    this.children.clear();
  }
}

exports.default = async ({ page }) => {
  // Playwright names a page's utility world after the page's id; the
  // client's page object carries the same id.
  const guid = page._guid;
  if (typeof guid !== "string" || guid === "")
    throw new Error("volcanicbot cannot mask password fields: this Playwright does not name its page (no _guid)");
  // A CDP session's scripts and attachments last as long as the session,
  // which lasts as long as its tab.
  const cdp = await page.context().newCDPSession(page);
  const tab = new Session((method, params) => cdp.send(method, params));
  for (const method of ["Target.attachedToTarget", "Target.receivedMessageFromTarget", "Target.detachedFromTarget"])
    cdp.on(method, (params) => tab.event(method, params));
  await tab.guard("__playwright_utility_world_" + guid);
};
