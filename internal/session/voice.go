package session

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/volcanicbot/volcanicbot/internal/chat"
)

// Voice answers (/voice): whether a chat's answers are also read aloud,
// kept in its private folder (voice.json); Options.VoiceDefault for a
// chat that never said. The chat port reads them aloud (VoiceChat).

// voiceFile is the chat's /voice choice, in its private folder.
const voiceFile = "voice.json"

// voiceTimeout bounds reading one answer aloud (every part of it): the
// chat's next message waits for it.
const voiceTimeout = 2 * time.Minute

func (m *Manager) voicePath(place chat.Place) string {
	return filepath.Join(m.Private(place), voiceFile)
}

// Voice reports whether chat's answers are read aloud.
func (m *Manager) Voice(place chat.Place) (bool, error) {
	data, err := os.ReadFile(m.voicePath(place))
	if errors.Is(err, os.ErrNotExist) {
		return m.o.VoiceDefault, nil
	}
	if err != nil {
		return m.o.VoiceDefault, err
	}
	var f struct {
		Voice bool `json:"voice"`
	}
	if err := json.Unmarshal(data, &f); err != nil {
		return m.o.VoiceDefault, fmt.Errorf("%s: %w", m.voicePath(place), err)
	}
	return f.Voice, nil
}

// SetVoice makes chat's answers read aloud (on) or not, kept across
// restarts and /new.
func (m *Manager) SetVoice(place chat.Place, on bool) error {
	data, _ := json.Marshal(struct {
		Voice bool `json:"voice"`
	}{on})
	if err := writeFileAtomic(m.voicePath(place), append(data, '\n')); err != nil {
		return err
	}
	m.logger.Info("the chat's voice answers changed", "chat", place, "voice", on)
	return nil
}

// speak reads the turn's answer aloud when the chat asked for it and its
// chat port can (VoiceChat), after the text went out; /stop (the end of
// ctx) and the shutdown cut it short.
func (s *session) speak(ctx context.Context, text string) {
	vc, ok := s.m.o.Chat.(VoiceChat)
	if !ok {
		return
	}
	on, err := s.m.Voice(s.id)
	if err != nil {
		s.m.logger.Warn("the chat's voice answers are not read", "chat", s.id, "err", err)
	}
	if !on {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, voiceTimeout)
	defer cancel()
	if err := vc.SendVoiceAnswer(ctx, s.id, s.m.o.Redactor.Redact(text)); err != nil && ctx.Err() == nil {
		s.m.logger.Warn("the answer was not read aloud", "chat", s.id, "err", err)
	}
}
