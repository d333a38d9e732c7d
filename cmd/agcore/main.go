package main

import (
	"os"

	"github.com/agcore/agcore/cmd/agcore/command"
)

func main() { os.Exit(command.Main()) }
