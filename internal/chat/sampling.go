package chat

import "context"

// A server's requests to the chat's side of the conversation: a model
// completion (MCP sampling) and a question to the chat's user (MCP
// elicitation; see question.go). The MCP adapter parses them; the
// session answers them.

// Sampler answers a server's sampling/createMessage with the bot's own
// model: the session satisfies it, and counts what it costs in the chat's
// usage. Only a server whose entry says "sampling": true is offered it.
type Sampler interface {
	Sample(ctx context.Context, r SamplingRequest) (SamplingResult, error)
}

// SamplingRequest is a server's request for one model completion.
type SamplingRequest struct {
	Server       string // the server's configured name
	Messages     []SamplingMessage
	SystemPrompt string
	MaxTokens    int
	Temperature  *float64
	Stop         []string
	// ModelHints are the names the server would like (its
	// modelPreferences.hints), for the log: the bot's model answers.
	ModelHints []string
}

// SamplingMessage is one message of a sampling request: the role (user
// or assistant) and its text and images.
type SamplingMessage struct {
	Role    string
	Content []Part
}

// SamplingResult is the model's answer.
type SamplingResult struct {
	Model      string
	Text       string
	StopReason string // endTurn, maxTokens, stopSequence
}

// Elicitor asks the chat's user what a server wants to know
// (elicitation/create). The session satisfies it; the MCP sessions of a
// chat without one declare no elicitation capability (discovery and
// check decline every request).
//
// Elicit returns the user's answer: accept with the content (form mode;
// the adapter checks it against the form and fills in the defaults of
// the fields left out), decline, or cancel. It should return when ctx
// ends (the call timeout, the connection closed) with cancel. The user's
// answers go to the server, never to the model.
type Elicitor interface {
	Elicit(ctx context.Context, e Elicitation) (ElicitResult, error)
}
