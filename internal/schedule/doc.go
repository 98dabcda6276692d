// Package schedule runs a chat's tasks later and repeatedly — reminders,
// morning digests, page watchers — so that each fires when due, once, and
// its answer arrives, across restarts and crashes.
//
// # Specs
//
// A job's schedule is exactly one of `in` (a delay, made an absolute time
// at creation), `at` (a local date-time in the chat's zone, or RFC 3339),
// `every` (an absolute interval counted from creation) or `cron` (five
// fields, robfig/cron's parser), in the chat's IANA zone. Parse refuses
// the rest with a *Refusal whose Reason the model relays. Cron times stay
// on the wall clock across daylight saving: a time in the hour the clocks
// skip runs at the change, a time in the hour they repeat runs once (an
// hourly expression in both hours).
//
// # Exactly once: two ledgers in one journal
//
// Everything lives in one journal, <dir>/ledger.jsonl (internal/store:
// appended whole and synced, a torn tail cut at open, rewritten by atomic
// replace when it has grown). Each line carries the new whole value of
// what it changes, so replaying the lines gives the state back, and one
// line is one write: a crash keeps all of it or none.
//
// Runs and deliveries are recorded apart, as two ledgers would be:
//
//   - A run is keyed by its job and slot (j7@1764748800). Its start is
//     recorded — together with the job's next slot — before the Runner is
//     called; a slot whose start is on record never starts again. So a
//     job due while the bot was down runs once at the start, marked late
//     (a recurring job's next slot is counted from now: missed slots are
//     not made up one by one).
//   - A run's end, the job's new state (a watcher's last answer, the
//     errors in a row) and the Delivery it leaves (pending) are one
//     record. A delivery is tried until it is delivered or refused for
//     good (the chat is gone: the job is paused with the reason); each
//     try is recorded. A restart sends what is pending and runs nothing
//     again.
//
// What remains is at the edges, and is chosen, not hidden:
//
//   - Killed during a run, the bot runs the same slot again at its next
//     start (the second attempt; the answer never reached anyone). Killed
//     during that too, the run is given up as interrupted and the user
//     told: a run that kills the bot does not loop.
//   - Killed after Telegram took a text and before its record, the text
//     is sent again: the Bot API has no idempotency key, and losing an
//     answer is worse than repeating one. The window is one HTTP call.
//     A long text cut short resumes after the parts sent
//     (chat.PartlySentError, Message.Skip).
//
// # Running
//
// A Scheduler owns a timer loop and, per chat, a lane: its runs one at a
// time (a chat's forum topics share it), its deliveries one at a time and
// in order. Runs of different chats run in parallel up to MaxParallel.
// Close cancels runs under way (they run again at the next start) and
// waits for every goroutine. The Runner (the session's turn), the
// Deliverer (the chat's sender) and the clock (time, faked with
// testing/synctest in tests) are its ports.
//
// # Decisions where the issue is silent
//
//   - A chat's limit counts its jobs that still run (a done one-off job
//     does not), across its forum topics; listing, cancelling and Run now
//     are per place (chat and topic); CancelAny is for admins.
//   - A one-off job is done after its run and stays listed for a week.
//   - Every run of a recurring job that fails counts toward the errors in
//     a row; the user is told once at ErrorsToTell (3), again only after
//     a success ends the streak. A one-off job's failure is told at once.
//   - A late run's text says it is late, whatever the model writes.
//   - A watcher compares answers by lines with white space normalised;
//     "what changed" counts lines added and removed (a moved line is no
//     change) and shows five of each.
//   - Cancelling a job cancels its run under way; an answer already
//     waiting for delivery is still delivered.
//   - A job whose delivery was refused for good stays paused until
//     resumed (Resume); runs due meanwhile are skipped, not saved up.
//   - Jobs are bot-wide state, so the ledger is one file in a folder the
//     wiring gives (<data>/schedule), not per chat: /jobs all and
//     `volcanicbot jobs` (ReadLedger, which never writes) need every
//     chat's, and one journal orders all records.
package schedule
