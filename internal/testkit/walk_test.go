package testkit

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// A hop of the walk: `path/file.go: pkg.Func` or `path/file.go:
// pkg.Type.Method`, indented for nesting, then what happens there.
var hopLine = regexp.MustCompile(`^\s*(\S+\.go): ([A-Za-z_]\w*)\.([A-Za-z_]\w*)(?:\.([A-Za-z_]\w*))?(?:\s+\S.*)?$`)

type hop struct {
	line           int    // in the document
	file           string // module-relative
	pkg, typ, name string // typ is "" for a function
}

func (h hop) String() string {
	if h.typ == "" {
		return fmt.Sprintf("%s: %s.%s", h.file, h.pkg, h.name)
	}
	return fmt.Sprintf("%s: %s.%s.%s", h.file, h.pkg, h.typ, h.name)
}

// walkHops returns the hops of the ```walk block of doc, and the lines of
// the block that are not hops.
func walkHops(doc string) (hops []hop, bad []string) {
	lines := strings.Split(doc, "\n")
	in, found := false, false
	for i, l := range lines {
		switch {
		case !in && strings.TrimSpace(l) == "```walk":
			in, found = true, true
			continue
		case in && strings.TrimSpace(l) == "```":
			in = false
			continue
		case !in || strings.TrimSpace(l) == "":
			continue
		}
		m := hopLine.FindStringSubmatch(l)
		if m == nil {
			bad = append(bad, fmt.Sprintf("line %d is not `path/file.go: pkg.Func` or `path/file.go: pkg.Type.Method`: %q", i+1, l))
			continue
		}
		h := hop{line: i + 1, file: m[1], pkg: m[2], name: m[3]}
		if m[4] != "" {
			h.typ, h.name = m[3], m[4]
		}
		hops = append(hops, h)
	}
	if !found {
		bad = append(bad, "no ```walk block")
	} else if in {
		bad = append(bad, "the ```walk block is not closed")
	}
	return hops, bad
}

// recvName returns the name of a method's receiver type: T for T, *T,
// T[X] and *T[X, Y].
func recvName(e ast.Expr) string {
	for {
		switch x := e.(type) {
		case *ast.StarExpr:
			e = x.X
		case *ast.IndexExpr:
			e = x.X
		case *ast.IndexListExpr:
			e = x.X
		case *ast.ParenExpr:
			e = x.X
		case *ast.Ident:
			return x.Name
		default:
			return ""
		}
	}
}

// checkHop reports what is wrong with h under the module root: a file
// that does not parse, another package, no such function or method.
func checkHop(root string, h hop) error {
	f, err := parser.ParseFile(token.NewFileSet(), filepath.Join(root, filepath.FromSlash(h.file)), nil, parser.SkipObjectResolution)
	if err != nil {
		return fmt.Errorf("ARCHITECTURE.md:%d: %s: %v", h.line, h, err)
	}
	if f.Name.Name != h.pkg {
		return fmt.Errorf("ARCHITECTURE.md:%d: %s: the file is package %s", h.line, h, f.Name.Name)
	}
	for _, d := range f.Decls {
		fd, ok := d.(*ast.FuncDecl)
		if !ok || fd.Name.Name != h.name {
			continue
		}
		switch {
		case h.typ == "" && fd.Recv == nil:
			return nil
		case h.typ != "" && fd.Recv != nil && len(fd.Recv.List) == 1 && recvName(fd.Recv.List[0].Type) == h.typ:
			return nil
		}
	}
	return fmt.Errorf("ARCHITECTURE.md:%d: %s: no such function in %s", h.line, h, h.file)
}

// TestRequestWalk checks ARCHITECTURE.md's walk of one request: each hop
// names a function or method that exists, in the file it names, and the
// walk goes from agent.New through every layer to the adapter and back
// to persistence.
func TestRequestWalk(t *testing.T) {
	root := filepath.Join("..", "..")
	doc, err := os.ReadFile(filepath.Join(root, "ARCHITECTURE.md"))
	if err != nil {
		t.Fatal(err)
	}
	hops, bad := walkHops(string(doc))
	for _, b := range bad {
		t.Error(b)
	}
	for _, h := range hops {
		if err := checkHop(root, h); err != nil {
			t.Error(err)
		}
	}
	if len(hops) == 0 || hops[0].String() != "agent/agent.go: agent.New" {
		t.Fatalf("the walk does not start at agent/agent.go: agent.New")
	}
	// Every layer of the request path has its hop, in this order.
	stations := []string{
		"agent.Agent.Run", "agent.Agent.prepare", "middleware.FunctionInvocation", "middleware.toolLoop.Stream",
		"compact.guard.Stream", "middleware.hooked.Stream", "otelagent.chat.Stream", "middleware.retry.Stream",
		"middleware.logged.Stream", "middleware.infoModel.Stream", "openai.Model.Stream", "sse.Decoder.Next",
		"llm.Assembler.Add", "middleware.turn.step", "tool.Invoker.Invoke", "middleware.toolLoop.approve",
		"agent.run.persist",
	}
	var names []string
	for _, h := range hops {
		names = append(names, strings.SplitN(h.String(), ": ", 2)[1])
	}
	at := 0
	for _, st := range stations {
		i := slices.Index(names[at:], st)
		if i < 0 {
			t.Errorf("the walk lacks %s (after %s)", st, names[max(at-1, 0)])
			continue
		}
		at += i + 1
	}
}

// TestRequestWalkCatches: the walk check reports a line not in the hop
// format, a function missing from its file, a method on the wrong type,
// and a wrong package name.
func TestRequestWalkCatches(t *testing.T) {
	doc := "text\n```walk\nagent/agent.go: agent.New  builds\n  agent/agent.go: agent.Nope\nagent/agent.go: agent.Stream.Run\nagent/agent.go: llm.New\nnot a hop\n```\n"
	hops, bad := walkHops(doc)
	if len(hops) != 4 || len(bad) != 1 || !strings.Contains(bad[0], "line 7") {
		t.Fatalf("hops %v, bad %q", hops, bad)
	}
	root := filepath.Join("..", "..")
	var errs []string
	for _, h := range hops {
		if err := checkHop(root, h); err != nil {
			errs = append(errs, err.Error())
		}
	}
	for i, want := range []string{"agent.Nope: no such function", "agent.Stream.Run: no such function", "the file is package agent"} {
		if i >= len(errs) || !strings.Contains(errs[i], want) {
			t.Errorf("error %d: got %q, want it to contain %q", i, errs, want)
		}
	}
	if _, bad := walkHops("no block"); len(bad) != 1 {
		t.Errorf("a document without a walk: %q", bad)
	}
}
