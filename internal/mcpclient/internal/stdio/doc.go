// Package stdio runs MCP servers as child processes speaking JSON-RPC on
// stdin and stdout: starting one in a session of its own with a complete,
// filtered environment (Start), the transport on its pipes (Transport, with
// requests written as single lines and answers read by whoever waits for
// them), the stderr tail and log lines, the exit watcher, a graceful stop
// of the whole process tree (Terminate), the Tracker that knows the tree
// even where it left the server's process group (a cgroup per server, or
// the bot as a child subreaper), and the owner mark and records that let
// the next start end what a killed bot left behind (Mark, ReapOrphans).
//
// Linux-only parts live in _linux.go files: the death signal, cgroups, the
// subreaper, the walk of /proc for descendants and marks. Elsewhere the
// package builds, and a server's own process group is all it stops.
package stdio
