// Command adaptergen writes the pass-through methods of the database adapters (db/<engine>store/queries_gen.go).
//
// A pass-through is a db.Queries method that only converts its argument, calls the engine's generated query of the
// same name and converts the result with db/internal/conv. For every method of db.Queries that an adapter does not
// write by hand, adaptergen type-checks candidate bodies, in a fixed order of preference, against the adapter, the
// generated package and conv, and writes the first one that compiles:
//
//   - argument: passed as is (a time: conv.TimeToGen, UTC truncated to the microsecond, on every engine), then
//     conv.<X>ToGen[<GenParams>](arg) (the conv function sharing the longest prefix with the method's name first),
//     then a struct conversion <GenParams>(arg);
//   - result: errs.Err / errs.Found (an error), errs.Rows (rows matched), errs.Inserted (bool), errs.Strings,
//     conv.One / conv.Many / conv.Locked with a conv.<X>FromGen (conv.Locked also of the table's row inside the
//     generated row, sqlc.embed).
//
// Two steps go in front of the call: an :execrows statement over a list (sqlc.slice, = ANY) answers 0 without a
// round trip when the list is empty; a "…Lock" whose engine has the no-op "…Touch" update of the same row (MySQL
// mode) runs it first through the adapter's function touch, which decides whether the server needs it.
//
// A method for which nothing compiles (or whose generated query does not exist) is an error naming it: write it by
// hand in the adapter. On SQLite, a query whose statement is a SELECT and whose name has no "Lock" runs on the reader
// pool (q.r), every other on the writer (q.w).
//
// Usage, from the repository root: go run ./internal/tools/adaptergen [-check] [-prune] postgres mysql sqlite.
// -check fails when a queries_gen.go would change; -prune deletes hand-written methods identical to what adaptergen
// would write (a one-off when moving an adapter to generated pass-throughs).
package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"go/ast"
	"go/format"
	"go/importer"
	"go/parser"
	"go/printer"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
)

const module = "github.com/powercontext/powercontext"

func main() {
	check := flag.Bool("check", false, "fail when a generated file is stale instead of writing it")
	prune := flag.Bool("prune", false, "delete hand-written methods identical to the generated ones")
	flag.Parse()
	failed := false
	for _, engine := range flag.Args() {
		if err := run(engine, *check, *prune); err != nil {
			fmt.Fprintf(os.Stderr, "adaptergen: %s: %v\n", engine, err)
			failed = true
		}
	}
	if failed {
		os.Exit(1)
	}
}

const genFile = "queries_gen.go"

// adapter is one engine's adapter package, type-checked without its generated file.
type adapter struct {
	engine, dir, pkgName, genName string
	fset                          *token.FileSet
	files                         map[string]*ast.File // hand-written, by path
	pkg                           *types.Package
	dbPkg, genPkg                 *types.Package
	scopePos                      token.Pos
	recvPtr                       bool
	split                         bool // r/w handles (SQLite)
	convFuncs                     []string
	sql                           map[string]string // query name → statement, from the generated package's source
}

func run(engine string, check, prune bool) error {
	a, err := load(engine)
	if err != nil {
		return err
	}
	if prune {
		if err := a.prune(); err != nil {
			return err
		}
		if a, err = load(engine); err != nil {
			return err
		}
	}
	src, err := a.generate()
	if err != nil {
		return err
	}
	path := filepath.Join(a.dir, genFile)
	if check {
		old, _ := os.ReadFile(path)
		if !bytes.Equal(old, src) {
			return fmt.Errorf("%s is stale: run 'make generate' and commit it", path)
		}
		return nil
	}
	return os.WriteFile(path, src, 0o644)
}

func load(engine string) (*adapter, error) {
	a := &adapter{engine: engine, dir: filepath.Join("db", engine+"store"), pkgName: engine + "store", genName: engine + "gen",
		fset: token.NewFileSet(), files: map[string]*ast.File{}}
	exports, err := exportData("./" + a.dir)
	if err != nil {
		return nil, err
	}
	imp := importer.ForCompiler(a.fset, "gc", func(path string) (io.ReadCloser, error) {
		f, ok := exports[path]
		if !ok || f == "" {
			return nil, fmt.Errorf("no export data for %s", path)
		}
		return os.Open(f)
	})
	names, err := filepath.Glob(filepath.Join(a.dir, "*.go"))
	if err != nil {
		return nil, err
	}
	var files []*ast.File
	for _, n := range names {
		if strings.HasSuffix(n, "_test.go") || filepath.Base(n) == genFile {
			continue
		}
		f, err := parser.ParseFile(a.fset, n, nil, parser.ParseComments)
		if err != nil {
			return nil, err
		}
		a.files[n] = f
		files = append(files, f)
	}
	scope := fmt.Sprintf(`package %s
import (
	"context"
	"time"
	"%s/db"
	"%s/db/gen/%s"
	"%s/db/internal/conv"
)
var _ = context.Background
var _ = time.Now
var _ db.Queries
var _ %s.Queries
var _ = conv.One[int, int]
`, a.pkgName, module, module, a.genName, module, a.genName)
	sf, err := parser.ParseFile(a.fset, "adaptergen_scope.go", scope, 0)
	if err != nil {
		return nil, err
	}
	a.scopePos = sf.Decls[len(sf.Decls)-1].End()
	files = append(files, sf)
	conf := types.Config{Importer: imp, Error: func(error) {}} // missing methods are expected until generated
	a.pkg, _ = conf.Check(module+"/"+filepath.ToSlash(a.dir), a.fset, files, nil)
	for _, p := range a.pkg.Imports() {
		switch p.Path() {
		case module + "/db":
			a.dbPkg = p
		case module + "/db/gen/" + a.genName:
			a.genPkg = p
		case module + "/db/internal/conv":
			for _, n := range p.Scope().Names() {
				if _, ok := p.Scope().Lookup(n).(*types.Func); ok && p.Scope().Lookup(n).Exported() {
					a.convFuncs = append(a.convFuncs, n)
				}
			}
		}
	}
	if a.dbPkg == nil || a.genPkg == nil {
		return nil, errors.New("the adapter does not import db and its generated package")
	}
	if a.sql, err = statements(filepath.Join("db", "gen", a.genName)); err != nil {
		return nil, err
	}
	q, ok := a.pkg.Scope().Lookup("queries").(*types.TypeName)
	if !ok {
		return nil, errors.New("no queries type")
	}
	st := q.Type().Underlying().(*types.Struct)
	for i := range st.NumFields() {
		if st.Field(i).Name() == "w" {
			a.split = true
		}
	}
	named := q.Type().(*types.Named)
	for i := range named.NumMethods() {
		_, a.recvPtr = named.Method(i).Type().(*types.Signature).Recv().Type().(*types.Pointer)
		break
	}
	return a, nil
}

// statements reads the generated package's query constants ("-- name: X …") by query name.
func statements(dir string) (map[string]string, error) {
	out := map[string]string{}
	fset := token.NewFileSet()
	names, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		return nil, err
	}
	re := regexp.MustCompile(`^-- name: (\w+) `)
	for _, n := range names {
		f, err := parser.ParseFile(fset, n, nil, 0)
		if err != nil {
			return nil, err
		}
		ast.Inspect(f, func(node ast.Node) bool {
			if lit, ok := node.(*ast.BasicLit); ok && lit.Kind == token.STRING {
				if s, err := strconv.Unquote(lit.Value); err == nil {
					if m := re.FindStringSubmatch(s); m != nil {
						out[m[1]] = s
					}
				}
			}
			return true
		})
	}
	return out, nil
}

// exportData maps every dependency of the package at dir to its compiler export data (go list -export).
func exportData(dir string) (map[string]string, error) {
	cmd := exec.Command("go", "list", "-e", "-export", "-deps", "-f", "{{.ImportPath}}\t{{.Export}}", dir)
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go list: %w", err)
	}
	m := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if path, file, ok := strings.Cut(line, "\t"); ok {
			m[path] = file
		}
	}
	return m, nil
}

// queriesMethods are db.Queries' methods, by name.
func (a *adapter) queriesMethods() []*types.Func {
	iface := a.dbPkg.Scope().Lookup("Queries").Type().Underlying().(*types.Interface)
	var out []*types.Func
	for i := range iface.NumMethods() {
		out = append(out, iface.Method(i))
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name() < out[j].Name() })
	return out
}

// handWritten reports whether the adapter's queries type has method name (outside the generated file).
func (a *adapter) handWritten(name string) bool {
	q := a.pkg.Scope().Lookup("queries").Type()
	obj, _, _ := types.LookupFieldOrMethod(types.NewPointer(q), true, a.pkg, name)
	_, ok := obj.(*types.Func)
	return ok
}

func (a *adapter) qual(p *types.Package) string {
	if p == a.pkg {
		return ""
	}
	return p.Name()
}

func (a *adapter) typ(t types.Type) string { return types.TypeString(t, a.qual) }

// handle is the generated-queries field a method calls.
func (a *adapter) handle(name string) string {
	if !a.split {
		return "q.q"
	}
	if text, ok := a.sql[name]; ok && !strings.Contains(name, "Lock") {
		sql := strings.TrimSpace(regexp.MustCompile(`(?m)^--.*$`).ReplaceAllString(text, ""))
		if strings.HasPrefix(strings.ToUpper(sql), "SELECT") {
			return "q.r"
		}
	}
	return "q.w"
}

// method is one method to write: its signature's parts and its body.
type method struct {
	name, params, results, body string
}

// candidates returns the bodies to try for m, in order of preference, with the argument named argName.
func (a *adapter) candidates(m *types.Func, params, argName string) ([]string, error) {
	sig := m.Type().(*types.Signature)
	gen, ok := a.genQuery(m.Name())
	if !ok {
		return nil, fmt.Errorf("%s: no generated query of that name; write it by hand", m.Name())
	}
	gsig := gen.Type().(*types.Signature)
	if sig.Params().Len() != gsig.Params().Len() || sig.Params().Len() > 2 {
		return nil, fmt.Errorf("%s: the generated query takes other arguments; write it by hand", m.Name())
	}
	var out []string
	for _, call := range a.calls(m.Name(), m.Name(), gsig, params, argName) {
		for _, w := range []string{"errs.Err", "errs.Found", "errs.Rows", "errs.Inserted", "errs.Strings"} {
			out = append(out, fmt.Sprintf("return %s(%s)", w, call))
		}
		var embedded []string // the table's row inside a row (sqlc.embed), e.g. a locking read with its clock
		if gsig.Results().Len() > 0 {
			if st, ok := gsig.Results().At(0).Type().Underlying().(*types.Struct); ok {
				for i := range st.NumFields() {
					if _, ok := st.Field(i).Type().Underlying().(*types.Struct); ok {
						embedded = append(embedded, st.Field(i).Name())
					}
				}
			}
		}
		for _, f := range a.byPrefix(m.Name(), "FromGen") {
			out = append(out,
				fmt.Sprintf("r, err := %s\n\treturn conv.One(errs, r, err, conv.%s)", call, f),
				fmt.Sprintf("rs, err := %s\n\treturn conv.Many(errs, rs, err, conv.%s)", call, f),
				fmt.Sprintf("r, err := %s\n\treturn conv.Locked(errs, r, r.DbNow, err, conv.%s)", call, f))
			for _, e := range embedded {
				out = append(out, fmt.Sprintf("r, err := %s\n\treturn conv.Locked(errs, r.%s, r.DbNow, err, conv.%s)", call, e, f))
			}
		}
	}
	return out, nil
}

// genQuery is the generated query named name.
func (a *adapter) genQuery(name string) (*types.Func, bool) {
	obj, _, _ := types.LookupFieldOrMethod(types.NewPointer(a.genPkg.Scope().Lookup("Queries").Type()), true, a.genPkg, name)
	f, ok := obj.(*types.Func)
	return f, ok
}

// calls returns the calls of the generated query gen (of signature gsig) from method that compile, in order of
// preference for the argument: passed as is (a time: conv.TimeToGen), then conv.<X>ToGen[<GenParams>](arg) (the conv function sharing the
// longest prefix with method's name first), then a struct conversion <GenParams>(arg).
func (a *adapter) calls(method, gen string, gsig *types.Signature, params, argName string) []string {
	args := []string{""}
	if gsig.Params().Len() == 2 {
		gt := a.typ(gsig.Params().At(1).Type())
		args = []string{argName}
		if types.TypeString(gsig.Params().At(1).Type(), nil) == "time.Time" {
			// Every time written is UTC truncated to the microsecond, also where the engine's type is time.Time.
			args = []string{fmt.Sprintf("conv.TimeToGen[%s](%s)", gt, argName)}
		}
		for _, f := range a.byPrefix(method, "ToGen") {
			args = append(args, fmt.Sprintf("conv.%s[%s](%s)", f, gt, argName))
		}
		if _, named := gsig.Params().At(1).Type().(*types.Named); named {
			args = append(args, fmt.Sprintf("%s(%s)", gt, argName))
		}
	}
	var out []string
	for _, arg := range args {
		call := fmt.Sprintf("%s.%s(ctx)", a.handle(gen), gen)
		if arg != "" {
			call = fmt.Sprintf("%s.%s(ctx, %s)", a.handle(gen), gen, arg)
		}
		// A call that does not compile as a statement compiles in no body: checking it first keeps the number of
		// bodies to check small.
		if a.compiles(params, "", call) {
			out = append(out, call)
		}
	}
	return out
}

// touchPrefix is, for a "…Lock" method whose engine has the no-op "…Touch" update of the same row (MySQL mode) and
// an adapter function touch running it where the engine needs it, the statements that run it first; "" otherwise.
// The touch's argument is converted as a call's argument is.
func (a *adapter) touchPrefix(m *types.Func, params, results, argName, body string) string {
	stem, ok := strings.CutSuffix(m.Name(), "Lock")
	if _, fn := a.pkg.Scope().Lookup("touch").(*types.Func); !ok || !fn {
		return ""
	}
	gen, ok := a.genQuery(stem + "Touch")
	if !ok || gen.Type().(*types.Signature).Params().Len() != 2 {
		return ""
	}
	sig := m.Type().(*types.Signature)
	var zeros []string
	for i := range sig.Results().Len() - 1 {
		zeros = append(zeros, a.zero(sig.Results().At(i).Type()))
	}
	ret := strings.Join(append(zeros, "errs(err)"), ", ")
	for _, call := range a.calls(m.Name(), stem+"Touch", gen.Type().(*types.Signature), params, argName) {
		fn, rest, _ := strings.Cut(call, "(")
		arg := strings.TrimSuffix(strings.TrimPrefix(rest, "ctx, "), ")")
		prefix := fmt.Sprintf("if _, err := touch(ctx, q, %s, %s); err != nil {\n\t\treturn %s\n\t}\n\t", fn, arg, ret)
		if a.compiles(params, results, prefix+body) {
			return prefix
		}
	}
	return ""
}

// emptyGuard is, for an :execrows statement over the rows a list names (sqlc.slice, or = ANY of an array), the
// statement that answers 0 rows without a round trip when the list is empty; "" otherwise.
func (a *adapter) emptyGuard(m *types.Func, results, argName string) string {
	text := a.sql[m.Name()]
	sig := m.Type().(*types.Signature)
	overList := strings.Contains(text, "/*SLICE:") || strings.Contains(text, "= ANY (")
	negated := strings.Contains(strings.ToUpper(text), "NOT IN") || strings.Contains(text, "ALL (")
	if results != "(int64, error)" || sig.Params().Len() != 2 || !strings.Contains(text, ":execrows") || !overList || negated {
		return ""
	}
	list := ""
	isList := func(t types.Type) bool {
		s, ok := t.Underlying().(*types.Slice)
		return ok && !types.Identical(s.Elem(), types.Typ[types.Byte])
	}
	switch t := sig.Params().At(1).Type(); {
	case isList(t):
		list = argName
	default:
		st, ok := t.Underlying().(*types.Struct)
		if !ok {
			return ""
		}
		for i := range st.NumFields() {
			if isList(st.Field(i).Type()) {
				if list != "" {
					return "" // two lists: which one's emptiness answers is not for adaptergen to decide
				}
				list = argName + "." + st.Field(i).Name()
			}
		}
	}
	if list == "" {
		return ""
	}
	return fmt.Sprintf("if len(%s) == 0 {\n\t\treturn 0, nil\n\t}\n\t", list)
}

// zero is the zero value of t as an expression.
func (a *adapter) zero(t types.Type) string {
	switch u := t.Underlying().(type) {
	case *types.Basic:
		switch {
		case u.Info()&types.IsString != 0:
			return `""`
		case u.Info()&types.IsBoolean != 0:
			return "false"
		}
		return "0"
	case *types.Struct, *types.Array:
		return a.typ(t) + "{}"
	}
	return "nil"
}

// byPrefix lists conv's functions ending in suffix, the longest common prefix with name first.
func (a *adapter) byPrefix(name, suffix string) []string {
	var fs []string
	for _, f := range a.convFuncs {
		if strings.HasSuffix(f, suffix) {
			fs = append(fs, f)
		}
	}
	common := func(f string) int {
		f = strings.TrimSuffix(f, suffix)
		n := 0
		for n < len(f) && n < len(name) && f[n] == name[n] {
			n++
		}
		if n == len(f) {
			n += 100 // the whole stem is a prefix of the name
		}
		return n
	}
	sort.SliceStable(fs, func(i, j int) bool {
		ci, cj := common(fs[i]), common(fs[j])
		if ci != cj {
			return ci > cj
		}
		return fs[i] < fs[j]
	})
	return fs
}

// signature returns the parameter and result lists of m, its arguments (after ctx) named names.
func (a *adapter) signature(m *types.Func, names []string) (string, string) {
	sig := m.Type().(*types.Signature)
	params := "ctx context.Context"
	for i := 1; i < sig.Params().Len(); i++ {
		params += ", " + names[i-1] + " " + a.typ(sig.Params().At(i).Type())
	}
	var rs []string
	for i := range sig.Results().Len() {
		rs = append(rs, a.typ(sig.Results().At(i).Type()))
	}
	results := strings.Join(rs, ", ")
	if len(rs) > 1 {
		results = "(" + results + ")"
	}
	return params, results
}

func (a *adapter) recv() string {
	if a.recvPtr {
		return "q *queries"
	}
	return "q queries"
}

// compiles reports whether body type-checks as m's body in the adapter.
func (a *adapter) compiles(params, results, body string) bool {
	src := fmt.Sprintf("func(%s, %s) %s {\n\t%s\n}", a.recv(), params, results, body)
	expr, err := parser.ParseExprFrom(a.fset, "candidate.go", src, 0)
	if err != nil {
		return false
	}
	return types.CheckExpr(a.fset, a.pkg, a.scopePos, expr, nil) == nil
}

// write returns the first candidate body of m that compiles, its arguments (after ctx) named names. A method
// without a generated query of its name runs its db.Chain… function when db has one.
func (a *adapter) write(m *types.Func, names []string) (method, error) {
	params, results := a.signature(m, names)
	if fn, ok := a.dbPkg.Scope().Lookup("Chain" + m.Name()).(*types.Func); ok && !a.hasQuery(m.Name()) {
		// Not type-checked here: q implements db.Queries only once the generated methods exist (the build checks it).
		if fn.Type().(*types.Signature).Params().Len() != len(names)+2 {
			return method{}, fmt.Errorf("%s: db.Chain%s takes other arguments", m.Name(), m.Name())
		}
		body := fmt.Sprintf("return db.%s(%s)", fn.Name(), strings.Join(append([]string{"ctx", "q"}, names...), ", "))
		return method{name: m.Name(), params: params, results: results, body: body}, nil
	} else if len(names) <= 1 {
		arg := "p"
		if len(names) == 1 {
			arg = names[0]
		}
		cands, err := a.candidates(m, params, arg)
		if err != nil {
			return method{}, err
		}
		for _, body := range cands {
			if a.compiles(params, results, body) {
				body = a.emptyGuard(m, results, arg) + a.touchPrefix(m, params, results, arg, body) + body
				return method{name: m.Name(), params: params, results: results, body: body}, nil
			}
		}
		return method{}, fmt.Errorf("%s: no pass-through compiles; write it by hand", m.Name())
	}
	return method{}, fmt.Errorf("%s: more than one argument and no db.Chain%s; write it by hand", m.Name(), m.Name())
}

// hasQuery reports whether the generated package has a query named name.
func (a *adapter) hasQuery(name string) bool {
	_, ok := a.sql[name]
	return ok
}

// argNames are the names of m's arguments after ctx, as db.Queries declares them ("p", "p2", … when unnamed).
func argNames(m *types.Func) []string {
	sig := m.Type().(*types.Signature)
	var out []string
	for i := 1; i < sig.Params().Len(); i++ {
		n := sig.Params().At(i).Name()
		if n == "" || n == "_" {
			n = "p"
			if i > 1 {
				n = fmt.Sprintf("p%d", i)
			}
		}
		out = append(out, n)
	}
	return out
}

func (a *adapter) generate() ([]byte, error) {
	var b bytes.Buffer
	fmt.Fprintf(&b, "// Code generated by internal/tools/adaptergen. DO NOT EDIT.\n\npackage %s\n\n", a.pkgName)
	var methods []method
	var errs []error
	for _, m := range a.queriesMethods() {
		if a.handWritten(m.Name()) {
			continue
		}
		w, err := a.write(m, argNames(m))
		if err != nil {
			errs = append(errs, err)
			continue
		}
		methods = append(methods, w)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	if len(methods) == 0 {
		return format.Source(b.Bytes())
	}
	var body bytes.Buffer
	for _, m := range methods {
		fmt.Fprintf(&body, "\nfunc (%s) %s(%s) %s {\n\t%s\n}\n", a.recv(), m.name, m.params, m.results, m.body)
	}
	text := body.String()
	b.WriteString("import (\n\t\"context\"\n")
	if strings.Contains(text, "time.") {
		b.WriteString("\t\"time\"\n")
	}
	b.WriteString("\n")
	if strings.Contains(text, "db.") {
		fmt.Fprintf(&b, "\t%q\n", module+"/db")
	}
	if strings.Contains(text, a.genName+".") {
		fmt.Fprintf(&b, "\t%q\n", module+"/db/gen/"+a.genName)
	}
	if strings.Contains(text, "conv.") {
		fmt.Fprintf(&b, "\t%q\n", module+"/db/internal/conv")
	}
	b.WriteString(")\n")
	b.WriteString(text)
	return format.Source(b.Bytes())
}

// prune deletes the hand-written methods of queries whose body is exactly the one adaptergen would write.
func (a *adapter) prune() error {
	byName := map[string]*types.Func{}
	for _, m := range a.queriesMethods() {
		byName[m.Name()] = m
	}
	for path, f := range a.files {
		changed := false
		var keep []ast.Decl
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if ok && fd.Recv != nil && byName[fd.Name.Name] != nil && a.isQueriesRecv(fd) {
				m := byName[fd.Name.Name]
				var names []string
				for _, f := range fd.Type.Params.List[1:] {
					for _, n := range f.Names {
						names = append(names, n.Name)
					}
				}
				w, err := a.write(m, names)
				if os.Getenv("ADAPTERGEN_DEBUG") != "" {
					fmt.Fprintf(os.Stderr, "%s: %v\n%s\n%s\n", m.Name(), err, normalize(a.bodyText(fd)), normalize(w.body))
				}
				if err == nil && normalize(a.bodyText(fd)) == normalize(w.body) {
					changed = true
					if fd.Doc != nil {
						f.Comments = slices.DeleteFunc(f.Comments, func(c *ast.CommentGroup) bool { return c == fd.Doc })
					}
					continue
				}
			}
			keep = append(keep, d)
		}
		if !changed {
			continue
		}
		f.Decls = keep
		var buf bytes.Buffer
		if err := printer.Fprint(&buf, a.fset, f); err != nil {
			return err
		}
		src, err := format.Source(dropUnusedImports(buf.Bytes()))
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		if onlyPackageAndImports(src) {
			if err := os.Remove(path); err != nil {
				return err
			}
			continue
		}
		if err := os.WriteFile(path, src, 0o644); err != nil {
			return err
		}
	}
	return nil
}

func (a *adapter) isQueriesRecv(fd *ast.FuncDecl) bool {
	t := fd.Recv.List[0].Type
	if s, ok := t.(*ast.StarExpr); ok {
		t = s.X
	}
	id, ok := t.(*ast.Ident)
	return ok && id.Name == "queries"
}

func (a *adapter) bodyText(fd *ast.FuncDecl) string {
	var buf bytes.Buffer
	for _, s := range fd.Body.List {
		_ = printer.Fprint(&buf, a.fset, s)
		buf.WriteString("\n")
	}
	return buf.String()
}

var space = regexp.MustCompile(`\s+`)

func normalize(s string) string {
	return space.ReplaceAllString(strings.ReplaceAll(s, "rs, err", "r, err"), "")
}

// dropUnusedImports removes the import lines whose package name no longer appears in the file.
func dropUnusedImports(src []byte) []byte {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "", src, parser.ParseComments)
	if err != nil {
		return src
	}
	used := map[string]bool{}
	ast.Inspect(f, func(n ast.Node) bool {
		if sel, ok := n.(*ast.SelectorExpr); ok {
			if id, ok := sel.X.(*ast.Ident); ok {
				used[id.Name] = true
			}
		}
		return true
	})
	for _, d := range f.Decls {
		gd, ok := d.(*ast.GenDecl)
		if !ok || gd.Tok != token.IMPORT {
			continue
		}
		var specs []ast.Spec
		for _, s := range gd.Specs {
			is := s.(*ast.ImportSpec)
			path := strings.Trim(is.Path.Value, `"`)
			name := path[strings.LastIndex(path, "/")+1:]
			if is.Name != nil {
				name = is.Name.Name
			}
			if used[name] || name == "_" {
				specs = append(specs, s)
			}
		}
		gd.Specs = specs
	}
	var buf bytes.Buffer
	if err := printer.Fprint(&buf, fset, f); err != nil {
		return src
	}
	return buf.Bytes()
}

func onlyPackageAndImports(src []byte) bool {
	f, err := parser.ParseFile(token.NewFileSet(), "", src, 0)
	if err != nil {
		return false
	}
	for _, d := range f.Decls {
		if gd, ok := d.(*ast.GenDecl); !ok || gd.Tok != token.IMPORT {
			return false
		}
	}
	return true
}
