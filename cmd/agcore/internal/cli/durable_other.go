//go:build !linux

package cli

import "syscall"

// childAttr is nil where the system cannot tie a child's life to its
// parent's: a stopped agcore still stops its child (execTemporal).
func childAttr() *syscall.SysProcAttr { return nil }
