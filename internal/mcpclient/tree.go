package mcpclient

import "github.com/volcanicbot/volcanicbot/internal/mcpclient/internal/stdio"

// Tracker follows the process trees of the servers a bot process starts
// (Options.Tracker), so that what a server started ends with it even when
// it left the server's process group: a cgroup per server, or the bot as a
// child subreaper (see TrackMode). One per bot process; Open it at start,
// Close it after the Client.
type Tracker = stdio.Tracker

// TrackerOptions configure a Tracker: the owner of the marks, where the
// subreaper mode keeps its record of the trees, the logger.
type TrackerOptions = stdio.TrackerOptions

// TrackMode is how a Tracker follows the trees.
type TrackMode = stdio.TrackMode

// The tracking modes (see stdio.TrackMode).
const (
	TrackAuto      = stdio.TrackAuto
	TrackGroups    = stdio.TrackGroups
	TrackSubreaper = stdio.TrackSubreaper
	TrackCgroup    = stdio.TrackCgroup
)

// NewTracker returns a Tracker; it does no I/O (Open does).
func NewTracker(o TrackerOptions) *Tracker { return stdio.NewTracker(o) }
