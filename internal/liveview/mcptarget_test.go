package liveview

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
)

// fakePlaywright answers MCPTarget's code as @playwright/mcp 0.0.83 does
// (the code echoed, then "### Result" and the value's JSON): screenshots of
// a page whose look is the current string, actions recorded.
type fakePlaywright struct {
	mu    sync.Mutex
	look  string
	shots int
	codes []string
	fail  bool
	pumps int // pump starts asked for (answered: it cannot reach the bot)
}

func (f *fakePlaywright) run(_ context.Context, code string) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	echo := "### Ran Playwright code\n```js\nawait (" + code + ")(page);\n```\n"
	if f.fail {
		return "", errors.New(echo + "### Error\nTimeoutError")
	}
	if strings.Contains(code, "X-Relay-Key") {
		f.pumps++
		return echo + "### Result\n{\"ok\":false}\n", nil
	}
	if strings.Contains(code, "page.screenshot(") {
		f.shots++
		d := base64.StdEncoding.EncodeToString([]byte(f.look))
		return echo + "### Result\n" + fmt.Sprintf(`{"w":390,"h":700,"u":"https://site.test/%s","d":%q}`, f.look, d), nil
	}
	f.codes = append(f.codes, code)
	return echo, nil
}

func (f *fakePlaywright) set(look string) {
	f.mu.Lock()
	f.look = look
	f.mu.Unlock()
}

// TestMCPTargetSendsChangedFramesWhenTaken: where the pump cannot start
// (the server does not reach the bot's relay), screenshots take over: the
// first goes out, an unchanged tab sends nothing more, a changed one or a
// Refresh does — and nothing is taken before the last frame was acked.
func TestMCPTargetSendsChangedFramesWhenTaken(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		pw := &fakePlaywright{look: "a"}
		tab := NewMCPTarget(pw.run)
		var mu sync.Mutex
		var got []string
		tab.StartScreencast(context.Background(), screencast, func(f Frame) {
			mu.Lock()
			got = append(got, fmt.Sprintf("%s %dx%d #%d", f.JPEG, f.Size.X, f.Size.Y, f.Ack))
			mu.Unlock()
		})
		frames := func() string { mu.Lock(); defer mu.Unlock(); return strings.Join(got, ", ") }
		synctest.Wait()
		if frames() != "a 390x700 #1" || pw.shots != 1 || pw.pumps != 1 {
			t.Fatalf("first frames %q after %d shots, %d pump starts", frames(), pw.shots, pw.pumps)
		}
		pw.set("b") // not acked yet: nothing is taken
		for range 4 {
			tab.Screenshot(context.Background()) // the view's own, apart
		}
		synctest.Wait()
		if frames() != "a 390x700 #1" {
			t.Fatalf("a frame before the ack: %q", frames())
		}
		tab.AckFrame(context.Background(), 1)
		waitPolls(2)
		if frames() != "a 390x700 #1, b 390x700 #2" {
			t.Fatalf("after a change: %q", frames())
		}
		tab.AckFrame(context.Background(), 2)
		waitPolls(4)
		if frames() != "a 390x700 #1, b 390x700 #2" {
			t.Fatalf("an unchanged tab sent %q", frames())
		}
		tab.Refresh()
		waitPolls(2)
		if frames() != "a 390x700 #1, b 390x700 #2, b 390x700 #3" {
			t.Fatalf("after Refresh: %q", frames())
		}
		if u, _ := tab.CurrentURL(context.Background()); u != "https://site.test/b" {
			t.Fatalf("CurrentURL %q", u)
		}
		tab.Close() // the loop ends and is waited for
	})
}

func waitPolls(n int) {
	for range n {
		synctest.Wait()
		sleepCtx(context.Background(), mcpFrameEvery)
	}
	synctest.Wait()
}

// TestMCPTargetActions: each input is one call of Playwright's own API, its
// values JSON literals (a typed quote or a script tag stays text); an
// unknown key is refused before any call; a failure names the action,
// never what was typed nor the echoed code.
func TestMCPTargetActions(t *testing.T) {
	const typed = `pa"ss</script>\u2028` + "\u2028"
	cases := []struct {
		name string
		do   func(*MCPTarget) error
		want string
	}{
		{"tap", func(m *MCPTarget) error { return m.Tap(context.Background(), 10.5, 20) }, "page.mouse.click(10.5, 20)"},
		{"touch", func(m *MCPTarget) error { return m.Touch(context.Background(), 1, 2) }, "page.touchscreen.tap(1, 2)"},
		{"scroll", func(m *MCPTarget) error { return m.Scroll(context.Background(), 1, 2, 0, -300) }, "page.mouse.wheel(0, -300)"},
		{"text", func(m *MCPTarget) error { return m.InsertText(context.Background(), typed) },
			`page.keyboard.insertText("pa\"ss\u003c/script\u003e\\u2028\u2028")`},
		{"key", func(m *MCPTarget) error { return m.Key(context.Background(), "Enter") }, `page.keyboard.press("Enter")`},
		{"back", func(m *MCPTarget) error { return m.Back(context.Background()) }, "page.goBack("},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			pw := &fakePlaywright{}
			if err := c.do(NewMCPTarget(pw.run)); err != nil || len(pw.codes) != 1 || !strings.Contains(pw.codes[0], c.want) {
				t.Fatalf("err %v, code %q, want it to hold %q", err, pw.codes, c.want)
			}
			pw.fail = true
			err := c.do(NewMCPTarget(pw.run))
			if err == nil || strings.Contains(err.Error(), `pa"ss`) || strings.Contains(err.Error(), `pa\"ss`) || strings.Contains(err.Error(), "page.") {
				t.Fatalf("a failure says %v", err)
			}
		})
	}
	pw := &fakePlaywright{}
	if err := NewMCPTarget(pw.run).Key(context.Background(), "F12"); !errors.Is(err, errBadInput) || len(pw.codes) != 0 {
		t.Fatalf("F12: %v, %d calls", err, len(pw.codes))
	}
}
