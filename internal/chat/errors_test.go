package chat

import (
	"errors"
	"fmt"
	"testing"
)

type told struct{ msg string }

func (t *told) Error() string       { return "operator: " + t.msg }
func (t *told) UserMessage() string { return t.msg }

func TestUserMessage(t *testing.T) {
	tests := []struct {
		err  error
		msg  string
		told bool
	}{
		{&told{"the model is busy"}, "the model is busy", true},
		{fmt.Errorf("step 3: %w", &told{"wrapped"}), "wrapped", true},
		{errors.Join(errors.New("plain"), &told{"joined"}), "joined", true},
		{errors.New("plain"), "", false},
		{nil, "", false},
	}
	for _, tt := range tests {
		if msg, ok := UserMessage(tt.err); msg != tt.msg || ok != tt.told {
			t.Errorf("%v: %q %v, want %q %v", tt.err, msg, ok, tt.msg, tt.told)
		}
	}
}
