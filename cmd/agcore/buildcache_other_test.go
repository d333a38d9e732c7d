//go:build !unix

package main_test

import (
	"os"
	"os/exec"
)

// buildAgcore builds the command into out.
func buildAgcore(out string) error {
	build := exec.Command("go", "build", "-o", out, ".")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	return build.Run()
}
