package session

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/google/renameio/v2"

	"github.com/volcanicbot/volcanicbot/internal/mcpclient"
	"github.com/volcanicbot/volcanicbot/internal/mcpconfig"
)

// What the model reads when a call it asked for was not run.
const (
	deniedResult    = "The user denied this call."
	cannotAskResult = "This call needs a user's approval, which could not be asked for, so it was not run."
	stoppedResult   = "cancelled: the user stopped this turn"
)

// approve decides whether the MCP call of t with args may run under its
// server's approval rule: at once, after an "always in this chat" given
// before, or after asking the chat (user started the turn). When it may
// not, the text is the call's result for the model.
func (s *session) approve(ctx context.Context, t mcpclient.Tool, args json.RawMessage, user int64) (bool, string) {
	m := s.m
	cfg, ok := m.o.MCP.Server(t.Server)
	if !ok {
		return true, ""
	}
	rule := cfg.ApprovalFor(t.MCPName, t.Name, t.Annotations.ReadOnly())
	switch {
	case rule == mcpconfig.RunFreely:
		return true, ""
	case rule == mcpconfig.AskFirst && s.grants.has(m.grantsPath(s.id), t.Server, t.MCPName, m.logger):
		return true, ""
	}
	ap, ok := m.o.Chat.(Approver)
	if !ok {
		m.logger.Warn("a tool call needs approval, and the chat cannot ask", "chat", s.id, "server", t.Server, "tool", t.MCPName)
		return false, cannotAskResult
	}
	req := ApprovalRequest{
		UserID: user, Server: t.Server, Tool: t.MCPName, Exposed: t.Name, Annotations: t.Annotations,
		Arguments: json.RawMessage(m.o.Redactor.Redact(string(args))), OfferAlways: rule == mcpconfig.AskFirst,
		Timeout: m.o.ApprovalTimeout,
	}
	decision, err := ap.Approve(ctx, s.id, req)
	switch {
	case err == nil && decision == ApprovedAlways:
		if err := s.grants.add(m.grantsPath(s.id), t.Server, t.MCPName, user, m.o.Now()); err != nil {
			m.logger.Warn("\"always in this chat\" not saved: it holds until the conversation is released", "chat", s.id, "err", err)
		}
		m.logger.Info("tool approved for this chat", "chat", s.id, "server", t.Server, "tool", t.MCPName, "user", user)
		return true, ""
	case err == nil && decision == Approved:
		m.logger.Info("tool call approved", "chat", s.id, "server", t.Server, "tool", t.MCPName)
		return true, ""
	case err == nil:
		m.logger.Info("tool call denied", "chat", s.id, "server", t.Server, "tool", t.MCPName)
		return false, deniedResult
	case errors.Is(err, ErrNoApproval):
		m.logger.Info("tool call denied: no answer in time", "chat", s.id, "server", t.Server, "tool", t.MCPName)
		return false, fmt.Sprintf("The user denied this call: nobody approved it within %s.", m.o.ApprovalTimeout)
	case ctx.Err() != nil:
		return false, stoppedResult
	}
	m.logger.Warn("approval not asked", "chat", s.id, "server", t.Server, "tool", t.MCPName, "err", err)
	return false, cannotAskResult
}

// approvalsDir holds the chats' "always in this chat" grants, one file a
// chat, under the data directory: outside the chat's workspace, which the
// agent's own servers may write to, so that it cannot approve itself.
const approvalsDir = "approvals"

// grantsPath is chat's file of grants.
func (m *Manager) grantsPath(chatID int64) string {
	return filepath.Join(m.o.DataDir, approvalsDir, strconv.FormatInt(chatID, 10)+".json")
}

// grants are a chat's "always in this chat" approvals, read from its file
// on first use and written there when one is added. They outlive /new
// and restarts. The tool calls of a turn use them concurrently.
type grants struct {
	mu     sync.Mutex
	loaded bool
	list   []grant
}

type grant struct {
	Server string    `json:"server"`
	Tool   string    `json:"tool"`
	By     int64     `json:"by,omitempty"`
	At     time.Time `json:"at"`
}

// loadLocked reads the file once; a missing or unreadable one is no grants.
func (g *grants) loadLocked(path string, log interface{ Warn(string, ...any) }) {
	if g.loaded {
		return
	}
	g.loaded = true
	data, err := os.ReadFile(path)
	if err != nil {
		if !errors.Is(err, os.ErrNotExist) {
			log.Warn("approvals of the chat not read", "err", err)
		}
		return
	}
	var f struct {
		Always []grant `json:"always"`
	}
	if err := json.Unmarshal(data, &f); err != nil {
		log.Warn("approvals of the chat not read", "err", err)
		return
	}
	g.list = f.Always
}

func (g *grants) has(path, server, tool string, log interface{ Warn(string, ...any) }) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.loadLocked(path, log)
	return slices.ContainsFunc(g.list, func(x grant) bool { return x.Server == server && x.Tool == tool })
}

// add grants server's tool in the chat and saves the grants.
func (g *grants) add(path, server, tool string, by int64, at time.Time) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.loadLocked(path, nopWarn{})
	if !slices.ContainsFunc(g.list, func(x grant) bool { return x.Server == server && x.Tool == tool }) {
		g.list = append(g.list, grant{Server: server, Tool: tool, By: by, At: at.UTC()})
	}
	data, err := json.MarshalIndent(struct {
		Always []grant `json:"always"`
	}{g.list}, "", "  ")
	if err != nil {
		return err
	}
	return writeFileAtomic(path, append(data, '\n'))
}

type nopWarn struct{}

func (nopWarn) Warn(string, ...any) {}

// writeFileAtomic replaces path with data (0600) through renameio (a
// temporary file in the same folder, synced, then renamed), making the
// folder (0700) when missing.
func writeFileAtomic(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	return renameio.WriteFile(path, data, 0o600, renameio.WithStaticPermissions(0o600))
}
