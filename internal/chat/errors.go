package chat

import "errors"

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
