// Package mcpserve offers agcore agents to MCP clients (Claude Desktop,
// Cursor, VS Code, another agent): each agent is an MCP tool whose input is
// a prompt and whose result is the agent's answer to it, one turn per call.
//
// A call runs a turn of the agent in a session of its own for the MCP
// session and the principal that calls (so a client's calls continue one
// conversation, and two clients or two principals never share one). While
// the turn runs, a client that asked for progress (a progressToken) gets a
// notification for each step: a model call, a tool call, its result. Tools
// the agent calls that need approval are asked of the client's user through
// elicitation (see [Approver]); a client that cannot ask is refused
// cleanly. Other tools, such as agcore's built-in file tools, can be
// offered directly ([Options.Tools]), under the same approval.
//
// An agent can be offered with an input schema of its own and a prompt
// template ([AgentTool]), think with the calling client's model
// ([ClientModel], through sampling), and ask the client's user questions
// ([AskUser], through elicitation). A turn's questions go to a multi
// round-trip client as input requests in the call's result, and to an
// older client as requests of the server during the call. A client that
// sets a log level gets the turn's steps as log messages too. Besides the
// agents, a server offers prompt templates with argument completion
// ([Prompt]) and read-only resources ([Resource], [ResourceTemplate]):
// files read through [Options.ReadFile] (the CLI's applies the file
// tools' root and secret rules), a subscribed file's change notified.
//
// [NewServer] builds the SDK server; [Serve] runs it on a transport (stdio
// for a client that starts agcore as a command) in one call; [Handler]
// serves it over streamable HTTP behind bearer tokens, each naming a
// principal as agcore serve's do.
//
// This package imports agent, llm, tool, session, serve/host, the MCP SDK,
// jsonschema-go and the standard library; it must never import the CLI.
package mcpserve
