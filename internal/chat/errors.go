package chat

import (
	"errors"
	"fmt"
)

// UserMessage is what the chat's user is told of err: the UserMessage of
// the first error in err's chain that has one — a failed model request's,
// a failed login's — written for the user, apart from what the operator's
// log says (err.Error()). ok is false when no error in the chain has one:
// the caller then says it its own way.
func UserMessage(err error) (msg string, ok bool) {
	var um interface{ UserMessage() string }
	if errors.As(err, &um) {
		return um.UserMessage(), true
	}
	return "", false
}

// PartlySentError is a text sent in parts (a long answer split into
// several messages) of which the first Sent were handed to the chat before
// Err stopped the rest (a shutdown, mostly). Whoever sends the text again
// later starts at part Sent, so that the chat does not read the first ones
// twice.
type PartlySentError struct {
	Sent int
	Err  error
}

func (e *PartlySentError) Error() string {
	return fmt.Sprintf("%d part(s) sent, then: %v", e.Sent, e.Err)
}

func (e *PartlySentError) Unwrap() error { return e.Err }

// SentParts is how many parts of a text err's chain says reached the chat
// (PartlySentError); 0 when it says nothing.
func SentParts(err error) int {
	var ps *PartlySentError
	if errors.As(err, &ps) {
		return ps.Sent
	}
	return 0
}
