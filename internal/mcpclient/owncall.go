package mcpclient

import (
	"context"
	"encoding/json"
	"errors"
)

// CallOwn calls mcpName on server in this session for the bot itself (the
// live view reaching the chat's tab), not for a model: the tool need not be
// in the catalogue (a hidden one is fine), and its text comes back whole
// (within MaxResultBytes), neither inlined nor cut to the model's cap nor
// saved in the workspace. Nothing of args or the answer is logged: the
// caller may pass what a user typed. An error result is an error whose
// text is the result's (which may echo args: do not log it either).
func (s *Session) CallOwn(ctx context.Context, server, mcpName string, args json.RawMessage) (string, error) {
	conn, ok := s.conns[server]
	if !ok {
		return "", errors.New("unknown MCP server " + server)
	}
	res, err := conn.call(ctx, Tool{Server: server, MCPName: mcpName, Name: mcpName, own: true}, args)
	if err != nil {
		return "", err
	}
	if res.IsError {
		return "", errors.New(res.Text())
	}
	return res.Text(), nil
}
