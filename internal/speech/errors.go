package speech

import (
	"errors"
	"fmt"
)

// Error is a failed transcription or speech request: User is what the
// chat's user is told, Err the cause for the operator's log.
type Error struct {
	User string
	Err  error
}

func (e *Error) Error() string { return fmt.Sprintf("speech: %s: %v", e.User, e.Err) }

func (e *Error) Unwrap() error { return e.Err }

// UserMessage is what the chat is told (chat.UserMessage reads it).
func (e *Error) UserMessage() string { return e.User }

// ErrTooBig is audio over the limit (Options.MaxBytes): the caller should
// tell the user, not retry.
var ErrTooBig = errors.New("the audio is too big")

// ErrNothingHeard is a transcription with no words in it (silence, noise).
var ErrNothingHeard = errors.New("no words in the audio")
