//go:build !linux

package main

// dropRoot is Linux's switch from root to the data directory's owner
// (privileges_linux.go); elsewhere it does nothing.
func dropRoot([]string) (string, error) { return "", nil }
