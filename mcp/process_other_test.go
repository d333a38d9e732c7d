//go:build !unix

package mcp

import "os"

const processGroups = false

// alive reports whether the process pid runs.
func alive(pid int) bool {
	p, err := os.FindProcess(pid)
	if err != nil {
		return false
	}
	p.Release()
	return true
}
