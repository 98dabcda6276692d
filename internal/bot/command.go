package bot

import (
	"strings"

	"github.com/go-telegram/bot/models"
)

// command is a parsed "/name@bot args".
type command struct {
	Name string   // lower-case, without the slash
	Bot  string   // the @bot suffix without '@', "" when absent
	Args []string // whitespace-separated arguments
}

// parseCommand parses text as a command: optional leading whitespace, a
// slash, a name of letters, digits and underscores (at most 32), an
// optional @botname, then whitespace or the end. Anything else ("/",
// "/usr/bin", "/ x") is not a command.
func parseCommand(text string) (command, bool) {
	s := strings.TrimLeft(text, " \t\r\n")
	if !strings.HasPrefix(s, "/") {
		return command{}, false
	}
	s = s[1:]
	// A '-' inside the name is taken as '_' ("/allow-more" is
	// /allow_more): Telegram's command names cannot hold one, but people
	// type it.
	end := strings.IndexFunc(s, func(r rune) bool { return !isNameRune(r) && r != '-' })
	if end < 0 {
		end = len(s)
	}
	name, rest := s[:end], s[end:]
	if name == "" || len(name) > 32 || name[0] == '-' || name[len(name)-1] == '-' {
		return command{}, false
	}
	name = strings.ReplaceAll(name, "-", "_")
	var botName string
	if after, ok := strings.CutPrefix(rest, "@"); ok {
		e := strings.IndexFunc(after, func(r rune) bool { return !isNameRune(r) })
		if e < 0 {
			e = len(after)
		}
		botName, rest = after[:e], after[e:]
		if botName == "" {
			return command{}, false
		}
	}
	if rest != "" && !isSpace(rest[0]) {
		return command{}, false
	}
	return command{Name: strings.ToLower(name), Bot: botName, Args: strings.Fields(rest)}, true
}

func isNameRune(r rune) bool {
	return r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9'
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// The bot's commands, for setMyCommands and /help. Admin commands are
// shown to admins only, in /help (setMyCommands lists them to nobody).
var commandList = []struct {
	name, usage, desc string
	admin             bool
}{
	{"new", "/new", "start a new conversation (forget this chat's history, restart its tools)", false},
	{"stop", "/stop", "stop the answer in progress", false},
	{"usage", "/usage", "the model tokens this chat used today and this month, per model, and their cost", false},
	{"model", "/model", "this chat's model, and the others to pick from", false},
	{"", "/model <name>", "switch this chat to that model", false},
	{"approvals", "/approvals", "the tools approved always in this chat, to take back", false},
	{"memory", "/memory", "what I keep in memory in this chat (kept after /new), to delete", false},
	{"", "/memory clear", "delete everything I keep in memory in this chat", false},
	{"jobs", "/jobs", "this chat's scheduled tasks, to cancel or run now", false},
	{"", "/jobs cancel <id>", "cancel a scheduled task", false},
	{"", "/jobs all", "every chat's scheduled tasks (admins)", true},
	{"tz", "/tz <Area/City>", "this chat's time zone for scheduled tasks (such as Europe/Berlin)", false},
	{"voice", "/voice on|off", "also send my answers in this chat as voice notes, or stop", false},
	{"mcp", "/mcp", "the MCP servers and their state", false},
	{"", "/mcp <name>", "one server: command, tools, last error", false},
	{"", "/mcp restart <name>", "restart a server: the next call starts a fresh process", false},
	{"", "/mcp login <name>", "log in to a server that wants it (admins)", true},
	{"allow", "/allow <code>", "add the user who got this code when I refused them (admins)", true},
	{"revoke", "/revoke <user id>", "remove a user an admin added (admins)", true},
	{"users", "/users", "who may use me, who added them and when (admins)", true},
	{"allow_more", "/allow_more [chat id]", "lift a chat's daily allowance for the rest of today (admins)", true},
	{"help", "/help", "what I can do", false},
	{"start", "/start", "the same as /help", false},
}

func botCommands() []models.BotCommand {
	var out []models.BotCommand
	for _, c := range commandList {
		if c.name != "" && !c.admin {
			out = append(out, models.BotCommand{Command: c.name, Description: c.desc})
		}
	}
	return out
}

func knownCommand(name string) bool {
	for _, c := range commandList {
		if c.name != "" && c.name == name {
			return true
		}
	}
	return false
}
