// Package tgformat turns text into Telegram messages: the model's Markdown into the HTML subset of Telegram's
// HTML parse mode, cut into messages within Telegram's limit of 4096 UTF-16 code units of visible text, and
// plain text (command replies, server lists) cut the same way.
//
// Render parses with goldmark (CommonMark and the GFM extensions) and walks the syntax tree into a document of
// visible text and the elements that format it (bold, links, code blocks, quotes). The splitter works on that
// visible text, never on HTML, so a cut falls inside no tag and no character reference; each message closes the
// elements it opened and reopens those that continue from the previous one. A [Chunk] carries a message's HTML
// and the same text without markup, to send when Telegram refuses the HTML anyway. [CutPlain] and [PreChunks] cut
// text that is not Markdown.
//
// Telegram counts lengths, and the offsets of message entities, in UTF-16 code units: [UTF16Len] is the one
// function in the tree that counts them, and [ByteOffset] turns an entity's offset back into a byte offset.
//
// The package is pure: no I/O, no Telegram client, no logger, no state but the shared parser; its functions are
// safe for concurrent use.
package tgformat
