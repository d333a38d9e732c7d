// Package oauth authorizes agcore's MCP client to remote servers as the
// MCP authorization specification defines it (OAuth 2.1), over the
// official SDK's auth and oauthex packages, and keeps the tokens.
//
// The SDK does the protocol: discovery from a 401's WWW-Authenticate and
// the well-known protected-resource and authorization-server metadata
// documents (with their fallbacks), client ID metadata documents, dynamic
// client registration, the authorization code grant with PKCE S256 and
// resource indicators, scope step-up, and the client credentials grant.
// This package adds what a command-line agent needs around it:
//
//   - a [Store] of grants (tokens and the client they were issued to), one
//     file per server and principal, mode 0600, so that a login outlives
//     the process that made it;
//   - a [Handler] that sends the stored token, refreshes it (with the
//     resource indicator) when it expires or is refused, saves the
//     refreshed token, and, when a login is needed and nobody can log in
//     interactively, fails with a *[LoginRequiredError] naming the server;
//   - [LocalRedirect], a listener on 127.0.0.1 that receives the
//     authorization server's redirect for a login in a browser.
//
// Tokens are never logged: no error, log line or String method of this
// package shows one.
//
// This package imports only the SDK (auth, oauthex), golang.org/x/oauth2
// and the standard library; it must never import agcore's CLI, agent or
// tool packages.
package oauth
