//go:build !race

package fakemcp

const raceEnabled = false
