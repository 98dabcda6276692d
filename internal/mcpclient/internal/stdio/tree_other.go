//go:build !linux

package stdio

import (
	"errors"
	"os/exec"
)

// trackerSys: without Linux's cgroups, subreaper and /proc, a Tracker
// tracks process groups only.
type trackerSys struct{}

func (t *Tracker) openSys(want TrackMode) (TrackMode, error) {
	switch want {
	case TrackAuto, TrackGroups:
		return TrackGroups, nil
	}
	return 0, errors.New("only process groups can be tracked on this system")
}

func (t *Tracker) startSys(cmd *exec.Cmd, mark string) (*exec.Cmd, tree, error) {
	addMark(cmd, mark)
	if err := cmd.Start(); err != nil {
		return nil, nil, err
	}
	return cmd, newGroupTree(cmd.Process.Pid), nil
}

func (t *Tracker) closeSys() {}

// ReapOrphans is the package's ReapOrphans: no cgroups or records here.
func (t *Tracker) ReapOrphans() []int { return ReapOrphans(t.o.Owner) }
