// Command conformance-client runs the official MCP conformance suite
// (@modelcontextprotocol/conformance) against volcanicbot's MCP client,
// internal/mcpclient, and is the client the suite drives.
//
//	conformance-client suite [-conformance DIR] [-era 2025-11-25,2026-07-28] [-run REGEXP]
//
// runs every client scenario of each protocol era (extensions excluded, see
// docs/mcp.md), one after the other, prints one line per scenario and
// "N passed, M failed", and exits non-zero when a scenario failed. DIR is
// tools/conformance, where `npm ci` installed the suite and the Node.js it
// needs (make conformance does both).
//
//	conformance-client <server-url>
//
// is what the suite runs for one scenario (MCP_CONFORMANCE_SCENARIO names
// it; MCP_CONFORMANCE_PROTOCOL_VERSION and MCP_CONFORMANCE_CONTEXT are set
// by the suite too): it connects to the scenario's server as the bot does —
// a discovery, then a chat session — and makes the calls the scenario
// expects.
package main

import (
	"fmt"
	"os"
)

func main() {
	var err error
	if len(os.Args) > 1 && os.Args[1] == "suite" {
		err = runSuite(os.Args[2:])
	} else {
		err = runClient(os.Args[1:])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "conformance-client:", err)
		os.Exit(1)
	}
}
