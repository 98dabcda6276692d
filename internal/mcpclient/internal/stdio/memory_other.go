//go:build !linux

package stdio

// TreeMemory is unknown off Linux: 0.
func (p *Process) TreeMemory() int64 { return 0 }
