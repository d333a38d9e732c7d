package command

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/agcore/agcore/cmd/agcore/internal/cli"
)

// Main runs the agcore command with the process's arguments, standard
// streams, working and home directories and signals, and returns its exit
// code.
func Main() int {
	// Interrupts are handled by the command (the first Ctrl-C cancels the
	// turn, the next ones quit), not by the runtime's default of dying.
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)
	cwd, _ := os.Getwd()
	home, _ := os.UserHomeDir()
	return cli.Main(context.Background(), os.Args[1:], cli.Env{
		Stdin:    os.Stdin,
		Stdout:   os.Stdout,
		Stderr:   os.Stderr,
		Cwd:      cwd,
		UserHome: home,
		Signals:  sigs,
	})
}
