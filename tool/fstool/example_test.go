package fstool_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/agcore/agcore/tool"
	"github.com/agcore/agcore/tool/fstool"
)

func Example() {
	root, err := os.MkdirTemp("", "fstool-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(root)
	_ = os.MkdirAll(filepath.Join(root, "docs"), 0o755)
	_ = os.WriteFile(filepath.Join(root, "docs", "notes.txt"), []byte("first\nsecond\nthird\n"), 0o644)

	// The CLI's default --tools list: the read-only tools.
	tools, err := fstool.ByName(root, fstool.DefaultNames, fstool.Options{})
	if err != nil {
		log.Fatal(err)
	}
	var reg tool.Registry
	if err := reg.Register(tools...); err != nil {
		log.Fatal(err)
	}
	call := func(name, args string) {
		t, _ := reg.Get(name)
		out, err := t.Invoke(context.Background(), json.RawMessage(args))
		if err != nil {
			fmt.Printf("%s: error: %v\n", name, err)
			return
		}
		fmt.Printf("%s:\n%s\n", name, out)
	}
	call("list_dir", `{}`)
	call("read_file", `{"path":"docs/notes.txt","offset":2,"limit":1}`)
	call("grep", `{"pattern":"^t"}`)
	call("read_file", `{"path":"../etc/passwd"}`)
	// Output:
	// list_dir:
	// docs/
	//
	// read_file:
	// second
	//
	// grep:
	// docs/notes.txt:3: third
	//
	// read_file: error: "../etc/passwd": path is outside the root directory
}
