package main

import (
	"github.com/volcanicbot/volcanicbot/internal/mcpclient"
	"github.com/volcanicbot/volcanicbot/internal/session"
)

// The MCP client is the sessions' catalogue, and each of its sessions a
// chat's MCP session (chatside.go wires them).
var (
	_ session.Catalogue  = (*mcpclient.Client)(nil)
	_ session.MCPSession = (*mcpclient.Session)(nil)
)
