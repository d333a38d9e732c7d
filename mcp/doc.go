// Package mcp offers the tools of Model Context Protocol servers as agcore
// tools, using the official Go SDK (github.com/modelcontextprotocol/go-sdk).
//
// A [Server] says how to reach one server: a command started as a child
// process and spoken to over its stdin and stdout (the stdio transport), a
// URL (the streamable HTTP transport), or any SDK transport. [Connect]
// starts and initializes it and lists its tools; each becomes a [tool.Tool]
// whose Invoke calls the server. [ConnectAll] does the same for several
// servers at once and keeps their names apart. [Client.Close] ends the
// session and the child process (and the processes it started).
//
// # Tool names
//
// A server's tool is offered as
//
//	mcp__SERVER__TOOL
//
// so it never clashes with a built-in tool or another server's. Providers
// accept names of at most 64 characters from [a-zA-Z0-9_-], so:
//
//   - SERVER is [Server.Name] or, when that is empty, derived from the
//     command: the base name of the command or, for a launcher (npx, node,
//     uvx, python, docker, ...), of its first argument that is not an option
//     or a subcommand, without an npm scope or version, a file extension, a
//     leading "mcp-server-", "server-" or "mcp-" and a trailing "-mcp" or
//     "-server" ("npx -y @modelcontextprotocol/server-everything" is
//     "everything"; a script named index.js or main.py takes its directory's
//     name); for a URL, the first label of the host that is not "www", "mcp"
//     or "api" (an IP address gives "http"). Derived names are lower-cased.
//     Either way every character outside [a-zA-Z0-9_-] becomes "_", runs of
//     "_" become one (so "__" only ever separates the parts), leading and
//     trailing "_" and "-" are dropped, the result is cut to 24 characters,
//     and an empty result is "mcp". [ConnectAll] numbers servers whose names
//     clash, in order: "files", "files_2".
//   - TOOL is the server's name for the tool with every character outside
//     [a-zA-Z0-9_-] replaced by "_".
//   - When the whole name would exceed 64 characters, or equals the name of
//     an earlier tool of the same server, TOOL is cut and ends with "_" and
//     the first 8 hex digits of the SHA-256 of the server's name for the
//     tool, so names stay unique and the same from run to run.
//
// The model sees the server's description of the tool and its input schema
// unchanged.
//
// # Results and errors
//
// A call's result content becomes text: text as is, an image or audio clip
// as a short bracketed description of its type and size, an embedded
// resource as its URI followed by its text, a resource link as its name and
// URI; items are separated by newlines. A result with only structured
// content is shown as its JSON. A result the server marks isError becomes a
// *[ToolError] whose message is that text, which the tool loop shows the
// model as an error result. A server that cannot be started, initialized or
// asked for its tools gives a *[ConnectError] naming it (with the end of its
// standard error, for a command).
//
// # What servers send, and silent servers
//
// The session listens to the server outside its answers (the standalone
// SSE stream of a URL server is on): a request for input from the user
// (elicitation/create) goes to [Server.Elicit], and is declined when there
// is none (for a turn whose calls someone decides, [AskApprover] makes it
// one more pending decision, tool [ElicitationTool], whose approval carries
// the form's answer, checked by [FormContent]); progress of a running call, log messages and the list of tools
// changing (the tools are listed again: [Client.Tools] returns the new
// list, a tool's description and schema are read as last listed, and a
// removed tool's call fails saying so) are each a [Notice] for
// [Server.Notify]. Every request has a deadline, [Server.Timeout], which a
// progress notification for the call restarts: a server silent for that
// long has the request cancelled and answered with a *[SilentError] naming
// it (a notice says so too), which the tool loop shows the model as an
// error result; the session stays open. A dropped stream is resumed after
// the server's retry delay with Last-Event-ID (the SDK's reconnection).
//
// # Authorization
//
// [Server.Headers] are sent with every request of a URL server (their
// values never appear in an error). [Server.OAuth] authorizes the requests
// as the MCP authorization specification says; package mcp/oauth provides
// a handler that keeps and refreshes the tokens of a login. The handshake
// asks for [DefaultProtocolVersion] unless [Server.ProtocolVersion] says
// otherwise.
//
// # Tracing
//
// When a call's context carries an observe.Observer (a traced agent run),
// the call carries the run's trace context: in the request's _meta
// (traceparent, tracestate) for every server, and as HTTP headers for a
// server reached over HTTP, so a traced server joins the caller's trace.
//
// This package imports only tool, observe, internal/redact (its errors
// hide secrets with agcore's one mask), the SDK, jsonschema-go (a form's
// answer checked against its schema) and the standard library. Agents offered as MCP tools to other clients are package
// serve/mcpserve's.
package mcp
