// The test harness of TestPasswordMaskBeatsASlowMachine (mask_test.go):
// node maskharness.cjs <playwright-core> <chromium> <mask script> <url> <delay ms>
//
// It opens url in a tab the mask script was given, as @playwright/mcp gives
// it, except that every DevTools answer the script waits for comes <delay>
// ms late (a machine under load), and prints the tab's snapshot as
// @playwright/mcp takes it.
"use strict";

const [core, chromiumPath, script, url, delay] = process.argv.slice(2);
const { chromium } = require(core);
const mask = require(script).default;

const late = (send) => async (...args) => {
  await new Promise((f) => setTimeout(f, Number(delay)));
  return send(...args);
};

(async () => {
  const browser = await chromium.launch({ executablePath: chromiumPath, args: ["--no-sandbox"] });
  try {
    const context = await browser.newContext();
    const page = await context.newPage();
    const slowContext = {
      newCDPSession: async (p) => {
        const cdp = await context.newCDPSession(p);
        return { send: late(cdp.send.bind(cdp)), on: cdp.on.bind(cdp) };
      },
    };
    await mask({ page: new Proxy(page, {
      get(target, key) {
        if (key === "context")
          return () => slowContext;
        const v = target[key];
        return typeof v === "function" ? v.bind(target) : v;
      },
    }) });
    await page.goto(url);
    process.stdout.write(await page.ariaSnapshot({ mode: "ai" }));
  } finally {
    await browser.close();
  }
})().catch((e) => {
  process.stderr.write(String(e && e.stack || e) + "\n");
  process.exit(1);
});
