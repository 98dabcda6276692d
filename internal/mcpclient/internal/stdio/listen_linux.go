package stdio

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"strconv"
)

// Listens reports whether a process of p's tree (p and its live
// descendants) holds a socket listening on TCP port: known is false when
// that cannot be told (/proc unreadable). A start that waits for a port
// to take connections asks it, so that another program that took the
// port meanwhile is not taken for the server. A process that has exited
// listens on nothing.
func (p *Process) Listens(port int) (listens, known bool) {
	if p.Done() {
		return false, true
	}
	base := "/proc/" + strconv.Itoa(p.pid)
	inodes := map[string]bool{}
	read := false
	for _, f := range []string{"/net/tcp", "/net/tcp6"} { // the server's network namespace
		if listeningInodes(base+f, port, inodes) {
			read = true
		}
	}
	if !read { // gone (between Done and the read), or no /proc
		_, err := os.Stat("/proc/self/net/tcp")
		return false, err == nil
	}
	if len(inodes) == 0 {
		return false, true
	}
	tab := procStats()
	tree := map[int]bool{p.pid: true}
	tab.closure(tree)
	for pid := range tree {
		dir := "/proc/" + strconv.Itoa(pid) + "/fd/"
		fds, err := os.ReadDir(dir)
		if err != nil {
			continue
		}
		for _, fd := range fds {
			link, err := os.Readlink(dir + fd.Name())
			if err != nil {
				continue
			}
			if inode, ok := bytes.CutPrefix([]byte(link), []byte("socket:[")); ok && inodes[string(bytes.TrimSuffix(inode, []byte("]")))] {
				return true, true
			}
		}
	}
	return false, true
}

// listeningInodes adds to inodes those of the sockets in the table at path
// (/proc/net/tcp's format) listening on port; false when it cannot be
// read.
func listeningInodes(path string, port int, inodes map[string]bool) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	want := fmt.Appendf(nil, ":%04X", port)
	sc := bufio.NewScanner(f)
	sc.Scan() // the header
	for sc.Scan() {
		// sl local_address rem_address st tx_queue:rx_queue tr:tm->when retrnsmt uid timeout inode
		fields := bytes.Fields(sc.Bytes())
		if len(fields) < 10 || !bytes.Equal(fields[3], []byte("0A")) { // TCP_LISTEN
			continue
		}
		local := fields[1]
		i := bytes.LastIndexByte(local, ':')
		if i < 0 || !bytes.EqualFold(local[i:], want) {
			continue
		}
		inodes[string(fields[9])] = true
	}
	return sc.Err() == nil
}
