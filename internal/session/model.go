package session

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/volcanicbot/volcanicbot/internal/agent"
	"github.com/volcanicbot/volcanicbot/internal/chat"
	"github.com/volcanicbot/volcanicbot/internal/llm"
)

// modelFile is the chat's pick of the models (/model), in its private
// folder: the chat's servers cannot change it.
const modelFile = "model.json"

// ModelChoice is a chat's model as /model shows it.
type ModelChoice struct {
	// Current is the model the chat's requests go to.
	Current string
	// Models are the models a chat may pick (Options.Models), the
	// default first.
	Models []string
	// Gone is the model the chat picked that is no longer one of Models:
	// it has the default again. "" when none.
	Gone string
}

// UnknownModelError is a pick of a model that is not one of the models
// a chat may pick: tell the user Models.
type UnknownModelError struct {
	Name   string
	Models []string
}

func (e *UnknownModelError) Error() string {
	return fmt.Sprintf("no model %q: the models are %s", e.Name, strings.Join(e.Models, ", "))
}

// ModelError is a chat's pick of a model failing to be read or kept (its
// model.json): the operator's detail is Err; tell the user it could not
// be read or changed, nothing more.
type ModelError struct{ Err error }

func (e *ModelError) Error() string { return "the chat's model: " + e.Err.Error() }
func (e *ModelError) Unwrap() error { return e.Err }

// modelPicks orders the changes of the chats' picks (a read and a
// store.WriteFile each). Reads take no lock: a file is replaced whole.
type modelPicks struct{ mu sync.Mutex }

// models are the models a chat may pick, the default first.
func (m *Manager) models() []string {
	if len(m.o.Models) > 0 {
		return m.o.Models
	}
	if m.o.ModelName != "" {
		return []string{m.o.ModelName}
	}
	return nil
}

func (m *Manager) modelPath(place chat.Place) string {
	return filepath.Join(m.Private(place), modelFile)
}

// pickedModel reads the chat's pick: "" when it made none.
func (m *Manager) pickedModel(place chat.Place) (string, error) {
	data, err := os.ReadFile(m.modelPath(place))
	if errors.Is(err, os.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	var f struct {
		Model string `json:"model"`
	}
	if err := json.Unmarshal(data, &f); err != nil {
		return "", fmt.Errorf("%s: %w", m.modelPath(place), err)
	}
	return f.Model, nil
}

// Model is chat's model: its pick, or the default when it made none or
// picked one that is no longer offered.
func (m *Manager) Model(place chat.Place) (ModelChoice, error) {
	models := m.models()
	c := ModelChoice{Models: slices.Clone(models)}
	if len(models) > 0 {
		c.Current = models[0]
	}
	picked, err := m.pickedModel(place)
	if err != nil {
		return c, &ModelError{Err: err}
	}
	switch {
	case picked == "":
	case slices.Contains(models, picked):
		c.Current = picked
	default:
		c.Gone = picked
	}
	return c, nil
}

// SetModel makes name chat's model, kept across restarts (an
// *UnknownModelError when it is not one of the models offered), and
// returns the chat's model as it is now.
func (m *Manager) SetModel(place chat.Place, name string) (ModelChoice, error) {
	models := m.models()
	if !slices.Contains(models, name) {
		return ModelChoice{}, &UnknownModelError{Name: name, Models: slices.Clone(models)}
	}
	m.picks.mu.Lock()
	defer m.picks.mu.Unlock()
	data, _ := json.Marshal(struct {
		Model string `json:"model"`
	}{name})
	if err := writeFileAtomic(m.modelPath(place), append(data, '\n')); err != nil {
		return ModelChoice{}, &ModelError{Err: err}
	}
	m.logger.Info("the chat's model changed", "chat", place, "model", name)
	return m.Model(place)
}

// model is the model the chat's next request goes to; a pick it cannot
// read is the default's, and logged.
func (s *session) model() string {
	c, err := s.m.Model(s.id)
	if err != nil {
		s.m.logger.Warn("the chat's model is not read: the default model answers", "chat", s.id, "err", err)
	}
	return c.Current
}

// reserve asks the allowance for req, made for place on behalf of user:
// its prompt and the longest answer it may write, at its model's price.
// The allowance is the chat's: every topic of a forum spends it.
func (m *Manager) reserve(ctx context.Context, place chat.Place, user int64, req llm.Request) (spent func(llm.Usage), notice string, err error) {
	answer := agent.AnswerTokens(req.MaxTokens)
	prompt := agent.RequestTokens(req.System, req.Tools, req.Messages, req.MaxTokens) - answer
	return m.o.Allowance.Reserve(ctx, place.Chat, user, req.Model, prompt, answer)
}
