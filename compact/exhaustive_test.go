package compact

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"slices"
	"testing"
)

// TestBlockSwitchesAreExhaustive enforces what the compiler cannot: every
// type switch over content blocks in this package (and in
// internal/tokens, whose Block prices a block for every counter) names every block
// type package llm defines (found from its isBlock methods) and has no
// default case, so a new block kind cannot be priced or hashed by accident.
func TestBlockSwitchesAreExhaustive(t *testing.T) {
	t.Parallel()
	fset := token.NewFileSet()
	llmFiles, _ := filepath.Glob(filepath.Join("..", "llm", "*.go"))
	var kinds []string
	for _, f := range llmFiles {
		file, err := parser.ParseFile(fset, f, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range file.Decls {
			if fn, ok := d.(*ast.FuncDecl); ok && fn.Name.Name == "isBlock" && fn.Recv != nil {
				if id, ok := fn.Recv.List[0].Type.(*ast.Ident); ok {
					kinds = append(kinds, id.Name)
				}
			}
		}
	}
	if len(kinds) < 9 {
		t.Fatalf("found only block types %v in package llm", kinds)
	}
	// The functions that must handle every kind.
	want := map[string]bool{"Block": true, "hashBlocks": true, "contentBytes": true, "renderBlocks": true}
	found := map[string]int{}
	files, _ := filepath.Glob("*.go")
	shared, _ := filepath.Glob(filepath.Join("internal", "tokens", "*.go"))
	files = append(files, shared...)
	for _, f := range files {
		file, err := parser.ParseFile(fset, f, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range file.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || !want[fn.Name.Name] {
				continue
			}
			ast.Inspect(fn.Body, func(n ast.Node) bool {
				ts, ok := n.(*ast.TypeSwitchStmt)
				if !ok {
					return true
				}
				found[fn.Name.Name]++
				var cases []string
				for _, c := range ts.Body.List {
					cc := c.(*ast.CaseClause)
					if cc.List == nil {
						t.Errorf("%s (%s): type switch has a default case", fn.Name.Name, f)
					}
					for _, e := range cc.List {
						if sel, ok := e.(*ast.SelectorExpr); ok {
							cases = append(cases, sel.Sel.Name)
						}
					}
				}
				for _, k := range kinds {
					if !slices.Contains(cases, k) {
						t.Errorf("%s (%s): no case for llm.%s", fn.Name.Name, f, k)
					}
				}
				return false
			})
		}
	}
	for name := range want {
		if found[name] == 0 {
			t.Errorf("no type switch found in %s", name)
		}
	}
}
