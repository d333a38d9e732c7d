package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/agcore/agcore/cmd/agcore/internal/cli"
)

func main() {
	// Interrupts are handled by the command (the first Ctrl-C cancels the
	// turn, the next ones quit), not by the runtime's default of dying.
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	cwd, _ := os.Getwd()
	home, _ := os.UserHomeDir()
	code := cli.Main(context.Background(), os.Args[1:], cli.Env{
		Stdin:    os.Stdin,
		Stdout:   os.Stdout,
		Stderr:   os.Stderr,
		Cwd:      cwd,
		UserHome: home,
		Signals:  sigs,
	})
	signal.Stop(sigs)
	os.Exit(code)
}
