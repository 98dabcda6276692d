package mcpconfig

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// SettingsFileName is the file in the agent directory that holds the
// servers.
const SettingsFileName = "settings.json"

// The top-level shapes of the files other clients write, all read from
// settings.json:
//
//	{"mcpServers": {…}}          Claude Desktop, Claude Code, Cursor, Cline, Windsurf, …
//	{"servers": {…}}             VS Code's .vscode/mcp.json
//	{"mcp": {"servers": {…}}}    VS Code's and GitHub's settings
//
// Other root keys are ignored (settings.json may hold other settings).

// ParseSettings reads the servers of a settings.json, in file order.
// Unknown fields inside an entry are refused; a name defined twice (in one
// section or across them) is refused. origin describes the file in
// messages ("settings <path>"). Invalid JSON is reported with its line and
// column. Every refusal is returned, joined; the valid entries are
// returned alongside.
func ParseSettings(data []byte, origin string) ([]ServerConfig, error) {
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, nil
	}
	// Validate the whole document first: json.Unmarshal reports offsets
	// from the start of data, a Decoder from the start of its buffer.
	if err := json.Unmarshal(data, new(json.RawMessage)); err != nil {
		return nil, &ConfigError{Origin: origin, Msg: describeJSONError(data, err)}
	}
	if t := bytes.TrimSpace(data); t[0] != '{' {
		return nil, &ConfigError{Origin: origin, Msg: "the root must be a JSON object"}
	}
	root, err := objectMembers(bytes.TrimSpace(data))
	if err != nil {
		return nil, &ConfigError{Origin: origin, Msg: describeJSONError(data, err)}
	}
	p := settingsParser{origin: origin, names: map[string]bool{}, sections: map[string]bool{}}
	for _, m := range root {
		switch m.key {
		case "mcpServers", "servers":
			p.section(m.key, m.value)
		case "mcp":
			t := bytes.TrimSpace(m.value)
			if t[0] != '{' {
				continue // not the shape we read
			}
			inner, err := objectMembers(t)
			if err != nil {
				return nil, &ConfigError{Origin: origin, Msg: describeJSONError(data, err)}
			}
			for _, im := range inner {
				if im.key == "servers" {
					p.section("mcp.servers", im.value)
				}
			}
		}
	}
	return p.servers, errors.Join(p.errs...)
}

type settingsParser struct {
	origin   string
	servers  []ServerConfig
	errs     []error
	names    map[string]bool // every server name so far
	sections map[string]bool
}

// section parses one object of servers (the value of mcpServers, …).
func (p *settingsParser) section(key string, raw json.RawMessage) {
	if p.sections[key] {
		p.errs = append(p.errs, &ConfigError{Origin: p.origin, Field: key, Msg: key + " appears twice"})
		return
	}
	p.sections[key] = true
	t := bytes.TrimSpace(raw)
	if string(t) == "null" {
		return
	}
	if t[0] != '{' {
		p.errs = append(p.errs, &ConfigError{Origin: p.origin, Field: key,
			Msg: key + " must be an object (got " + jsonKind(t[0]) + ")"})
		return
	}
	members, err := objectMembers(t)
	if err != nil {
		p.errs = append(p.errs, &ConfigError{Origin: p.origin, Msg: describeJSONError(t, err)})
		return
	}
	for _, m := range members {
		if p.names[m.key] {
			p.errs = append(p.errs, &ConfigError{Origin: p.origin, Server: m.key, Msg: "the server is defined twice"})
			continue
		}
		p.names[m.key] = true
		c, err := ParseEntry(m.key, m.value, SourceSettings, p.origin)
		if err != nil {
			p.errs = append(p.errs, err)
			continue
		}
		p.servers = append(p.servers, c)
	}
}

// LoadSettingsFile reads the servers of dir/settings.json. A missing file
// or directory means no servers and no error.
func LoadSettingsFile(dir string) ([]ServerConfig, error) {
	path := filepath.Join(dir, SettingsFileName)
	data, err := os.ReadFile(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		return nil, fmt.Errorf("read settings: %w", err)
	}
	return ParseSettings(data, "settings "+path)
}
