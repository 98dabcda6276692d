package session

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/volcanicbot/volcanicbot/internal/chat"
)

// A chat's time zone (/tz): the IANA name its scheduled tasks are read
// in and their times are told in. It is the chat's, not a topic's: every
// topic of a forum shares it, as it shares the allowance. It is kept in
// the chat's private folder (store.WriteFile: replaced whole, 0600).

const zoneFile = "timezone"

// maxZoneFile bounds what is read of the file: a zone name is short.
const maxZoneFile = 128

func (m *Manager) zonePath(place chat.Place) string {
	return filepath.Join(m.Private(chat.In(place.Chat)), zoneFile)
}

// Zone is place's chat's time zone: the one /tz set, else
// Options.DefaultZone (TZ), else "UTC". A set zone the host no longer
// knows is the default's, with an error for the log.
func (m *Manager) Zone(place chat.Place) (string, error) {
	def := m.o.DefaultZone
	if def == "" {
		def = "UTC"
	}
	f, err := os.Open(m.zonePath(place))
	if errors.Is(err, os.ErrNotExist) {
		return def, nil
	}
	if err != nil {
		return def, fmt.Errorf("the chat's time zone: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxZoneFile))
	if err != nil {
		return def, fmt.Errorf("the chat's time zone: %w", err)
	}
	name := strings.TrimSpace(string(data))
	if _, err := m.zones().Load(name); err != nil || name == "" {
		return def, fmt.Errorf("the chat's time zone %q: unknown", name)
	}
	return name, nil
}

// SetZone makes name place's chat's time zone, kept across restarts; an
// unknown name is an error written for the user. Jobs scheduled before
// keep the zone they were made in.
func (m *Manager) SetZone(place chat.Place, name string) error {
	name = strings.TrimSpace(name)
	if _, err := m.zones().Load(name); err != nil || name == "" {
		return &zoneError{name: name}
	}
	if err := writeFileAtomic(m.zonePath(place), []byte(name+"\n")); err != nil {
		return fmt.Errorf("the chat's time zone: %w", err)
	}
	m.logger.Info("the chat's time zone changed", "chat", place.Chat, "zone", name)
	return nil
}

// zoneError is a name no time zone has.
type zoneError struct{ name string }

func (e *zoneError) Error() string { return fmt.Sprintf("unknown time zone %q", e.name) }

// UserMessage is what the chat reads.
func (e *zoneError) UserMessage() string {
	return fmt.Sprintf("There is no time zone %q. Give an IANA name such as Europe/Berlin, America/New_York or UTC.", e.name)
}
