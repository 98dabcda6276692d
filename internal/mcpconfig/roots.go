package mcpconfig

import (
	"path"
	"strings"
)

// The roots a command server is told. The bot declares the roots
// capability, and answers roots/list with the chat's workspace, to a
// command whose args name no directory of its own; what the user gave a
// server in its args holds. Some servers (server-filesystem since 2025.3)
// serve the roots a client declares *instead of* the directories in their
// args, from the moment their roots/list is answered — a race with their
// first calls — so declaring roots to a server given /srv/notes took
// /srv/notes away from its second call on. An entry's "roots" decides
// when given.

// ownDirectories returns the args that name a directory of the server's
// own, as written: an absolute path, a home path (~, ~/…), a relative path
// (./…, ../…) or a path under ${workspace}, alone or as the value of
// --flag=value, or as the default of a variable that starts it
// (${NOTES:-/srv/notes}). The workspace itself (${workspace}) is what the
// roots say anyway; a path to a script or a program's file (index.js,
// server.py) is not a directory.
func ownDirectories(args []string) []string {
	var out []string
	for _, arg := range args {
		a := arg
		if _, v, ok := strings.Cut(a, "="); ok && strings.HasPrefix(a, "-") {
			a = v
		}
		if refs := varRefs(a); len(refs) > 0 && refs[0].start == 0 && refs[0].hasDefault {
			a = refs[0].def + a[refs[0].end:]
		}
		if isDirectoryArg(a) {
			out = append(out, arg)
		}
	}
	return out
}

func isDirectoryArg(a string) bool {
	switch {
	case a == workspacePlaceholder, a == workspacePlaceholder+"/":
		return false
	case a == "~", a == ".", a == "..":
		return true
	case !strings.HasPrefix(a, "/") && !strings.HasPrefix(a, "~/") && !strings.HasPrefix(a, "./") &&
		!strings.HasPrefix(a, "../") && !strings.HasPrefix(a, workspacePlaceholder+"/"):
		return false
	}
	return !fileExtensions[strings.ToLower(path.Ext(strings.TrimRight(a, "/")))]
}

// workspacePlaceholder is the placeholder of the chat's workspace in args.
const workspacePlaceholder = "${workspace}"

// fileExtensions are the extensions of the files an arg names to run or to
// read: such a path is no directory.
var fileExtensions = map[string]bool{
	".js": true, ".mjs": true, ".cjs": true, ".ts": true, ".mts": true, ".py": true, ".pyz": true, ".jar": true,
	".sh": true, ".rb": true, ".php": true, ".pl": true, ".exe": true, ".bin": true, ".wasm": true,
	".json": true, ".jsonc": true, ".yaml": true, ".yml": true, ".toml": true, ".ini": true, ".env": true,
	".db": true, ".sqlite": true, ".sqlite3": true, ".txt": true, ".md": true, ".csv": true, ".log": true,
}

// defaultRoots is whether the bot declares roots to an entry that does not
// say: a command whose args name no directory of its own.
func defaultRoots(e ServerEntry) bool {
	return e.URL == "" && len(ownDirectories(e.Args)) == 0
}

// rootsWarning says what a server known to serve the roots instead of its
// args' directories gets, when that is worth knowing: "" otherwise.
func rootsWarning(e ServerEntry, roots bool) string {
	if e.URL != "" || !servesRoots(e.Command, e.Args) {
		return ""
	}
	dirs := strings.Join(ownDirectories(e.Args), ", ")
	switch {
	case dirs != "" && !roots:
		return "server-filesystem: its args name directories of its own (" + dirs + "): the bot declares no roots to it, " +
			"so it serves them in every chat, alike (\"roots\": true would give it each chat's workspace instead)"
	case dirs != "" && roots:
		return "server-filesystem: with \"roots\": true it serves each chat's workspace instead of the directories in its args (" +
			dirs + ") as soon as it has asked for the roots, right after it starts: its first call may still see them"
	case dirs == "" && !roots:
		return "server-filesystem has no directory in its args and the bot declares no roots to it (\"roots\": false): " +
			"it cannot start; give it a directory, or leave \"roots\" out to give it each chat's workspace"
	}
	return ""
}

// servesRoots reports whether a command line runs a server known to
// replace what its args give it with the client's roots
// (@modelcontextprotocol/server-filesystem since 2025.3).
func servesRoots(command string, args []string) bool {
	for _, s := range append([]string{command}, args...) {
		if strings.Contains(s, "server-filesystem") {
			return true
		}
	}
	return false
}
