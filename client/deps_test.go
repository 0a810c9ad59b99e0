package client

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/cockroachdb/errors"
)

// TestNoStorageEngine keeps the client light: it may use filter, ipc,
// hbasepb, encoding and internal packages of ours, and nothing of the
// storage engine or the libraries only the engine needs. A program that
// talks to a server should not link the memstore, HFiles or the WAL.
func TestNoStorageEngine(t *testing.T) {
	const module = "github.com/regionkv/regionkv"
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		if ee := (*exec.ExitError)(nil); errors.As(err, &ee) {
			t.Fatalf("go list -deps: %v\n%s", err, ee.Stderr)
		}
		t.Fatalf("go list -deps: %v", err)
	}
	banned := map[string]bool{
		"github.com/google/btree":            true,
		"github.com/klauspost/compress/zstd": true,
	}
	for _, p := range []string{"scanner", "hfile", "memstore", "region", "wal", "blockcache", "mvcc"} {
		banned[module+"/"+p] = true
	}
	allowed := []string{"/filter", "/ipc", "/hbasepb", "/encoding", "/internal/", "/client"}
	for _, dep := range strings.Fields(string(out)) {
		if banned[dep] {
			t.Errorf("client depends on %s", dep)
			continue
		}
		rest, ours := strings.CutPrefix(dep, module)
		if !ours || rest == "" {
			continue
		}
		ok := false
		for _, a := range allowed {
			if rest == a || (strings.HasSuffix(a, "/") && strings.HasPrefix(rest, a)) {
				ok = true
			}
		}
		if !ok {
			t.Errorf("client depends on %s, which is neither filter, ipc, hbasepb, encoding nor internal", dep)
		}
	}
}
