package mcpclient

import (
	"testing"

	"github.com/volcanicbot/volcanicbot/internal/chat"
)

// statusOf is /mcp's status of the server name in s.
func statusOf(t *testing.T, s *Session, name string) chat.ServerStatus {
	t.Helper()
	for _, st := range s.MCPStatus().Servers {
		if st.Name == name {
			return st
		}
	}
	t.Fatalf("/mcp has no server %s", name)
	return chat.ServerStatus{}
}

// detailOf is /mcp <name>'s status of the server name in s.
func detailOf(t *testing.T, s *Session, name string) chat.ServerStatus {
	t.Helper()
	st, err := s.ServerStatus(name)
	if err != nil {
		t.Fatalf("/mcp %s: %v", name, err)
	}
	return st
}

// toolNames are the exposed names of tools.
func toolNames(tools []chat.CatalogTool) []string {
	out := make([]string, len(tools))
	for i, t := range tools {
		out[i] = t.Name
	}
	return out
}
