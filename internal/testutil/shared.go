// Package testutil holds helpers shared by tests of several packages.
package testutil

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// SharedDir returns the project's shared/ directory, which sits beside the
// repository checkout and holds HBase-written fixtures and independent
// inspection tools. Without it the test is skipped, unless
// REGIONKV_REQUIRE_SHARED is set (as CI sets it), in which case it fails.
func SharedDir(t testing.TB) string {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	root := filepath.Join(filepath.Dir(file), "..", "..")
	dir := filepath.Join(root, "..", "shared")
	if st, err := os.Stat(filepath.Join(dir, "tools")); err == nil && st.IsDir() {
		return dir
	}
	if os.Getenv("REGIONKV_REQUIRE_SHARED") != "" {
		t.Fatalf("shared/ directory not found at %s (REGIONKV_REQUIRE_SHARED is set)", dir)
	}
	t.Skipf("shared/ directory not found at %s; set it up beside the checkout to run this cross-check", dir)
	return ""
}
