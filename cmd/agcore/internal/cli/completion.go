package cli

import (
	"log/slog"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/agcore/agcore/catalog"
	"github.com/agcore/agcore/cmd/agcore/internal/config"
	"github.com/agcore/agcore/session"
	"github.com/agcore/agcore/tool/fstool"
)

// storePrefixes is what --store completes to: each registered kind of
// store as its URL begins ("sqlite:", "postgres://").
func storePrefixes() []string {
	var out []string
	for _, syn := range session.Syntaxes() {
		out = append(out, strings.TrimRight(syn, "ABCDEFGHIJKLMNOPQRSTUVWXYZ…"))
	}
	return out
}

// Shell completion: cobra's completion command writes the script for bash,
// zsh, fish or PowerShell; the script asks the binary (agcore __complete
// ...) for subcommands, flags and these values.

// completeSessions completes session ids from the store the command's
// flags name, newest first, without creating or changing it.
func (a *app) completeSessions(cmd *cobra.Command, args []string, prefix string) ([]cobra.Completion, cobra.ShellCompDirective) {
	if len(args) > 0 && cmd.Name() != "chat" && cmd.Name() != "run" {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	s, err := a.settings(cmd)
	if s == nil || err != nil && s.Store == "" && s.Home == "" {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	st, err := openStore(cmd.Context(), s.Store, s.Home, slog.New(slog.DiscardHandler), true)
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	defer st.Close()
	infos, err := listSessions(cmd.Context(), st)
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	var out []cobra.Completion
	for _, info := range infos {
		if strings.HasPrefix(info.ID, prefix) {
			out = append(out, cobra.CompletionWithDesc(info.ID, clipTitle(info.Title, 40)))
		}
	}
	return out, cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveKeepOrder
}

// completeProviders completes --provider: the kinds and the providers of
// the config file.
func (a *app) completeProviders(cmd *cobra.Command, _ []string, _ string) ([]cobra.Completion, cobra.ShellCompDirective) {
	var out []cobra.Completion
	for _, k := range config.Kinds() {
		out = append(out, k.Name)
	}
	if s, _ := a.settings(cmd); s != nil {
		if f, _, err := config.LoadFile(s.ConfigFile); err == nil {
			for name := range f.Providers {
				if !slices.Contains(out, name) {
					out = append(out, name)
				}
			}
		}
	}
	return out, cobra.ShellCompDirectiveNoFileComp
}

// completeModels completes --model: the aliases and the catalog's models.
func (a *app) completeModels(cmd *cobra.Command, _ []string, _ string) ([]cobra.Completion, cobra.ShellCompDirective) {
	aliases := config.BuiltinAliases
	if s, _ := a.settings(cmd); s != nil && s.Aliases != nil {
		aliases = s.Aliases
	}
	var out []cobra.Completion
	for _, name := range config.SortedAliases(aliases) {
		out = append(out, cobra.CompletionWithDesc(name, "alias of "+aliases[name]))
	}
	seen := map[string]bool{}
	for _, m := range catalog.Default().Models() {
		if !seen[m.Name] {
			seen[m.Name] = true
			out = append(out, cobra.CompletionWithDesc(m.Name, m.Provider))
		}
	}
	return out, cobra.ShellCompDirectiveNoFileComp
}

// completeTools completes the comma list of --tools.
func completeTools(_ *cobra.Command, _ []string, prefix string) ([]cobra.Completion, cobra.ShellCompDirective) {
	done, _ := cutLast(prefix, ",")
	var out []cobra.Completion
	for _, name := range fstool.Names {
		if !slices.Contains(strings.Split(done, ","), name) {
			if done != "" {
				out = append(out, done+","+name)
			} else {
				out = append(out, name)
			}
		}
	}
	return out, cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveNoSpace
}

// cutLast splits s around the last sep: "a,b,c" → "a,b", "c".
func cutLast(s, sep string) (string, string) {
	if i := strings.LastIndex(s, sep); i >= 0 {
		return s[:i], s[i+len(sep):]
	}
	return "", s
}

// registerCompletions adds the value completions of the flags fs has.
func (a *app) registerCompletions(cmd *cobra.Command) {
	fixed := func(values ...string) cobra.CompletionFunc {
		return cobra.FixedCompletions(values, cobra.ShellCompDirectiveNoFileComp)
	}
	funcs := map[string]cobra.CompletionFunc{
		"provider": a.completeProviders,
		"model":    a.completeModels,
		"session":  a.completeSessions,
		"tools":    completeTools,
		"compact":  fixed(config.CompactModes...),
		"store":    fixed(storePrefixes()...),
	}
	cmd.Flags().VisitAll(func(f *pflag.Flag) {
		if fn, ok := funcs[f.Name]; ok {
			_ = cmd.RegisterFlagCompletionFunc(f.Name, fn)
		}
	})
	for _, sub := range cmd.Commands() {
		a.registerCompletions(sub)
	}
}

// withCompletionExamples adds cobra's completion command now, rather than
// when it runs, to give it examples as every command has.
func withCompletionExamples(root *cobra.Command) {
	root.InitDefaultCompletionCmd()
	if c, _, err := root.Find([]string{"completion"}); err == nil && c != root {
		c.Example = `  source <(agcore completion bash)         # bash, in this shell; add the line to ~/.bashrc for every one
  agcore completion zsh > "$HOME/_agcore"   # zsh: then move the file into a directory of $fpath`
	}
}
