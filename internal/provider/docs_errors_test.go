package provider

// The error reference (templates/guides/errors.md.tmpl, generated into
// docs/guides/errors.md) covers every diagnostic title the provider's code can
// produce, and lists no title the code no longer produces.
//
// How titles are extracted (go/parser + go/ast over this package's non-test
// files, no type checking):
//
//   - A sink is a call whose title argument is a diagnostic's summary:
//     AddError/AddWarning/diag.NewErrorDiagnostic/diag.NewWarningDiagnostic
//     (argument 0) and AddAttributeError/AddAttributeWarning/
//     diag.NewAttributeErrorDiagnostic/diag.NewAttributeWarningDiagnostic
//     (argument 1).
//   - A helper is a function of this package that passes one of its
//     parameters, unchanged, as a sink's title (addAPIError, addAPIWarning,
//     …); calls to it are sinks at that parameter's position. Helpers are
//     found to a fixed point, and are matched by name (method or function).
//     A local variable bound to a sink (report := diags.AddError) is a sink.
//   - A title expression evaluates to a pattern: a string literal is itself;
//     a package constant is its value; a + b concatenates; fmt.Sprintf
//     substitutes constant string arguments for %s and a variable part for
//     every other verb or argument; a local variable is each value assigned
//     to it in the function; anything else (a parameter, a field, a call) is
//     a variable part.
//   - A pattern is rendered with each run of variable parts as "…": the
//     title fmt.Sprintf("Failed to read group %q under stream prefix %q", g, p)
//     is "Failed to read group … under stream prefix …", and "Invalid "+name
//     is "Invalid …".
//
// The page lists titles in the first column of the table under
// "## By the provider's diagnostic title", each in backticks, rendered the
// same way. Every rendered title of the code must be listed there exactly,
// and every title listed must be one the code renders. A title that is
// nothing but variable parts fails the test: give it a constant part.

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// titleVar marks a variable part of a title pattern.
const titleVar = "\x00"

var sinkTitleArg = map[string]int{
	"AddError":                      0,
	"AddWarning":                    0,
	"NewErrorDiagnostic":            0,
	"NewWarningDiagnostic":          0,
	"AddAttributeError":             1,
	"AddAttributeWarning":           1,
	"NewAttributeErrorDiagnostic":   1,
	"NewAttributeWarningDiagnostic": 1,
}

// diagnosticTitles returns the rendered titles the package's non-test source
// can produce, each with one position that produces it.
func diagnosticTitles(t *testing.T) map[string]string {
	t.Helper()
	fset := token.NewFileSet()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	var parsed []*ast.File
	consts := map[string]ast.Expr{}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		af, err := parser.ParseFile(fset, f, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		parsed = append(parsed, af)
		for _, d := range af.Decls {
			gd, ok := d.(*ast.GenDecl)
			if !ok || gd.Tok != token.CONST {
				continue
			}
			for _, s := range gd.Specs {
				vs := s.(*ast.ValueSpec)
				for i, n := range vs.Names {
					if i < len(vs.Values) {
						consts[n.Name] = vs.Values[i]
					}
				}
			}
		}
	}
	if len(parsed) == 0 {
		t.Fatal("no source files")
	}

	sinks := map[string]int{}
	for k, v := range sinkTitleArg {
		sinks[k] = v
	}
	var funcs []*ast.FuncDecl
	for _, af := range parsed {
		for _, d := range af.Decls {
			if fd, ok := d.(*ast.FuncDecl); ok && fd.Body != nil {
				funcs = append(funcs, fd)
			}
		}
	}

	funcsByName = map[string][]*ast.FuncDecl{}
	for _, fd := range funcs {
		funcsByName[fd.Name.Name] = append(funcsByName[fd.Name.Name], fd)
	}

	// Find the helpers to a fixed point.
	for changed := true; changed; {
		changed = false
		for _, fd := range funcs {
			if _, done := sinks[fd.Name.Name]; done {
				continue
			}
			params := paramIndex(fd)
			locals := localSinks(fd, sinks)
			ast.Inspect(fd.Body, func(n ast.Node) bool {
				call, ok := n.(*ast.CallExpr)
				if !ok {
					return true
				}
				idx, ok := sinkIndex(call, sinks, locals)
				if !ok || idx >= len(call.Args) {
					return true
				}
				if id, ok := call.Args[idx].(*ast.Ident); ok {
					if pi, ok := params[id.Name]; ok && !assigned(fd, id.Name) {
						sinks[fd.Name.Name] = pi
						changed = true
						return false
					}
				}
				return true
			})
		}
	}

	titles := map[string]string{}
	for _, fd := range funcs {
		params := paramIndex(fd)
		locals := localSinks(fd, sinks)
		ast.Inspect(fd.Body, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			idx, ok := sinkIndex(call, sinks, locals)
			if !ok || idx >= len(call.Args) {
				return true
			}
			arg := call.Args[idx]
			if id, ok := arg.(*ast.Ident); ok {
				if _, isParam := params[id.Name]; isParam && sinks[fd.Name.Name] == params[id.Name] {
					return true // the helper's own forwarding call
				}
			}
			for _, p := range evalTitle(arg, fd, consts, 0) {
				r := renderTitle(p)
				if _, seen := titles[r]; !seen {
					titles[r] = fset.Position(call.Pos()).String()
				}
			}
			return true
		})
	}
	return titles
}

func paramIndex(fd *ast.FuncDecl) map[string]int {
	m := map[string]int{}
	i := 0
	for _, f := range fd.Type.Params.List {
		if len(f.Names) == 0 {
			i++
			continue
		}
		for _, n := range f.Names {
			m[n.Name] = i
			i++
		}
	}
	return m
}

// localSinks are local variables bound to a sink: report := diags.AddError.
func localSinks(fd *ast.FuncDecl, sinks map[string]int) map[string]int {
	m := map[string]int{}
	ast.Inspect(fd.Body, func(n ast.Node) bool {
		as, ok := n.(*ast.AssignStmt)
		if !ok {
			return true
		}
		for i, rhs := range as.Rhs {
			sel, ok := rhs.(*ast.SelectorExpr)
			if !ok || i >= len(as.Lhs) {
				continue
			}
			if idx, ok := sinks[sel.Sel.Name]; ok {
				if id, ok := as.Lhs[i].(*ast.Ident); ok {
					m[id.Name] = idx
				}
			}
		}
		return true
	})
	return m
}

func sinkIndex(call *ast.CallExpr, sinks, locals map[string]int) (int, bool) {
	switch fn := call.Fun.(type) {
	case *ast.SelectorExpr:
		idx, ok := sinks[fn.Sel.Name]
		return idx, ok
	case *ast.Ident:
		if idx, ok := locals[fn.Name]; ok {
			return idx, true
		}
		idx, ok := sinks[fn.Name]
		return idx, ok
	}
	return 0, false
}

// resultOf stands for the index-th result of a call with several results
// (summary, detail := s.preview(…)).
type resultOf struct {
	ast.Expr
	call  *ast.CallExpr
	index int
}

// assignments returns the values assigned to the local name in fd.
func assignments(fd *ast.FuncDecl, name string) []ast.Expr {
	var vals []ast.Expr
	ast.Inspect(fd.Body, func(n ast.Node) bool {
		switch s := n.(type) {
		case *ast.AssignStmt:
			if len(s.Rhs) == 1 && len(s.Lhs) > 1 {
				if call, ok := s.Rhs[0].(*ast.CallExpr); ok {
					for i, l := range s.Lhs {
						if id, ok := l.(*ast.Ident); ok && id.Name == name {
							vals = append(vals, resultOf{call: call, index: i})
						}
					}
				}
				return true
			}
			if len(s.Lhs) != len(s.Rhs) {
				return true
			}
			for i, l := range s.Lhs {
				if id, ok := l.(*ast.Ident); ok && id.Name == name {
					vals = append(vals, s.Rhs[i])
				}
			}
		case *ast.ValueSpec:
			for i, id := range s.Names {
				if id.Name == name && i < len(s.Values) {
					vals = append(vals, s.Values[i])
				}
			}
		}
		return true
	})
	return vals
}

func assigned(fd *ast.FuncDecl, name string) bool { return len(assignments(fd, name)) > 0 }

var verbRe = regexp.MustCompile(`%[-+# 0-9.]*[a-zA-Z%]`)

// evalTitle returns the patterns a title expression can take.
func evalTitle(e ast.Expr, fd *ast.FuncDecl, consts map[string]ast.Expr, depth int) []string {
	if depth > 8 {
		return []string{titleVar}
	}
	switch x := e.(type) {
	case resultOf:
		// The function called, found by name (every function or method of
		// that name with enough results).
		var name string
		switch fn := x.call.Fun.(type) {
		case *ast.SelectorExpr:
			name = fn.Sel.Name
		case *ast.Ident:
			name = fn.Name
		}
		var out []string
		for _, callee := range funcsByName[name] {
			if callee.Type.Results == nil || callee.Type.Results.NumFields() <= x.index {
				continue
			}
			out = append(out, resultValues(callee, x.index, consts, depth)...)
		}
		if len(out) > 0 {
			return dedupe(out)
		}
	case *ast.BasicLit:
		if x.Kind == token.STRING {
			if s, err := strconv.Unquote(x.Value); err == nil {
				return []string{s}
			}
		}
	case *ast.ParenExpr:
		return evalTitle(x.X, fd, consts, depth+1)
	case *ast.BinaryExpr:
		if x.Op == token.ADD {
			var out []string
			for _, l := range evalTitle(x.X, fd, consts, depth+1) {
				for _, r := range evalTitle(x.Y, fd, consts, depth+1) {
					out = append(out, l+r)
				}
			}
			return out
		}
	case *ast.Ident:
		if vals := assignments(fd, x.Name); len(vals) > 0 {
			var out []string
			for _, v := range vals {
				out = append(out, evalTitle(v, fd, consts, depth+1)...)
			}
			return out
		}
		if c, ok := consts[x.Name]; ok {
			return evalTitle(c, fd, consts, depth+1)
		}
	case *ast.CallExpr:
		if sel, ok := x.Fun.(*ast.SelectorExpr); ok && sel.Sel.Name == "Sprintf" && len(x.Args) > 0 {
			formats := evalTitle(x.Args[0], fd, consts, depth+1)
			var out []string
			for _, f := range formats {
				args := x.Args[1:]
				i := 0
				s := verbRe.ReplaceAllStringFunc(f, func(v string) string {
					if v == "%%" {
						return "%"
					}
					defer func() { i++ }()
					if v == "%s" && i < len(args) {
						if vals := evalTitle(args[i], fd, consts, depth+1); len(vals) == 1 && !strings.Contains(vals[0], titleVar) {
							return vals[0]
						}
					}
					return titleVar
				})
				out = append(out, s)
			}
			return out
		}
	}
	return []string{titleVar}
}

// resultValues returns the patterns of callee's index-th result: each value
// its returns give it (or, on a bare return, its named result).
func resultValues(callee *ast.FuncDecl, index int, consts map[string]ast.Expr, depth int) []string {
	var out []string
	ast.Inspect(callee.Body, func(n ast.Node) bool {
		if _, ok := n.(*ast.FuncLit); ok {
			return false
		}
		ret, ok := n.(*ast.ReturnStmt)
		if !ok {
			return true
		}
		if len(ret.Results) > index {
			out = append(out, evalTitle(ret.Results[index], callee, consts, depth+1)...)
		} else if len(ret.Results) == 0 {
			if named := resultName(callee, index); named != "" {
				out = append(out, evalTitle(ast.NewIdent(named), callee, consts, depth+1)...)
			}
		}
		return true
	})
	return out
}

// funcsByName holds the package's functions and methods by name, for
// resolving a result; set by diagnosticTitles.
var funcsByName map[string][]*ast.FuncDecl

func resultName(fd *ast.FuncDecl, index int) string {
	if fd.Type.Results == nil {
		return ""
	}
	i := 0
	for _, f := range fd.Type.Results.List {
		for _, n := range f.Names {
			if i == index {
				return n.Name
			}
			i++
		}
		if len(f.Names) == 0 {
			i++
		}
	}
	return ""
}

func dedupe(in []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, s := range in {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

func renderTitle(p string) string {
	return regexp.MustCompile(titleVar+`+`).ReplaceAllString(p, "…")
}

// errorReferenceTitles returns the titles the page lists under
// "## By the provider's diagnostic title": the backticked strings of each
// table row's first cell.
func errorReferenceTitles(t *testing.T, page string) map[string]bool {
	t.Helper()
	const heading = "## By the provider's diagnostic title"
	i := strings.Index(page, heading)
	if i < 0 {
		t.Fatalf("the error reference has no %q section", heading)
	}
	section := page[i+len(heading):]
	if j := strings.Index(section, "\n## "); j >= 0 {
		section = section[:j]
	}
	listed := map[string]bool{}
	tick := regexp.MustCompile("`([^`]+)`")
	for _, line := range strings.Split(section, "\n") {
		if !strings.HasPrefix(line, "|") || strings.HasPrefix(line, "|---") {
			continue
		}
		cells := strings.Split(line, " | ")
		for _, m := range tick.FindAllStringSubmatch(strings.TrimPrefix(cells[0], "|"), -1) {
			listed[m[1]] = true
		}
	}
	return listed
}

// libraryTitles are the diagnostic titles that the framework-validators
// library (by validator) and Terraform (for a function's argument error)
// produce for what this package's schemas and functions use.
var libraryTitles = map[string]string{
	"LengthAtLeast": "Invalid Attribute Value Length", "LengthBetween": "Invalid Attribute Value Length",
	"RegexMatches": "Invalid Attribute Value Match", "OneOf": "Invalid Attribute Value Match",
	"AtLeast": "Invalid Attribute Value", "AtMost": "Invalid Attribute Value", "Between": "Invalid Attribute Value",
	"ConflictsWith": "Invalid Attribute Combination", "AlsoRequires": "Invalid Attribute Combination",
	"ExactlyOneOf": "Invalid Attribute Combination", "AtLeastOneOf": "Invalid Attribute Combination",
	"NewArgumentFuncError": "Invalid function argument",
}

var libraryUseRE = regexp.MustCompile(`\b(?:stringvalidator|int64validator|int32validator|boolvalidator|mapvalidator|listvalidator|setvalidator|objectvalidator)\.([A-Z]\w*)\(|\bfunction\.(NewArgumentFuncError)\(`)

// addLibraryTitles adds the titles of the library validators and function
// errors the package's non-test source uses; one the map does not know
// fails the test until its title is added there and to the page.
func addLibraryTitles(t *testing.T, titles map[string]string) {
	t.Helper()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range libraryUseRE.FindAllStringSubmatch(string(src), -1) {
			name := m[1] + m[2]
			title, ok := libraryTitles[name]
			if !ok {
				t.Errorf("%s uses the library's %s, whose diagnostic title libraryTitles does not know: add it there and to the error reference", f, name)
				continue
			}
			if _, seen := titles[title]; !seen {
				titles[title] = f + ": the library's " + name
			}
		}
	}
}

func TestErrorReferenceCoversEveryDiagnosticTitle(t *testing.T) {
	titles := diagnosticTitles(t)
	addLibraryTitles(t, titles)
	if len(titles) < 50 {
		t.Fatalf("found only %d diagnostic titles: the extraction is broken", len(titles))
	}
	src, err := os.ReadFile(filepath.Join("..", "..", "templates", "guides", "errors.md.tmpl"))
	if err != nil {
		t.Fatal(err)
	}
	listed := errorReferenceTitles(t, string(src))
	var names []string
	for title := range titles {
		names = append(names, title)
	}
	sort.Strings(names)
	for _, title := range names {
		if strings.Trim(title, "… ") == "" {
			t.Errorf("%s: a diagnostic title with no constant part; give it one", titles[title])
			continue
		}
		if testing.Verbose() {
			t.Logf("%s\t%s", title, titles[title])
		}
		if !listed[title] {
			t.Errorf("the error reference (templates/guides/errors.md.tmpl) lacks the title `%s` (%s)", title, titles[title])
		}
	}
	for title := range listed {
		if _, ok := titles[title]; !ok {
			t.Errorf("the error reference lists `%s`, which the provider no longer produces", title)
		}
	}
}
