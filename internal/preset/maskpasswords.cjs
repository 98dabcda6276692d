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

// mask adds the script to target's utility world: run now in the document
// there is, and in every document it loads. A CDP session's scripts last as
// long as the session, which lasts as long as its target.
async function mask(cdp, worldName) {
  await cdp.send("Page.enable");
  await cdp.send("Page.addScriptToEvaluateOnNewDocument", { source, worldName, runImmediately: true });
}

exports.default = async ({ page }) => {
  // Playwright names a page's utility world after the page's id; the
  // client's page object carries the same id.
  const guid = page._guid;
  if (typeof guid !== "string" || guid === "")
    throw new Error("volcanicbot cannot mask password fields: this Playwright does not name its page (no _guid)");
  const worldName = "__playwright_utility_world_" + guid;
  const context = page.context();
  await mask(await context.newCDPSession(page), worldName);
  // A frame of another site runs in a process of its own, a target of its
  // own with the same world name: it gets the script when it attaches and
  // whenever it loads a document in a new process. A frame in the page's
  // process has no session of its own (newCDPSession refuses it): the
  // page's script covers it.
  const frame = async (f) => {
    if (f === page.mainFrame())
      return;
    let cdp;
    try {
      cdp = await context.newCDPSession(f);
    } catch {
      return;
    }
    await mask(cdp, worldName).catch(() => {});
  };
  page.on("frameattached", frame);
  page.on("framenavigated", frame);
};
