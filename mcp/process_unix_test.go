//go:build unix

package mcp

import (
	"os"
	"strconv"
	"strings"
	"syscall"
)

const processGroups = true

// alive reports whether the process pid runs; a zombie (dead, waiting for a
// parent to reap it) does not.
func alive(pid int) bool {
	if b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat"); err == nil {
		// The state follows the command name, which is in parentheses.
		s := string(b)
		if i := strings.LastIndexByte(s, ')'); i >= 0 && i+2 < len(s) {
			return s[i+2] != 'Z' && s[i+2] != 'X'
		}
		return true
	} else if _, err := os.Stat("/proc/self/stat"); err == nil {
		return false // a system with /proc, and no entry for pid
	}
	return syscall.Kill(pid, 0) == nil
}
