package main

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strconv"

	"github.com/volcanicbot/volcanicbot/internal/pairing"
)

// The host's side of pairing: `volcanicbot allow <code>`, `volcanicbot
// revoke <user id>` and `volcanicbot users` change or show the users added
// in the data directory, beside a running bot (which sees the change at
// the next message of that user) or without one.

func (m hostAccess) store() *pairing.Store {
	return pairing.New(filepath.Join(m.dataDir, accessDir), nil, nil)
}

// hostAccess is the data directory the host's commands work on.
type hostAccess struct{ dataDir string }

func loadHostAccess(environ []string) (hostAccess, error) {
	cfg, err := LoadConfig(lookupIn(environ), environ)
	if err != nil {
		return hostAccess{}, err
	}
	return hostAccess{dataDir: cfg.DataDir}, nil
}

// runAllow is `volcanicbot allow <code>`.
func runAllow(stdout io.Writer, environ []string, code string) error {
	h, err := loadHostAccess(environ)
	if err != nil {
		return err
	}
	user, req, err := h.store().Allow(code, 0)
	switch {
	case errors.Is(err, pairing.ErrUnknownCode):
		return fmt.Errorf("no such code %q in %s (codes are %d characters; one is kept a day after it ended)",
			pairing.NormalizeCode(code), h.store().Dir(), pairing.CodeLen)
	case errors.Is(err, pairing.ErrExpired):
		return fmt.Errorf("the code expired at %s: the user gets a new one when they write to the bot again", req.Expires.UTC().Format("2006-01-02 15:04 UTC"))
	case errors.Is(err, pairing.ErrUsed):
		by := "on the host"
		if req.UsedBy != 0 {
			by = "by admin " + strconv.FormatInt(req.UsedBy, 10)
		}
		return fmt.Errorf("the code was used already, %s at %s", by, req.Used.UTC().Format("2006-01-02 15:04 UTC"))
	case err != nil:
		return err
	}
	name := user.Name
	if name == "" {
		name = "user"
	}
	fmt.Fprintf(stdout, "added %s (id %d): their next message to the bot is answered\n", name, user.ID)
	return nil
}

// runRevoke is `volcanicbot revoke <user id>`.
func runRevoke(stdout io.Writer, environ []string, arg string) error {
	id, err := strconv.ParseInt(arg, 10, 64)
	if err != nil {
		return fmt.Errorf("%q is not a Telegram user id", arg)
	}
	h, err := loadHostAccess(environ)
	if err != nil {
		return err
	}
	found, err := h.store().Revoke(id)
	if err != nil {
		return err
	}
	if !found {
		return fmt.Errorf("%d was not added by an admin (TELEGRAM_ALLOWED_USERS and TELEGRAM_ADMINS are changed in the configuration)", id)
	}
	fmt.Fprintf(stdout, "removed %d: their next message to the bot is refused\n", id)
	return nil
}

// runUsers is `volcanicbot users`.
func runUsers(stdout io.Writer, environ []string) error {
	cfg, err := LoadConfig(lookupIn(environ), environ)
	if err != nil {
		return err
	}
	users, err := hostAccess{dataDir: cfg.DataDir}.store().Users()
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "admins (TELEGRAM_ADMINS): %v\nallowed (TELEGRAM_ALLOWED_USERS): %v\nadded: %d\n",
		cfg.Telegram.Admins, cfg.Telegram.AllowedUsers, len(users))
	for _, u := range users {
		by := "on the host"
		if u.AddedBy != 0 {
			by = "by " + strconv.FormatInt(u.AddedBy, 10)
		}
		fmt.Fprintf(stdout, "  %d\t%s\t%s\t%s\n", u.ID, u.Name, by, u.AddedAt.UTC().Format("2006-01-02 15:04 UTC"))
	}
	return nil
}
