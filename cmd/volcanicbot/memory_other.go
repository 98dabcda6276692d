//go:build !linux

package main

// memoryLimit is unknown off Linux: 0.
func memoryLimit() int64 { return 0 }
