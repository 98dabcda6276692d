// Package telegram is volcanicbot's Bot API plumbing, with no chat logic:
// the one client every call to Telegram goes through, the receiving of
// updates (long polling or a webhook), the durable update inbox, and
// files (Download; Upload, as a photo or a document). internal/bot
// builds the chat's screens on top of it; tgformat renders the model's
// Markdown as Telegram HTML; telegramtest is a fake Bot API server for
// tests.
//
// # Receiving
//
// New does no I/O. Connect learns the bot (getMe) and opens the inbox;
// Kept returns what the last run left; Listen registers the webhook (or
// removes one, for polling) and sets the Handler every new update is
// handed to, once; Serve receives until its context ends.
//
// go-telegram/bot hands each getUpdates batch to its handler goroutine
// through a buffered channel and asks for the next batch — confirming
// this one to Telegram — without waiting for the handlers. So with
// Options.InboxDir every update is journaled and synced (inbox.go) in the
// poller's HTTP client, as the getUpdates answer arrives, before the
// library sees it (by the webhook, before its 200), and the caller marks
// it done (Client.Done) once nothing more is needed from it. An update
// Telegram sends again after a restart is handed out once.
//
// WebhookHandler takes Telegram's posts: a missing or wrong secret token
// gets 401, a body that is not an update 400 (413 above 1 MiB), and a post
// before Listen or after Serve ended 503, which Telegram delivers again.
// Health tells a stalled poller from an idle one, for /healthz.
//
// # One sender for each chat
//
// Every Bot API call addressed to a chat goes through the sender
// (sender.go): one queue per chat, run in order by a worker of its own.
// Calls that send or change a message are Paced under Telegram's limits
// (Limits: one a second in a chat, twenty a minute in a group, thirty a
// second in all, the last handed out in the order the chats asked), each
// holding its slot from its start until a period after its answer, so
// they never reach Telegram closer together than that. A 429 holds every
// call of that chat until its retry_after has passed, and only that
// chat; a 5xx or a network error backs off exponentially (0.5 s doubling
// up to 8 s), five tries in all; any other 4xx is final at once. Typing,
// deletions and answers to button presses are Unpaced, and may go ahead
// of a message waiting for its second. A queued call with the key of one
// still waiting replaces it (the newest text of a live message wins).
// Calls to no chat (getMe, setWebhook, …) use the same retry policy
// without the queue (Call). A final failure is returned. Error texts are
// scrubbed of the bot token, the webhook secret and the redactor's
// secrets before they reach a log line or a reply (Scrub).
package telegram
