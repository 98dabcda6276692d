package mcpclient

import "github.com/volcanicbot/volcanicbot/internal/mcpclient/internal/stdio"

// OwnerEnv is the variable every server process (and every process it
// starts, such as a browser) carries: the mark of the bot process that
// spawned it, for owner (Options.Owner).
const OwnerEnv = stdio.MarkEnv

// MarkedProcesses returns the pids of the live processes that carry a mark
// of owner, whichever bot process spawned them, this process excluded.
func MarkedProcesses(owner string) []int { return stdio.MarkedProcesses(owner) }

// ReapOrphans kills the processes of owner that a bot process which no
// longer runs left behind (a bot killed with SIGKILL cannot stop its
// children's children), and returns their pids. The processes of a bot
// process still running — a check beside the bot, another bot on the same
// data directory — are left alone. Call it at start.
func ReapOrphans(owner string) []int { return stdio.ReapOrphans(owner) }
