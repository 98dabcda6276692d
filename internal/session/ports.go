package session

import (
	"context"
	"encoding/json"
)

// Chat is what a session needs from the chat it serves. The bot implements
// it; tests use a fake.
type Chat interface {
	// SendText sends the model's Markdown answer (already redacted). The
	// implementation renders and splits it as the chat needs.
	SendText(ctx context.Context, chatID int64, markdown string) error
	// SendFile uploads a file of the workspace, already opened and
	// checked by the session: images (by content) as photos where the chat
	// allows, anything else as a document. It reads file.Content, at most
	// file.Size bytes, and never the file by its name.
	SendFile(ctx context.Context, chatID int64, file OutgoingFile, caption string) error
	// StartActivity shows that a turn is running (typing, a progress
	// message) until the returned Activity is done.
	StartActivity(ctx context.Context, chatID int64) Activity
}

// Activity is the visible progress of one turn.
type Activity interface {
	// ToolCall reports a tool call as it starts.
	ToolCall(name string, args json.RawMessage)
	// Done ends the activity (removes or finalises the progress message).
	Done()
}
