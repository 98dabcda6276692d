// Package mcpconfig is the MCP server configuration users edit, in one
// place: the entry shape (every MCP client's mcpServers block, plus our own
// fields and the fields other clients write), settings.json and the other
// top-level shapes clients use, the config file's mcp.servers section and
// the MCP__SERVERS__<NAME>__<FIELD> variables, merging the sources (presets
// included), validation with field names and hints, and the ${workspace}
// and ${env:NAME} expansion that turns an entry into a process to spawn.
//
// Every source goes through one field table (fields.go): a field is found
// by its name ignoring case, '_' and '-', so toolPrefix, TOOLPREFIX,
// tool_prefix and tool-prefix are one field wherever they are written.
//
// It imports nothing of volcanicbot's: mcpclient runs what it describes,
// preset builds entries of its own, and main wires the sources together.
package mcpconfig
