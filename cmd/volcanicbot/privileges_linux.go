package main

import (
	"errors"
	"fmt"
	"os"
	"os/user"
	"strconv"
	"syscall"
)

// dropRoot makes a process started as root the owner of the data
// directory, before it does anything else. In the image `docker exec
// <container> volcanicbot check` (and Coolify's terminal) runs as root,
// beside a bot that runs as volcanic: a root check left root-owned files
// (the browser's launch configuration, Chromium's folders) the bot could
// not write any more. As the data directory's owner, every command sees
// and writes what the bot does.
//
// Nothing changes when the process is not root, when the data directory
// belongs to root or does not exist (a host where root runs the bot on
// purpose), or when the configuration does not load (the command reports
// that). The user's groups are set as login would set them; HOME becomes
// the user's when /etc/passwd names one, as for a login. It reports the
// user it became ("" when none) and fails when the switch fails: going on
// as root would leave the files this is for.
func dropRoot(environ []string) (became string, err error) {
	if os.Geteuid() != 0 {
		return "", nil
	}
	cfg, err := LoadConfig(lookupIn(environ), environ)
	if err != nil {
		return "", nil
	}
	fi, err := os.Stat(cfg.DataDir)
	if err != nil {
		return "", nil
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok || st.Uid == 0 {
		return "", nil
	}
	uid, gid := int(st.Uid), int(st.Gid)
	name, groups, home := strconv.Itoa(uid), []int{gid}, ""
	if u, err := user.LookupId(name); err == nil {
		name, home = u.Username, u.HomeDir
		if ids, err := u.GroupIds(); err == nil {
			groups = groups[:0]
			for _, id := range ids {
				if g, err := strconv.Atoi(id); err == nil {
					groups = append(groups, g)
				}
			}
		}
	}
	// The stdlib's calls change every thread of the process (not
	// x/sys/unix's setgroups); groups first, the user last.
	if err := errors.Join(syscall.Setgroups(groups), syscall.Setresgid(gid, gid, gid), syscall.Setresuid(uid, uid, uid)); err != nil {
		return "", fmt.Errorf("started as root, could not become %s (uid %d), the owner of the data directory %s: %w", name, uid, cfg.DataDir, err)
	}
	if home != "" {
		if err := os.Setenv("HOME", home); err != nil {
			return "", err
		}
	}
	return name, nil
}
