package session

import (
	"encoding/json"
	"fmt"

	"github.com/volcanicbot/volcanicbot/internal/agent"
	"github.com/volcanicbot/volcanicbot/internal/llm"
)

// A summary made of a conversation (summary.go) is a line of the
// transcript of its own, {"summary":{"text":…,"covers":N}}, appended after
// the messages like them: the messages stay whole, and the conversation
// read back has the same head as before the restart — the last summary
// record, standing for the first N messages. A transcript without one (an
// older bot's) reads as before; an older bot reads a summary line as a
// message it cannot use and leaves it out.

// transcriptLine is one line of the transcript: a message, or a summary.
type transcriptLine struct {
	llm.Message
	Summary *agent.Summary `json:"summary,omitempty"`
}

// appendSummary stores sum as a summary record, synced.
func (t *transcript) appendSummary(sum agent.Summary) error {
	if t.j == nil { // a scheduled run's: kept in memory only
		t.summary = sum
		return nil
	}
	b, err := json.Marshal(struct {
		Summary agent.Summary `json:"summary"`
	}{sum})
	if err != nil {
		return fmt.Errorf("transcript: %w", err)
	}
	if err := t.j.Append(append(b, '\n')); err != nil {
		return fmt.Errorf("transcript: %w", err)
	}
	t.summary = sum
	return nil
}

// summaryAt returns the summary read back, when it fits msgs: it has a
// text and stands for messages that are there, up to a turn's start.
// false: it did not fit and is left out (the conversation is summarised
// again when needed). None read is the zero Summary, and fits.
func summaryAt(sum *agent.Summary, msgs []llm.Message) (agent.Summary, bool) {
	if sum == nil {
		return agent.Summary{}, true
	}
	if sum.Text == "" || sum.Covers <= 0 || sum.Covers > len(msgs) ||
		sum.Covers < len(msgs) && !agent.StartsTurn(msgs[sum.Covers]) {
		return agent.Summary{}, false
	}
	return *sum, true
}
