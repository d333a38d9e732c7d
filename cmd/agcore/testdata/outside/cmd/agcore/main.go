// Command agcore is agcore's command with one more provider, echo, from
// outside agcore's module: importing its package is all it takes.
package main

import (
	"os"

	"github.com/agcore/agcore/cmd/agcore/command"

	_ "example.com/outside/echo"
)

func main() { os.Exit(command.Main()) }
