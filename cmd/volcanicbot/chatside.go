package main

import (
	"context"
	"os"
	"path/filepath"

	"github.com/volcanicbot/volcanicbot/internal/bot"
	"github.com/volcanicbot/volcanicbot/internal/document"
	"github.com/volcanicbot/volcanicbot/internal/llm"
	"github.com/volcanicbot/volcanicbot/internal/pairing"
	"github.com/volcanicbot/volcanicbot/internal/schedule"
	"github.com/volcanicbot/volcanicbot/internal/session"
	"github.com/volcanicbot/volcanicbot/internal/spend"
	"github.com/volcanicbot/volcanicbot/internal/telegram"
)

// chatSide builds what talks to the chats, each before what needs it:
// the Telegram client, the chat port on it, the sessions that answer
// through the chat port, the scheduler that runs the chats' tasks as
// their turns and delivers through the chat port, and the bot that hands
// the sessions what the chats send. It does no network I/O.
func (m *Main) chatSide(model llm.Model, ledger *spend.Ledger, jobs *schedule.Ledger) (*telegram.Client, *session.Manager, *bot.Bot, *schedule.Scheduler, error) {
	tg, err := telegram.New(telegram.Options{
		Token:      m.cfg.Telegram.Token,
		APIURL:     m.cfg.Telegram.APIURL,
		Logger:     m.logger,
		Redactor:   m.secrets,
		HTTPClient: m.HTTPClient,

		WebhookURL:    m.cfg.Telegram.WebhookURL,
		WebhookSecret: m.cfg.Telegram.WebhookSecret,
		InboxDir:      filepath.Join(m.cfg.DataDir, inboxDir),
		Limits:        m.TelegramLimits,

		LocalFilesDir: m.cfg.Telegram.LocalFilesDir,
		MaxLocalFile:  int64(m.cfg.Telegram.MaxFileMB) << 20,
	})
	if err != nil {
		return nil, nil, nil, nil, err
	}
	stats := tg.Stats
	m.metrics.sendStats.Store(&stats)
	// The chat port first: the sessions talk to the chats through it, and
	// the bot hands the sessions what the chats send.
	var handoffs session.Handoffs
	if m.live = m.liveView(); m.live != nil {
		handoffs = m.handoffs(m.live)
	}
	chat := bot.NewChat(bot.ChatOptions{Telegram: tg, Admins: m.cfg.Telegram.Admins, Speaker: m.cfg.speaker(m), Logger: m.logger})
	sessions := session.NewManager(session.Options{
		DataDir:       m.cfg.DataDir,
		Model:         model,
		ModelName:     m.cfg.LLM.Model,
		Models:        m.cfg.LLM.Models,
		MCP:           m.mcp,
		NewMCPSession: m.newMCPSession,
		Login:         m.login,
		Chat:          chat,
		Redactor:      m.secrets,
		Logger:        m.logger,
		SystemPrompt:  m.cfg.Agent.SystemPrompt,
		MaxSteps:      m.cfg.Agent.MaxSteps,
		NoStream:      m.cfg.Agent.NoStream,
		ContextTokens: m.cfg.LLM.ContextTokens,
		NoSummaries:   m.cfg.LLM.NoSummaries,
		ToolSearch:    m.cfg.LLM.ToolSearch,
		CountTokens:   m.tokens.Count,

		ApprovalTimeout: m.cfg.Agent.ApprovalTimeout,
		Handoffs:        handoffs,
		HandoffTimeout:  m.cfg.HandoffTimeout,
		Allowance:       ledger,
		DiscoveryWait:   m.DiscoveryWait,
		DiskBudget:      int64(m.cfg.ChatDiskBudgetMB) << 20,
		VoiceDefault:    m.cfg.Speech.TTSDefault,
		Documents:       m.documents(),
		DefaultZone:     m.cfg.Schedule.Zone,
		MaxTokensPerRun: m.cfg.Schedule.MaxTokensPerRun,
	})
	sched := m.scheduler(jobs, sessions, chat)
	b, err := bot.New(bot.Options{
		Telegram:     tg,
		Chat:         chat,
		Sessions:     sessions,
		AllowedUsers: m.cfg.Telegram.AllowedUsers,
		Admins:       m.cfg.Telegram.Admins,
		Logger:       m.logger,

		LoginCallback: loginCallbackURL(m.cfg.Telegram.WebhookURL),
		Pairing:       pairing.New(filepath.Join(m.cfg.DataDir, accessDir), nil, nil),
		Usage:         ledger,
		Voice:         m.cfg.voiceOptions(m),
		Jobs:          sched,
	})
	if err != nil {
		m.closeChatSide(sched, sessions, tg)
		return nil, nil, nil, nil, err
	}
	return tg, sessions, b, sched, nil
}

// scheduler runs the chats' scheduled tasks from jobs as turns of
// sessions, delivered through chat; runs of different chats go in
// parallel as far as every chat may have its browser (the memory plan),
// else four. It does no I/O.
func (m *Main) scheduler(jobs *schedule.Ledger, sessions *session.Manager, chat *bot.Chat) *schedule.Scheduler {
	sched := schedule.New(jobs, sessions, chat, nil, schedule.Options{
		MaxJobsPerChat: m.cfg.Schedule.MaxJobsPerChat,
		MinInterval:    m.cfg.Schedule.MinInterval,
		MaxParallel:    m.memPlan.Chats,
		Logger:         m.logger,
	})
	sessions.SetScheduler(sched)
	stats := scheduleStats(sched.Stats)
	m.metrics.schedule.Store(&stats)
	return sched
}

// newMCPSession is a chat's MCP session (session.Options.NewMCPSession).
func (m *Main) newMCPSession(workspace, private string) (session.MCPSession, error) {
	s, err := m.mcp.NewSession(workspace, private)
	if err != nil {
		return nil, err // not a nil *mcpclient.Session in a non-nil interface
	}
	return s, nil
}

// login starts an OAuth login from a chat (session.Options.Login).
func (m *Main) login(ctx context.Context, name, redirect string) (*session.MCPLogin, error) {
	l, err := m.mcp.Login(ctx, name, redirect)
	if err != nil {
		return nil, err
	}
	return session.NewMCPLogin(l.URL, l.State(), l.Finish), nil
}

// extractCommand is the hidden subcommand a document's extraction runs
// as (document.Serve), in a child of the bot.
const extractCommand = "extract-document"

// documents reads the documents users send in a child process, the
// binary itself; where the binary cannot be found they are only saved.
func (m *Main) documents() session.DocumentReader {
	exe, err := os.Executable()
	if err != nil {
		m.logger.Warn("documents will be saved but not read: the binary's path is unknown", "err", err)
		return nil
	}
	return &document.Runner{Command: []string{exe, extractCommand},
		Limits: document.Limits{TmpDir: os.TempDir()}}
}
