package cli

import (
	"fmt"
	goruntime "runtime"
	"runtime/debug"

	"github.com/spf13/cobra"
)

// buildInfo is what the binary knows of its own build: the module version
// and the version control state it was built from.
type buildInfo struct {
	Version  string // the module version, "(devel)" for a build in a checkout
	Commit   string // the VCS revision, "" when unknown
	Time     string // the commit's time (RFC 3339), "" when unknown
	Modified bool   // the work tree had changes
	Go       string // the Go toolchain
}

func readBuildInfo() buildInfo {
	info := buildInfo{Version: "(devel)", Go: goruntime.Version()}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return info
	}
	if bi.Main.Version != "" {
		info.Version = bi.Main.Version
	}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			info.Commit = s.Value
		case "vcs.time":
			info.Time = s.Value
		case "vcs.modified":
			info.Modified = s.Value == "true"
		}
	}
	return info
}

// String is the one line `agcore version` and `agcore --version` print.
func (b buildInfo) String() string {
	s := b.Version
	if b.Commit != "" {
		s += ", commit " + b.Commit
		if b.Modified {
			s += " (modified)"
		}
		if b.Time != "" {
			s += " of " + b.Time
		}
	}
	return s + ", " + b.Go
}

// version is the text cobra's --version prints after "agcore version ".
func version() string { return readBuildInfo().String() }

func (a *app) newVersionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version and commit agcore was built from",
		Long: `Print the module version agcore was built from (v1.2.3 when installed with
go install, "(devel)" when built in a checkout), the commit and its time when
the build recorded them, and the Go toolchain. agcore --version prints the
same line.`,
		Example: `  agcore version
  agcore --version`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, err := fmt.Fprintln(a.env.Stdout, "agcore version "+version())
			return err
		},
	}
}
