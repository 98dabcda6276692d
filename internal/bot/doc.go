// Package bot is the chat's screens on top of internal/telegram: it
// decides which messages are for the bot and who may use it, runs the
// chat commands, and hands everything else to the sessions; and it is the
// session's chat port, which renders answers, uploads files, asks with
// buttons and shows typing, progress and streamed answers while a turn
// runs. Every Bot API call goes through the telegram.Client (its paced
// sender, its retries); receiving, the update inbox and the webhook are
// the client's too.
//
// # Wiring
//
// The Telegram client first, then the chat port, the sessions that talk
// to it, and the bot that hands them what the chats send:
//
//	tg, err := telegram.New(telegram.Options{Token: token, Logger: log, Redactor: reg})
//	chat := bot.NewChat(bot.ChatOptions{Telegram: tg, Admins: admins, Logger: log})
//	mgr := session.NewManager(session.Options{Chat: chat, ...})
//	b, err := bot.New(bot.Options{Telegram: tg, Chat: chat, Sessions: mgr, AllowedUsers: ids, Logger: log})
//	err = b.Run(ctx) // until ctx ends
//	tg.Close()       // after the sessions were closed
//
// New does no network I/O; Run connects the client (getMe, the inbox),
// hands in what the last run left, publishes the commands and receives
// updates until ctx ends, then waits for every chat's worker.
//
// # The way of one message
//
//  1. Poller. The telegram.Client long-polls getUpdates or takes the
//     webhook's posts, journals each update in its inbox, and hands it to
//     the bot's handler once (internal/telegram). The handler only queues
//     it, and recovers a panic: the poller never waits on a chat. An
//     update is marked done (Client.Done) once its chat has taken the
//     message (session.Message.Taken) or it needed no session. Run hands
//     in again, in order and before any new update, what the last run
//     left not done (Client.Kept); commands among them are not run again.
//  2. Dispatcher. Each chat has a queue and, while it holds work, a worker
//     goroutine of its own (dispatch.go): a chat's updates are handled one
//     at a time, in order, and a slow chat never delays another. A panic
//     in a job is logged and answered, and the worker goes on.
//  3. Route (route.go). Before anything else, and for strangers too: is
//     the message for the bot, and what is it? In a private chat every
//     message is; in a group only one that mentions @botname (found by the
//     "mention" entities Telegram sends, in UTF-16 offsets) or replies to
//     the bot, and a command as /cmd@botname or as one of the bot's own
//     commands. Other bots, channels and group chatter are ignored without
//     a word.
//  4. Allowlist (access.go). Default deny: a user not in AllowedUsers gets
//     one short refusal naming their user id (at most one every ten
//     minutes) and nothing else runs.
//  5. Command or session. /start, /help, /new, /stop and /mcp run here,
//     one file each (cmd_*.go), without the model; /mcp's texts are
//     written from the servers' status in mcp_text.go. Text goes to
//     Sessions.Deliver with the message it replies to; photos and
//     documents are downloaded first (files.go), and the photos of an
//     album, which arrive as separate messages, are collected for
//     DefaultAlbumWait and delivered as one (album.go).
//
// # The chat port
//
// Chat implements session.Chat. SendText renders the model's Markdown with
// tgformat into Telegram HTML, one message per chunk of at most 4096
// UTF-16 code units, and sends a chunk again as plain text when Telegram
// refuses its HTML. SendFile uploads images as photos (as documents when
// Telegram refuses the photo) and everything else as documents; a caption
// too long for Telegram follows as its own message. StartActivity shows
// the typing action while a turn runs and, once a tool is called, one
// progress message listing the calls, edited at most once a second and
// deleted when the turn ends (activity.go).
//
// # Questions with buttons
//
// Chat.Ask (ask.go) is the one way to ask a chat something with inline
// buttons and wait for the answer — tool approvals use it, and so can an
// MCP server's questions (elicitation):
//
//	a, err := chat.Ask(ctx, place, bot.Question{
//		Text:    "Delete 3 files?",
//		Buttons: [][]bot.Button{{{Label: "Delete", Choice: "yes"}, {Label: "Keep", Choice: "no"}}},
//		MayAnswer: func(user int64) bool { return user == asker }, // nil: any allowed user
//		Timeout: 5 * time.Minute,                                   // 0: until ctx ends
//	})
//	// a.Choice, a.UserID — or err: bot.ErrNoAnswer, ctx.Err(), a send error
//
// The bot asks Telegram for callback_query updates and settles each press
// on the poller: a press of a question still open, in its chat and on its
// message, by an allowed user whom MayAnswer accepts, answers it; any other
// press (a stranger, another user, a closed question, a restarted bot,
// another chat's button, data the bot never made) is answered — as an
// alert for people, "This button has expired." otherwise — and changes
// nothing. When Ask returns, the message's buttons give way to an outcome
// line.
//
// The one other kind of button is /approvals' (cmd_approvals.go): its data
// ("rv:" and a hash of a grant's server and tool) is not a question's but
// names what to take back, settled on the chat's worker against the
// chat's grants as they are — stateless, so it works after a restart, and
// it can only revoke.
//
// # One sender for each chat
//
// Every Bot API call addressed to a chat goes through the client's paced
// sender (telegram.Client.Do, Submit, Send): one queue per chat, in order,
// under Telegram's flood limits, a 429 holding only that chat. A screen
// builds its call with Client.API and says whether it is paced (it sends
// or changes a message) and, for a live message, its key (a queued update
// of the same key is replaced by the newer one).
package bot
