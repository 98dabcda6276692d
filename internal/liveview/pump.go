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
// — frames out, inputs in — and answers {"ok":true} at once. Both loops
// end, and the screencast and the CDP session with them, when the relay
// says so (410), when it cannot be reached, or when the tab closes; then
// it says bye. Every promise is caught: nothing it does ends up as an
// unhandled rejection in a later tool call's answer.
//
// Its arguments are JSON literals: the relay's address, its key, and the
// screencast's options.
const pumpCode = `async (page) => {
  const base = %s, H = { 'X-Relay-Key': %s }, o = %s;
  const post = (path, body, headers) => fetch(base + path, { method: 'POST', headers: { ...H, ...headers }, body });
  const hello = await post('/hello', '').catch(() => null);
  if (!hello || hello.status !== 204) return { ok: false };
  let cdp;
  try {
    cdp = await page.context().newCDPSession(page);
  } catch {
    await post('/bye', '').then((r) => r.arrayBuffer()).catch(() => {});
    return { ok: false };
  }
  let stopped = false, sending = false, pending = null;
  const stop = async () => {
    if (stopped) return;
    stopped = true;
    page.off('close', stop);
    await cdp.send('Page.stopScreencast').catch(() => {});
    await cdp.detach().catch(() => {});
    await post('/bye', '').then((r) => r.arrayBuffer()).catch(() => {});
  };
  const ack = (id) => cdp.send('Page.screencastFrameAck', { sessionId: id }).catch(() => {});
  const start = () => cdp.send('Page.startScreencast', { format: 'jpeg', quality: o.q, maxWidth: o.w, maxHeight: o.h });
  const send = async (f) => {
    sending = true;
    try {
      while (f && !stopped) {
        const r = await post('/frame', Buffer.from(f.data, 'base64'), { 'Content-Type': 'image/jpeg',
          'X-Frame-Width': String(Math.round(f.metadata.deviceWidth)), 'X-Frame-Height': String(Math.round(f.metadata.deviceHeight)),
          'X-Frame-Url': encodeURIComponent(page.url()) });
        const seq = await r.text();
        if (r.status !== 200) return await stop();
        for (;;) {
          const a = await fetch(base + '/ack?seq=' + encodeURIComponent(seq), { headers: H });
          await a.arrayBuffer();
          if (a.status === 204) break;
          if (a.status !== 202) return await stop();
        }
        await ack(f.sessionId);
        f = pending;
        pending = null;
      }
    } catch {
      await stop();
    } finally {
      sending = false;
    }
  };
  cdp.on('Page.screencastFrame', (f) => {
    if (stopped) return;
    if (!sending) { send(f); return; }
    if (pending) ack(pending.sessionId);
    pending = f;
  });
  const keys = ['Enter', 'Backspace', 'Tab', 'Escape', 'Delete', 'ArrowLeft', 'ArrowUp', 'ArrowRight', 'ArrowDown'];
  const run = async (c) => {
    switch (c.op) {
      case 'tap': return page.mouse.click(c.x || 0, c.y || 0);
      case 'touch': try { return await page.touchscreen.tap(c.x || 0, c.y || 0); } catch { return page.mouse.click(c.x || 0, c.y || 0); }
      case 'scroll': await page.mouse.move(c.x || 0, c.y || 0); return page.mouse.wheel(c.dx || 0, c.dy || 0);
      case 'text': return page.keyboard.insertText(String(c.text || ''));
      case 'key': if (!keys.includes(c.key)) throw new Error('key'); return page.keyboard.press(c.key);
      case 'back': return page.goBack({ timeout: 10000 }).catch(() => null);
      case 'refresh': await cdp.send('Page.stopScreencast'); return start();
    }
    throw new Error('op');
  };
  const inputs = async () => {
    try {
      while (!stopped) {
        const r = await fetch(base + '/next', { headers: H, signal: AbortSignal.timeout(60000) });
        if (r.status === 204) { await r.arrayBuffer(); continue; }
        if (r.status !== 200) { await r.arrayBuffer(); break; }
        const c = await r.json();
        let ok = true;
        try { await run(c); } catch { ok = false; }
        const d = await post('/done', JSON.stringify({ id: c.id, ok }), { 'Content-Type': 'application/json' });
        await d.arrayBuffer();
      }
    } catch {}
    await stop();
  };
  page.on('close', stop);
  try {
    await start();
  } catch {
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
