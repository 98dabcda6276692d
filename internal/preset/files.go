package preset

import (
	"regexp"
	"strconv"
)

// The text files @playwright/mcp writes into a chat's workspace, which the
// read tool pages through: page snapshots (page-….yml) and console logs
// (console-….log). A result names a console entry by its line:
// "New console entries: browser/console-….log#L12".

// ReadableFiles names the browser's text files, for the read tool's
// description.
const ReadableFiles = "page snapshots and console logs under browser/"

// ReadableExample is the path of one, for the read tool's schema.
const ReadableExample = "browser/console-….log"

// lineAnchor is a "#L12" after a path, as @playwright/mcp names console
// entries ("browser/console-….log#L12").
var lineAnchor = regexp.MustCompile(`#L(\d+)$`)

// CutLineAnchor cuts the line anchor off a path as @playwright/mcp names a
// console entry: "browser/console-1.log#L12" is the file
// "browser/console-1.log" from line 12. Without an anchor it returns path
// and false.
func CutLineAnchor(path string) (file string, line int, ok bool) {
	m := lineAnchor.FindStringSubmatchIndex(path)
	if m == nil {
		return path, 0, false
	}
	line, _ = strconv.Atoi(path[m[2]:m[3]])
	return path[:m[0]], line, true
}
