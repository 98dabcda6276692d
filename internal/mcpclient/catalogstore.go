package mcpclient

import (
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/volcanicbot/volcanicbot/internal/mcpconfig"
	"github.com/volcanicbot/volcanicbot/internal/store"
)

// catalogStore keeps each server's last discovered tool list on disk (a
// 0600 file per server in dir; in memory when dir is empty), so that a
// restarted bot offers a server's tools at once while its discovery runs
// again, and a server that needs a login again keeps offering the tools
// it had.
//
// What is kept is the server's raw tools/list and its ServerInfo, with the
// digest of the configuration they were listed under (the key): a file
// whose key no longer matches (the entry's command, args, env, URL …
// changed) is not used. The catalogue is built from it as from a live
// list, under the configuration of now: the filters (disabledTools, the
// preset's hidden tools) and the limits apply, and the redactor, as ever.
//
// Who may write it: the bot (and `check`, `login`), in the data
// directory, as its owner. A file that is not ours (not JSON, another
// server's, a link, over maxStoredCatalog) is ignored. Known secrets are
// redacted before the list is written (a server given a token may put it
// in a description).
type catalogStore struct {
	dir      string
	redactor Redactor

	mu  sync.Mutex
	mem map[string]storedCatalog // by server: what was saved, when dir is empty
}

// storedCatalog is one server's kept list.
type storedCatalog struct {
	Version int               `json:"version"`
	Server  string            `json:"server"`
	Key     string            `json:"key"` // the configuration's Digest
	Saved   time.Time         `json:"saved"`
	Info    ServerInfo        `json:"info"`
	Tools   []json.RawMessage `json:"tools"` // tools/list's entries, as the server sent them
}

// maxStoredCatalog bounds a kept list on disk (MaxToolsPerServer schemas
// of MaxSchemaBytes would be 32 MiB: such a list is not kept).
const maxStoredCatalog = 8 << 20

func newCatalogStore(dir string, r Redactor) *catalogStore {
	if r == nil {
		r = identity{}
	}
	return &catalogStore{dir: dir, redactor: r, mem: map[string]storedCatalog{}}
}

// path is the file of server, a server's internal name
// (mcpconfig.ServerConfig.Name: a safe name, a name written as other
// clients do — "github.com/upstash/context7-mcp" — made safe by
// mcpconfig). Any other name ("../x", "a/b", a Label) has none: ok false,
// nothing is written or read for it.
func (s *catalogStore) path(server string) (path string, ok bool) {
	if !mcpconfig.ValidServerName(server) {
		return "", false
	}
	return filepath.Join(s.dir, server+".tools.json"), true
}

// save keeps the list cfg's server answered. A failure costs only the
// list's being offered at once after a restart.
func (s *catalogStore) save(cfg mcpconfig.ServerConfig, info ServerInfo, raws []json.RawMessage) {
	info.Instructions = s.redactor.Redact(info.Instructions)
	kept := make([]json.RawMessage, 0, len(raws))
	for _, raw := range raws {
		if r := json.RawMessage(s.redactor.Redact(string(raw))); json.Valid(r) {
			kept = append(kept, r) // a tool whose redaction broke its JSON waits for the next discovery
		}
	}
	sc := storedCatalog{Version: 1, Server: cfg.Name, Key: cfg.Digest(), Saved: time.Now().UTC(), Info: info, Tools: kept}
	path, ok := s.path(cfg.Name)
	if !ok {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.dir == "" {
		s.mem[cfg.Name] = sc
		return
	}
	b, err := json.Marshal(sc)
	if err != nil || len(b) > maxStoredCatalog {
		return
	}
	if err := os.MkdirAll(s.dir, 0o700); err != nil {
		return
	}
	own, err := store.OwnerOf(filepath.Dir(s.dir))
	if err != nil || own(s.dir) != nil {
		return
	}
	_ = store.WriteFile(path, b, own)
}

// load is the list kept for cfg's server under its configuration of now.
func (s *catalogStore) load(cfg mcpconfig.ServerConfig) (ServerInfo, []json.RawMessage, bool) {
	path, ok := s.path(cfg.Name)
	if !ok {
		return ServerInfo{}, nil, false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	sc, ok := s.mem[cfg.Name]
	if s.dir != "" {
		ok = readStoredCatalog(path, &sc)
	}
	if !ok || sc.Version != 1 || sc.Server != cfg.Name || sc.Key != cfg.Digest() {
		return ServerInfo{}, nil, false
	}
	return sc.Info, sc.Tools, true
}

// readStoredCatalog reads the kept list at path: a regular file (not a
// link) of at most maxStoredCatalog bytes.
func readStoredCatalog(path string, sc *storedCatalog) bool {
	if fi, err := os.Lstat(path); err != nil || !fi.Mode().IsRegular() {
		return false
	}
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxStoredCatalog+1))
	if err != nil || len(b) > maxStoredCatalog {
		return false
	}
	return json.Unmarshal(b, sc) == nil
}
