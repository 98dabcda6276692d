//go:build !linux

package stdio

// Listens cannot tell off Linux: known is false.
func (p *Process) Listens(port int) (listens, known bool) { return false, false }
