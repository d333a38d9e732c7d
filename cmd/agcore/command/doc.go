// Package command is the agcore command as a function, so that a program
// can build the command with more providers than agcore ships: it imports
// an adapter package that registers itself with provider/registry (as
// database/sql drivers do) and calls [Main]. The provider is then offered
// by --provider, the help texts, auto-detection and serve's agents, like
// agcore's own:
//
//	package main
//
//	import (
//		"os"
//
//		"github.com/agcore/agcore/cmd/agcore/command"
//		_ "example.com/myprovider" // calls registry.Register in its init
//	)
//
//	func main() { os.Exit(command.Main()) }
//
// This package imports the command's internal packages; nothing in the
// library may import it.
package command
