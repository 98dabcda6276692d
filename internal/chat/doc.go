// Package chat is the domain of a conversation with the agent: the tools
// the model may call and what a call gives back, and what a person is
// shown about a tool before it runs.
//
//   - [Tool] is one interface for every tool the model is offered: the
//     session's built-ins (send, read, tool_search), the tools of MCP
//     servers, the resource tools over them and the tool a server that
//     needs a login offers. A session keeps its tools by name and runs a
//     call by calling the tool: nothing dispatches on names or kinds.
//   - What else a tool may say of itself is an optional interface, asked
//     for by a type assertion where it matters: [Checker] (its own
//     argument check), [Sequenced] (calls that must not overlap) and
//     [Guarded] (calls a person may have to approve).
//   - [Result] and its [Part]s are what a call answers, before the session
//     redacts them and hands them to the model.
//   - [Annotations] are a tool's behaviour hints, and what they mean to
//     the person deciding whether it may run.
//   - [Elicitation] is a server's question to the chat's user (a form of
//     [ElicitField]s, or a page to open), and [ElicitResult] the answer,
//     each field's answer parsed and checked here ([ElicitField.ParseAnswer],
//     [ElicitFormSpec.Complete]).
//   - [MCPStatus] and [ServerStatus] are where a chat's MCP servers stand
//     (what /mcp tells): the MCP adapter fills them in, the session adds
//     what the tools cost ([ToolCost]), the bot writes them in words.
//     [CatalogTool] is one tool of the catalogue.
//
// The package imports nothing from this module and does no I/O.
package chat
