package schedule

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
)

// maxDiffLines bounds the lines "what changed" shows of each side.
const maxDiffLines = 5

// maxDiffLine bounds one line shown.
const maxDiffLine = 200

// normalise is an answer as a watcher compares it: each line's runs of
// white space made one space, the lines trimmed, empty lines dropped.
func normalise(s string) []string {
	var out []string
	for line := range strings.SplitSeq(s, "\n") {
		if f := strings.Fields(line); len(f) > 0 {
			out = append(out, strings.Join(f, " "))
		}
	}
	return out
}

// answerHash identifies an answer up to white space.
func answerHash(s string) string {
	sum := sha256.Sum256([]byte(strings.Join(normalise(s), "\n")))
	return hex.EncodeToString(sum[:16])
}

// whatChanged is a short account of the lines added and removed from
// before to after (normalised; each side capped at maxDiffLines).
func whatChanged(before, after string) string {
	added, removed := lineDiff(normalise(before), normalise(after))
	var b strings.Builder
	fmt.Fprintf(&b, "What changed: %d line(s) added, %d removed.", len(added), len(removed))
	show := func(sign string, lines []string) {
		for i, l := range lines {
			if i == maxDiffLines {
				fmt.Fprintf(&b, "\n%s … and %d more", sign, len(lines)-maxDiffLines)
				return
			}
			b.WriteString("\n" + sign + " " + capString(l, maxDiffLine))
		}
	}
	show("+", added)
	show("−", removed)
	return b.String()
}

// lineDiff is the lines of b not in a (added) and of a not in b
// (removed), as multisets: a line that moved is no change. Linear in the
// lines, so a hostile page cannot make it quadratic.
func lineDiff(a, b []string) (added, removed []string) {
	count := make(map[string]int, len(a))
	for _, l := range a {
		count[l]++
	}
	for _, l := range b {
		if count[l] > 0 {
			count[l]--
		} else {
			added = append(added, l)
		}
	}
	for _, l := range a {
		if count[l] > 0 {
			count[l]--
			removed = append(removed, l)
		}
	}
	return added, removed
}
