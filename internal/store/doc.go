// Package store is how the bot keeps its records on disk: every stored
// record is either a journal or a file replaced whole, and this package
// is the one place that writes either.
//
// A journal (OpenJournal) is a file of JSON lines that only grows: the
// inbox of updates, a chat's transcript, the day's usage. A line is
// appended whole or not at all — a write cut short (a full disk) or a
// failed sync is cut off again, so the next line never follows part of
// one. Opening it first settles its tail: a last line without its line
// end (the bot died mid-write) is cut off, or, when the caller's Whole
// says it is a complete record that only lacks the newline, given one; so
// what is appended next is never glued to it. Reading it is bounded: a
// line over the journal's MaxLine is never held in memory, only reported
// (its size), and the lines after it are read. Lines are handed over as
// they are: whether a line is a record is the caller's to say (and to
// log), so a corrupt line in the middle costs that line only.
//
// A file replaced whole (WriteFile) — pairing's users, OAuth tokens,
// grants, a chat's browser state, the spend journal's compacted days, the
// browser's launch configuration, the subreaper's record of the MCP
// servers' processes — is written in a new file beside it
// (never in $TMPDIR: it may hold a token, and a rename across file
// systems is no rename), 0600 whatever the umask, given its owner,
// synced, renamed over the old one, and the folder synced: a crash at any
// point leaves the old file or the new one, never half of one. A symlink
// at the path is replaced by the file, never written through: a link
// planted where a record lives must not make the bot write elsewhere.
//
// The owner matters when a command runs as root beside a bot that runs as
// another user (`docker exec … volcanicbot allow`, `… login`): what the
// command writes into the data directory must stay the bot's to read and
// change. OwnerOf gives the function that does that.
package store
