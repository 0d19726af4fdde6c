package clock

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
)

// skipDirs are not service code: test support, generated code, the harnesses, the separate tool modules, and the
// Go client and CLI (they run on the user's machine, not in the fleet).
var skipDirs = map[string]bool{
	"client": true, "cli": true, "bench": true, "e2e": true, "tools": true, "internal/tools": true, "internal/clock": true,
	"db/gen": true, "db/enginetest": true, "db/storetest": true, ".git": true, "bin": true, "data": true,
}

// TestWallClockReadsGoThroughClock keeps the clock-skew proof meaningful: in the service's code every wall-clock
// read goes through this package (so a clockskew build shifts it), and time.Now appears only as a monotonic
// reading `start := time.Now()` whose only use is time.Since(start), or on a line marked with a comment
// "clock:process …" that says why the value must be the process's unshifted reading (it is handed to a library
// that compares it with its own time.Now, e.g. a token expiry or a rate limiter's refill).
func TestWallClockReadsGoThroughClock(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	files := 0
	var bad []string
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if skipDirs[rel] {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(rel, ".go") || strings.HasSuffix(rel, "_test.go") {
			return nil
		}
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, path, nil, parser.ParseComments)
		if err != nil {
			return err
		}
		files++
		for _, p := range wallClockReads(fset, f) {
			bad = append(bad, rel+":"+p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < 50 {
		t.Fatalf("scanned only %d files from %s", files, root)
	}
	for _, b := range bad {
		t.Errorf("%s", b)
	}
}

func TestGuardFindsWallClockReads(t *testing.T) {
	src := `package p
import "time"
func ok() time.Duration { start := time.Now(); f := func() time.Duration { return time.Since(start) }; return f() }
func stored(x *struct{ At time.Time }) { x.At = time.Now() }
func added() time.Time { return time.Now().Add(time.Second) }
func leaked() time.Time { start := time.Now(); return start }
func until(t time.Time) time.Duration { return time.Until(t) }
func since(t time.Time) time.Duration { return time.Since(t) }
var now = time.Now
func marked() time.Time { return time.Now() } // clock:process handed to a library that reads time.Now itself
`
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "p.go", src, parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	got := wallClockReads(fset, f)
	if len(got) != 6 {
		t.Fatalf("want 6 findings, got %d: %v", len(got), got)
	}
}

// wallClockReads lists the positions of wall-clock reads that bypass this package.
func wallClockReads(fset *token.FileSet, f *ast.File) []string {
	timeName := ""
	for _, imp := range f.Imports {
		if imp.Path.Value == `"time"` {
			timeName = "time"
			if imp.Name != nil {
				timeName = imp.Name.Name
			}
		}
	}
	if timeName == "" || timeName == "_" {
		return nil
	}
	isTime := func(e ast.Expr, name string) bool {
		sel, ok := e.(*ast.SelectorExpr)
		if !ok || sel.Sel.Name != name {
			return false
		}
		id, ok := sel.X.(*ast.Ident)
		return ok && id.Name == timeName
	}
	exempt := map[int]bool{} // lines marked clock:process (the comment's line and the next)
	for _, cg := range f.Comments {
		for _, c := range cg.List {
			if strings.Contains(c.Text, "clock:process") {
				line := fset.Position(c.Pos()).Line
				exempt[line], exempt[line+1] = true, true
			}
		}
	}
	var out []string
	report := func(n ast.Node, msg string) {
		if line := fset.Position(n.Pos()).Line; !exempt[line] {
			out = append(out, fmt.Sprintf("%d: %s", line, msg))
		}
	}

	// checkScope checks one top-level declaration: monotonic readings are names assigned from time.Now() and used
	// only as the argument of time.Since.
	checkScope := func(scope ast.Node) {
		mono := map[string]bool{}
		okNode := map[ast.Node]bool{}
		ast.Inspect(scope, func(n ast.Node) bool {
			as, ok := n.(*ast.AssignStmt)
			if !ok || len(as.Lhs) != 1 || len(as.Rhs) != 1 {
				return true
			}
			call, ok := as.Rhs[0].(*ast.CallExpr)
			id, isIdent := as.Lhs[0].(*ast.Ident)
			if ok && isIdent && len(call.Args) == 0 && isTime(call.Fun, "Now") && !exempt[fset.Position(call.Pos()).Line] {
				mono[id.Name] = true
				okNode[call.Fun] = true
				okNode[id] = true
			}
			return true
		})
		ast.Inspect(scope, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok || !isTime(call.Fun, "Since") || len(call.Args) != 1 {
				return true
			}
			if id, ok := call.Args[0].(*ast.Ident); ok && mono[id.Name] {
				okNode[id] = true
			} else {
				report(call, "time.Since of a value that is not a time.Now() reading: use clock.Since")
			}
			return true
		})
		ast.Inspect(scope, func(n ast.Node) bool {
			switch x := n.(type) {
			case *ast.SelectorExpr:
				switch {
				case isTime(x, "Now") && !okNode[x]:
					report(x, "time.Now used as a wall-clock value: use clock.Now")
				case isTime(x, "Until"):
					report(x, "time.Until: use clock.Until")
				}
				return !isTime(x, "Now") && !isTime(x, "Until")
			case *ast.Ident:
				if mono[x.Name] && !okNode[x] {
					report(x, x.Name+" holds a monotonic reading: only time.Since("+x.Name+") may use it")
				}
			}
			return true
		})
	}
	for _, d := range f.Decls {
		checkScope(d)
	}
	return out
}
