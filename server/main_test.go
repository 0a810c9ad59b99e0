package server

import (
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/regionkv/regionkv/internal/testutil"
)

// TestMain fails the package when a test leaves a region open: its
// background work would fall into later tests (the allocation ceilings).
func TestMain(m *testing.M) {
	code := m.Run()
	if code == 0 {
		if leaked := testutil.LeakedGoroutines(5*time.Second, "region.(*Region).flusher", "region.(*Region).compactor"); leaked != "" {
			fmt.Printf("FAIL: regions left open by the tests:\n%s\n", leaked)
			code = 1
		}
	}
	os.Exit(code)
}
