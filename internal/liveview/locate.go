package liveview

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// LocateTool and LocateCode find which CDP target a chat's current tab is:
// the bot (never the model) calls LocateTool with {"code": LocateCode} in
// the chat's own @playwright/mcp session. The code runs in the server's
// process, not in the page, so no page can forge its answer; ParseLocate
// reads it into CDPOptions' TargetID and ContextID.
const (
	LocateTool = "browser_run_code_unsafe"
	LocateCode = `async (page) => {
  const s = await page.context().newCDPSession(page);
  try {
    const { targetInfo } = await s.send('Target.getTargetInfo');
    return { targetId: targetInfo.targetId, browserContextId: targetInfo.browserContextId };
  } finally { await s.detach(); }
}`
)

// ErrLocate is ParseLocate's error for an answer that names no target.
var ErrLocate = errors.New("the browser did not say which tab is the chat's")

// maxLocateAnswer bounds the answer ParseLocate reads (a few hundred bytes,
// plus the code echoed back).
const maxLocateAnswer = 64 << 10

// ParseLocate reads LocateTool's text answer: @playwright/mcp 0.0.83 puts
// the function's JSON result on the line after "### Result".
func ParseLocate(text string) (targetID, contextID string, err error) {
	if len(text) > maxLocateAnswer {
		return "", "", fmt.Errorf("%w: answer too long", ErrLocate)
	}
	_, rest, ok := strings.Cut(text, "### Result\n")
	if !ok {
		return "", "", fmt.Errorf("%w: no result", ErrLocate)
	}
	line, _, _ := strings.Cut(rest, "\n")
	var r struct {
		TargetID         string `json:"targetId"`
		BrowserContextID string `json:"browserContextId"`
	}
	if err := json.Unmarshal([]byte(line), &r); err != nil || r.TargetID == "" {
		return "", "", fmt.Errorf("%w: %q", ErrLocate, line)
	}
	return r.TargetID, r.BrowserContextID, nil
}
