package testkit

import (
	"bytes"
	"go/ast"
	"go/parser"
	"go/printer"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// apiFile is the committed listing of the library's exported API, as the
// Go project keeps api/: every exported name of every library package,
// one line each, so that an API change is a line in review.
const apiFile = "api/agcore.txt"

// TestAPIListing fails when the library's exported API differs from the
// committed listing; AGCORE_UPDATE_API=1 rewrites the listing (commit it
// with the change that made it).
func TestAPIListing(t *testing.T) {
	root := filepath.Join("..", "..")
	got := apiListing(t, root)
	path := filepath.Join(root, apiFile)
	if os.Getenv("AGCORE_UPDATE_API") == "1" {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(strings.Join(got, "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("wrote %s: %d exported names", apiFile, len(got))
		return
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (AGCORE_UPDATE_API=1 go test -run TestAPIListing ./internal/testkit writes it)", err)
	}
	want := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	var added, removed []string
	for _, l := range got {
		if _, ok := slices.BinarySearch(want, l); !ok {
			added = append(added, "+ "+l)
		}
	}
	for _, l := range want {
		if _, ok := slices.BinarySearch(got, l); !ok {
			removed = append(removed, "- "+l)
		}
	}
	if len(added)+len(removed) > 0 {
		t.Fatalf("the exported API differs from %s (review the change, then AGCORE_UPDATE_API=1 go test -run TestAPIListing ./internal/testkit):\n%s",
			apiFile, strings.Join(append(removed, added...), "\n"))
	}
}

// libraryDir reports whether a directory (slash-separated, relative to
// the module root) holds library packages: not internal, not a command,
// an example, test data or another module.
func libraryDir(rel string) bool {
	for _, part := range strings.Split(rel, "/") {
		switch part {
		case "internal", "testdata", "node_modules", "zz_skipped":
			return false
		}
		if strings.HasPrefix(part, ".") {
			return false
		}
	}
	first, _, _ := strings.Cut(rel, "/")
	switch first {
	case "cmd", "examples", "temporal", "e2e", "bench", "api":
		return false
	}
	return true
}

// apiListing returns the sorted lines of the library's exported API.
func apiListing(t *testing.T, root string) []string {
	t.Helper()
	var lines []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		if rel != "." && !libraryDir(rel) {
			return fs.SkipDir
		}
		pkgPath := modulePath
		if rel != "." {
			pkgPath += "/" + rel
		}
		fset := token.NewFileSet()
		entries, err := os.ReadDir(path)
		if err != nil {
			return err
		}
		for _, e := range entries {
			name := e.Name()
			if e.IsDir() || !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
				continue
			}
			f, err := parser.ParseFile(fset, filepath.Join(path, name), nil, parser.SkipObjectResolution)
			if err != nil {
				return err
			}
			if f.Name.Name == "main" {
				continue
			}
			for _, l := range exported(fset, f) {
				lines = append(lines, pkgPath+": "+l)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(lines)
	return slices.Compact(lines)
}

// exported returns one line per exported declaration of f.
func exported(fset *token.FileSet, f *ast.File) []string {
	var out []string
	show := func(n any) string {
		var b bytes.Buffer
		_ = printer.Fprint(&b, fset, n)
		return strings.Join(strings.Fields(b.String()), " ")
	}
	for _, decl := range f.Decls {
		switch d := decl.(type) {
		case *ast.FuncDecl:
			if !d.Name.IsExported() {
				continue
			}
			if d.Recv != nil && !exportedReceiver(d.Recv) {
				continue
			}
			fn := *d
			fn.Body, fn.Doc = nil, nil
			out = append(out, show(&fn))
		case *ast.GenDecl:
			for _, spec := range d.Specs {
				switch s := spec.(type) {
				case *ast.TypeSpec:
					if !s.Name.IsExported() {
						continue
					}
					ts := *s
					ts.Doc, ts.Comment = nil, nil
					if st, ok := s.Type.(*ast.StructType); ok {
						ts.Type = exportedFields(st)
					}
					out = append(out, "type "+show(&ts))
				case *ast.ValueSpec:
					for i, n := range s.Names {
						if !n.IsExported() {
							continue
						}
						l := d.Tok.String() + " " + n.Name
						if s.Type != nil {
							l += " " + show(s.Type)
						} else if i < len(s.Values) && d.Tok == token.CONST {
							l += " = " + show(s.Values[i])
						}
						out = append(out, l)
					}
				}
			}
		}
	}
	return out
}

// exportedReceiver reports whether a method's receiver type is exported.
func exportedReceiver(recv *ast.FieldList) bool {
	if len(recv.List) == 0 {
		return false
	}
	t := recv.List[0].Type
	for {
		switch x := t.(type) {
		case *ast.StarExpr:
			t = x.X
		case *ast.IndexExpr:
			t = x.X
		case *ast.IndexListExpr:
			t = x.X
		case *ast.Ident:
			return x.IsExported()
		default:
			return false
		}
	}
}

// exportedFields returns st with its unexported fields left out (embedded
// fields are kept: they may promote exported names).
func exportedFields(st *ast.StructType) *ast.StructType {
	out := &ast.StructType{Fields: &ast.FieldList{}}
	for _, f := range st.Fields.List {
		if len(f.Names) == 0 {
			out.Fields.List = append(out.Fields.List, &ast.Field{Type: f.Type})
			continue
		}
		var names []*ast.Ident
		for _, n := range f.Names {
			if n.IsExported() {
				names = append(names, n)
			}
		}
		if len(names) > 0 {
			out.Fields.List = append(out.Fields.List, &ast.Field{Names: names, Type: f.Type, Tag: f.Tag})
		}
	}
	return out
}
