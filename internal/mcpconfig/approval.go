package mcpconfig

import (
	"path"
	"slices"
	"strings"
)

// Approval is a server's approval field: which of its tool calls wait for
// a user's yes in the chat.
type Approval string

const (
	// ApprovalNever runs every call without asking (the default; the
	// zero value means it too).
	ApprovalNever Approval = "never"
	// ApprovalWrites asks before every tool whose readOnlyHint is not
	// true.
	ApprovalWrites Approval = "writes"
	// ApprovalAlways asks before every call.
	ApprovalAlways Approval = "always"
)

// Rule is what one call needs before it runs.
type Rule int

const (
	// RunFreely: the call runs without asking.
	RunFreely Rule = iota
	// AskFirst: a user must approve it; "always in this chat" may be
	// granted for the tool.
	AskFirst
	// AskEveryTime: a user must approve every call (alwaysAsk); no
	// standing grant is offered.
	AskEveryTime
)

// ApprovalFor is the rule for a call of the tool the server calls mcpName
// and the model calls exposed, which says of itself readOnly
// (readOnlyHint true): alwaysAsk first, then autoApprove, then approval
// (never, writes: unless readOnly, always).
func (c ServerConfig) ApprovalFor(mcpName, exposed string, readOnly bool) Rule {
	switch {
	case matchesTool(c.AlwaysAsk, mcpName, exposed):
		return AskEveryTime
	case matchesTool(c.AutoApprove, mcpName, exposed):
		return RunFreely
	case c.Approval == ApprovalAlways, c.Approval == ApprovalWrites && !readOnly:
		return AskFirst
	}
	return RunFreely
}

// matchesTool reports whether a glob (path.Match syntax: *, ?, [a-z])
// matches either name of a tool.
func matchesTool(globs []string, names ...string) bool {
	for _, g := range globs {
		for _, n := range names {
			if ok, _ := path.Match(g, n); ok {
				return true
			}
		}
	}
	return false
}

// approval validates the approval fields of e.
func (e ServerEntry) approval(refuse refuseFunc) (Approval, []string, []string) {
	var mode Approval // never
	switch a := Approval(strings.ToLower(strings.TrimSpace(e.Approval))); a {
	case "":
	case ApprovalNever, ApprovalWrites, ApprovalAlways:
		mode = a
	default:
		refuse("approval", "approval must be never, writes or always (got %q)", e.Approval)
	}
	globs := func(field string, in []string) []string {
		var out []string
		for _, g := range in {
			g = strings.TrimSpace(g)
			if _, err := path.Match(g, ""); g == "" || err != nil {
				refuse(field, "%s has an invalid tool pattern %q: use names with *, ? and [a-z]", field, g)
				continue
			}
			if !slices.Contains(out, g) {
				out = append(out, g)
			}
		}
		return out
	}
	return mode, globs("autoApprove", e.AutoApprove), globs("alwaysAsk", e.AlwaysAsk)
}
