//go:build !unix

package mcp

import "os/exec"

// ownGroup does nothing where process groups are not available.
func ownGroup(*exec.Cmd) {}

// killGroup does nothing where process groups are not available; Close
// still ends the server itself.
func killGroup(int) {}
