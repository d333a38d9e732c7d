package cli

import "syscall"

// childAttr makes agcore-temporal receive SIGTERM if agcore dies without
// stopping it (SIGKILL), so that no worker outlives the agcore worker
// that started it.
func childAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
}
