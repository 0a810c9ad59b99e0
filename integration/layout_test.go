package integration

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

const module = "github.com/regionkv/regionkv"

// listedPackage is what the layout checks need of `go list -json`.
type listedPackage struct {
	ImportPath string
	Imports    []string
	Deps       []string
}

// listPackages returns every package of the module (tests excluded, as the
// rules are about what a program links).
func listPackages(t *testing.T) map[string]listedPackage {
	t.Helper()
	cmd := exec.Command("go", "list", "-json", "./...")
	cmd.Dir = ".."
	out, err := cmd.Output()
	require.NoError(t, err, "go list")
	pkgs := map[string]listedPackage{}
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for dec.More() {
		var p listedPackage
		require.NoError(t, dec.Decode(&p))
		pkgs[strings.TrimPrefix(strings.TrimPrefix(p.ImportPath, module), "/")] = p
	}
	return pkgs
}

func ours(deps []string) []string {
	var out []string
	for _, d := range deps {
		if rest, ok := strings.CutPrefix(d, module+"/"); ok {
			out = append(out, rest)
		}
	}
	return out
}

// TestLayering checks design.md's dependency rules on the module's own
// packages: each may depend (directly or not) only on the packages listed for it (or, with a
// trailing slash, under a prefix), nothing imports cmd, and only cmd
// imports tool.
func TestLayering(t *testing.T) {
	pkgs := listPackages(t)
	allowed := map[string][]string{
		"encoding":                {},
		"hbasepb":                 {"encoding"},
		"mvcc":                    {"internal/"},
		"blockcache":              {"internal/"},
		"wal":                     {"encoding", "internal/"},
		"hfile":                   {"encoding", "internal/"},
		"memstore":                {"encoding", "internal/"},
		"filter":                  {"encoding", "hbasepb", "internal/"},
		"scanner":                 {"encoding", "memstore", "hfile", "filter", "hbasepb", "internal/"},
		"ipc":                     {"hbasepb", "encoding", "internal/"},
		"client":                  {"filter", "ipc", "hbasepb", "encoding", "internal/"},
		"blockcache/hfileadapter": {"blockcache", "hfile", "encoding", "internal/"},
		// The shell works against any HBase-protocol cluster: it talks
		// through the client only.
		"tool/shell": {"client", "filter", "ipc", "hbasepb", "encoding", "internal/"},
	}
	for name, ok := range allowed {
		p, found := pkgs[name]
		require.True(t, found, "package %s", name)
		for _, dep := range ours(p.Deps) {
			legal := false
			for _, a := range ok {
				if dep == a || (strings.HasSuffix(a, "/") && strings.HasPrefix(dep, a)) {
					legal = true
				}
			}
			if !legal {
				t.Errorf("%s depends on %s; it may depend only on %v", name, dep, ok)
			}
		}
	}
	for name, p := range pkgs {
		for _, imp := range ours(p.Imports) {
			if strings.HasPrefix(imp, "cmd/") {
				t.Errorf("%s imports %s: nothing imports cmd", name, imp)
			}
			if strings.HasPrefix(imp, "tool/") && !strings.HasPrefix(name, "cmd/") && !strings.HasPrefix(name, "tool/") {
				t.Errorf("%s imports %s: only cmd uses the tools", name, imp)
			}
		}
	}
}

// TestReadmeLayout: the README's layout table names every package of the
// module, and nothing that is not one.
func TestReadmeLayout(t *testing.T) {
	pkgs := listPackages(t)
	b, err := os.ReadFile(filepath.Join("..", "README.md"))
	require.NoError(t, err)
	readme := string(b)
	i := strings.Index(readme, "## Layout")
	require.GreaterOrEqual(t, i, 0, "README has a Layout section")
	section := readme[i:]
	if j := strings.Index(section[1:], "\n## "); j >= 0 {
		section = section[:j+1]
	}
	named := map[string]bool{}
	cell := regexp.MustCompile("^\\| ([^|]+) \\|")
	name := regexp.MustCompile("`([a-z0-9/]+)`")
	for _, line := range strings.Split(section, "\n") {
		m := cell.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		for _, n := range name.FindAllStringSubmatch(m[1], -1) {
			named[strings.TrimSuffix(n[1], "/")] = true
		}
	}
	for p := range pkgs {
		require.True(t, named[p], "the README's layout table does not list %s", p)
	}
	for n := range named {
		_, ok := pkgs[n]
		require.True(t, ok, "the README's layout table lists %s, which is not a package", n)
	}
}
