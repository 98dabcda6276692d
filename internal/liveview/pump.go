package liveview

import (
	"context"
	"errors"
	"fmt"
)

// pumpCode is the pump (relay.go): a function of the chat's tab that
// @playwright/mcp runs in its own Node process (browser_run_code_unsafe's
// sandbox: Playwright's page, fetch, Buffer, timers; nothing of the page's
// window). It says hello to the relay and answers {"ok":false} when it
// cannot reach it (the server runs where 127.0.0.1 is not the bot's), else
// it opens a CDP session on the tab (page.context().newCDPSession: through
// Playwright's own pipe), starts the screencast, leaves two loops running
// — frames out, inputs in — and answers {"ok":true} at once.
//
// It follows popups (a login's "Sign in with …" window): one the tab
// opens (page.on('popup'): only this tab's, never another tab's of the
// context), or one of those opens, goes on screen — the shown page's
// screencast stops and its CDP session goes, the popup gets its own, and
// the inputs go to it; when it closes, the page shown before it is shown
// again. Switches run one at a time (chain).
//
// Both loops end, and the screencast, the CDP session and every listener
// with them, when the relay says so (410), when it cannot be reached, or
// when the handed tab closes; then it says bye. Every promise is caught:
// nothing it does ends up as an unhandled rejection in a later tool
// call's answer.
//
// Its arguments are JSON literals: the relay's address, its key, and the
// screencast's options.
const pumpCode = `async (page) => {
  const base = %s, H = { 'X-Relay-Key': %s }, o = %s;
  const post = (path, body, headers) => fetch(base + path, { method: 'POST', headers: { ...H, ...headers }, body });
  const hello = await post('/hello', '').catch(() => null);
  if (!hello || hello.status !== 204) return { ok: false };
  let stopped = false, sending = false, pending = null, cur = null, chain = Promise.resolve(), ending = null;
  const serial = (fn) => (chain = chain.then(fn).catch(() => {}));
  const shown = []; // the handed tab, then the popups it (or one of them) opened; the last one is on screen
  const start = () => cur.cdp.send('Page.startScreencast', { format: 'jpeg', quality: o.q, maxWidth: o.w, maxHeight: o.h });
  const leave = async (c) => {
    await c.cdp.send('Page.stopScreencast').catch(() => {});
    await c.cdp.detach().catch(() => {});
  };
  const unlisten = (e) => { e.p.off('close', e.close); e.p.off('popup', e.popup); };
  const stop = () => {
    if (ending) return ending;
    stopped = true;
    shown.splice(0).forEach(unlisten);
    ending = serial(async () => {
      if (cur) await leave(cur);
      cur = null;
      await post('/bye', '').then((r) => r.arrayBuffer()).catch(() => {});
    });
    return ending;
  };
  const ack = (x) => x.cdp.send('Page.screencastFrameAck', { sessionId: x.f.sessionId }).catch(() => {});
  const send = async (x) => {
    sending = true;
    try {
      while (x && !stopped) {
        const f = x.f, r = await post('/frame', Buffer.from(f.data, 'base64'), { 'Content-Type': 'image/jpeg',
          'X-Frame-Width': String(Math.round(f.metadata.deviceWidth)), 'X-Frame-Height': String(Math.round(f.metadata.deviceHeight)),
          'X-Frame-Url': encodeURIComponent(x.p.url()) });
        const seq = await r.text();
        if (r.status !== 200) return await stop();
        for (;;) {
          const a = await fetch(base + '/ack?seq=' + encodeURIComponent(seq), { headers: H });
          await a.arrayBuffer();
          if (a.status === 204) break;
          if (a.status !== 202) return await stop();
        }
        await ack(x);
        x = pending && cur && pending.cdp === cur.cdp ? pending : null;
        pending = null;
      }
    } catch {
      await stop();
    } finally {
      sending = false;
    }
  };
  // show puts p on screen: the screencast of the one shown before stops and
  // its CDP session goes, p gets one of its own.
  const show = async (p) => {
    const old = cur;
    cur = null;
    if (old) await leave(old);
    const cdp = await p.context().newCDPSession(p);
    if (stopped) return cdp.detach().catch(() => {});
    cdp.on('Page.screencastFrame', (f) => {
      if (stopped || !cur || cur.cdp !== cdp) return;
      const x = { cdp, p, f };
      if (!sending) { send(x); return; }
      if (pending) ack(pending);
      pending = x;
    });
    cur = { cdp, p };
    await start();
  };
  // follow shows the last page of shown (a popup that is gone is dropped,
  // the handed tab gone ends the pump).
  const follow = () => serial(async () => {
    while (!stopped && shown.length > 0) {
      const e = shown[shown.length - 1];
      if (cur && cur.p === e.p) return;
      try {
        await show(e.p);
        return;
      } catch {
        if (e.p === page) return void stop();
        const i = shown.indexOf(e); // a popup gone already (or that refused a session): its opener again
        if (i >= 0) { unlisten(e); shown.splice(i, 1); }
      }
    }
  });
  const watch = (p) => {
    const e = { p };
    e.close = () => {
      if (p === page) return stop();
      const i = shown.indexOf(e);
      if (i < 0) return;
      unlisten(e);
      shown.splice(i, 1);
      follow();
    };
    e.popup = (q) => { if (!stopped) { watch(q); follow(); } };
    shown.push(e);
    p.on('close', e.close);
    p.on('popup', e.popup);
  };
  const keys = ['Enter', 'Backspace', 'Tab', 'Escape', 'Delete', 'ArrowLeft', 'ArrowUp', 'ArrowRight', 'ArrowDown'];
  const run = async (c, p) => {
    switch (c.op) {
      case 'tap': return p.mouse.click(c.x || 0, c.y || 0);
      case 'touch': try { return await p.touchscreen.tap(c.x || 0, c.y || 0); } catch { return p.mouse.click(c.x || 0, c.y || 0); }
      case 'scroll': await p.mouse.move(c.x || 0, c.y || 0); return p.mouse.wheel(c.dx || 0, c.dy || 0);
      case 'text': return p.keyboard.insertText(String(c.text || ''));
      case 'key': if (!keys.includes(c.key)) throw new Error('key'); return p.keyboard.press(c.key);
      case 'back': return p.goBack({ timeout: 10000 }).catch(() => null);
      case 'refresh': if (!cur) throw new Error('switching'); await cur.cdp.send('Page.stopScreencast'); return start();
    }
    throw new Error('op');
  };
  const closes = (p) => p.isClosed() || p.waitForEvent('close', { timeout: 2000 }).then(() => true, () => p.isClosed());
  const inputs = async () => {
    try {
      while (!stopped) {
        const r = await fetch(base + '/next', { headers: H, signal: AbortSignal.timeout(60000) });
        if (r.status === 204) { await r.arrayBuffer(); continue; }
        if (r.status !== 200) { await r.arrayBuffer(); break; }
        const c = await r.json(), p = shown.length > 0 ? shown[shown.length - 1].p : page;
        let ok = true;
        try { await run(c, p); } catch { ok = p !== page && await closes(p); } // a popup that closed itself at a tap
        const d = await post('/done', JSON.stringify({ id: c.id, ok }), { 'Content-Type': 'application/json' });
        await d.arrayBuffer();
      }
    } catch {}
    await stop();
  };
  watch(page);
  let up = true;
  await serial(() => show(page).catch(() => { up = false; }));
  if (!up) {
    await stop();
    return { ok: false };
  }
  inputs();
  return { ok: true };
}`

// errNoPump is a pump that did not start: the relay is not reachable from
// the browser server, or the tab refused the screencast.
var errNoPump = errors.New("the tab's pump did not start")

// startPump starts a relay and its pump on the tab run reaches, frames
// to onFrame.
func startPump(ctx context.Context, run RunCode, o ScreencastOptions, onFrame func(Frame), setURL func(string)) (*relay, error) {
	r, err := newRelay(onFrame, setURL)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, relayStartWait)
	defer cancel()
	opts := map[string]int{"q": o.Quality, "w": o.MaxWidth, "h": o.MaxHeight}
	answer, err := run(ctx, fmt.Sprintf(pumpCode, js(r.base()), js(r.key), js(opts)))
	var res struct{ OK bool }
	if err == nil {
		err = result(answer, &res)
	}
	if err != nil || !res.OK {
		r.stop()
		return nil, errNoPump
	}
	return r, nil
}
