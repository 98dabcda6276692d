// Package liveview hands a chat's browser tab to its human: a page served
// by the bot shows the tab (CDP screencast frames) and forwards taps,
// scrolling, typing, Back and Done to it, for the CAPTCHA, the login or
// the 2FA code the agent cannot do (issue 23).
//
// The parts, one file each:
//   - handoff.go: what a hand-off is (Handoff), how it ends (Outcome), and
//     the ports the wiring fills in (Target, the tab; Connect, how to reach
//     it; IsAdmin);
//   - links.go: the single-use links and the in-page sessions they open;
//   - initdata.go: Telegram Mini App initData verification;
//   - server.go, input.go: the HTTP endpoints (page, auth, frames, input,
//     Done) and what an input becomes on the tab;
//   - frames.go: the latest frame of a tab and its waiting readers;
//   - bucket.go: the rate limits;
//   - cdp/, cdptarget.go: a Chrome DevTools Protocol client and the
//     Target it makes of one page target attached through the browser's
//     endpoint (the only page it can reach);
//   - locate.go: how the bot asks a chat's own @playwright/mcp session
//     which CDP target (and browser context) its current tab is;
//   - mcptarget.go, pump.go, relay.go: the Target of a browser that runs
//     here (no DevTools port): a pump left running in the chat's
//     @playwright/mcp process streams the tab's screencast and does the
//     inputs, over a keyed relay on 127.0.0.1 (a screenshot per tool call
//     where it cannot start);
//   - assets.go, page/: the embedded page (HTML, JS, CSS; no other host).
//
// Nothing the user types is logged, stored or handed to anything but the
// tab: input is logged by kind and length only.
package liveview
