package shell

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/regionkv/regionkv/client"
	"github.com/stretchr/testify/require"
)

// TestShellSplitMerge: split at a row and without one, the switches, and
// merge_region by encoded names, as HBase 2's shell spells them.
func TestShellSplitMerge(t *testing.T) {
	var script strings.Builder
	script.WriteString("create 'sm', 'f'\n")
	for i := 0; i < 200; i++ {
		fmt.Fprintf(&script, "put 'sm', 'r%03d', 'f:q', '%s'\n", i, strings.Repeat("v", 100))
	}
	script.WriteString("flush 'sm'\nsplit 'sm', 'r100'\nsplitormerge_enabled 'SPLIT'\n")
	code, out, errOut := runShell(t, "", "-e", script.String())
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, "true")
	c, err := client.New(context.Background(), client.Options{ZKQuorum: zkAddr(t)})
	require.NoError(t, err)
	defer c.Close()
	regions, err := c.Regions(context.Background(), "sm")
	require.NoError(t, err)
	require.Len(t, regions, 2)
	require.Equal(t, "r100", string(regions[1].StartKey))

	code, out, errOut = runShell(t, "", "-e", "splitormerge_switch 'MERGE', false\nsplitormerge_enabled 'MERGE'\nsplitormerge_switch 'MERGE', true")
	require.Equal(t, 0, code, errOut)
	require.Equal(t, []string{"true", "false", "false"}, resultLines(out))

	// The daughters compact their parent's files away in the background;
	// until then they are not mergeable.
	merge := fmt.Sprintf("merge_region '%s', '%s'", regions[0].EncodedName, regions[1].EncodedName)
	deadline := time.Now().Add(60 * time.Second)
	for {
		code, _, errOut = runShell(t, "", "-e", merge)
		if code == 0 || time.Now().After(deadline) {
			break
		}
		require.Contains(t, errOut, "MergeRegionException")
		time.Sleep(20 * time.Millisecond)
	}
	require.Equal(t, 0, code, errOut)
	regions, err = c.Regions(context.Background(), "sm")
	require.NoError(t, err)
	require.Len(t, regions, 1)

	// split without a row, once the merged region compacted.
	for {
		code, _, errOut = runShell(t, "", "-e", "split 'sm'")
		if code == 0 || time.Now().After(deadline) {
			break
		}
		require.Contains(t, errOut, "NOT splittable")
		time.Sleep(20 * time.Millisecond)
	}
	require.Equal(t, 0, code, errOut)
	regions, err = c.Regions(context.Background(), "sm")
	require.NoError(t, err)
	require.Len(t, regions, 2)
	code, out, errOut = runShell(t, "", "-e", "count 'sm'")
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, "200 row(s)")
}

// resultLines returns the lines of out that are a command's one-value
// result (true or false).
func resultLines(out string) []string {
	var got []string
	for _, l := range strings.Split(out, "\n") {
		if l == "true" || l == "false" {
			got = append(got, l)
		}
	}
	return got
}

// TestShellAssign: assign by full and by encoded name leaves an open region
// as it is; a region no server knows is an error naming it. (A region that
// did not open is the server's test: TestRegionFailedOpen.)
func TestShellAssign(t *testing.T) {
	code, _, errOut := runShell(t, "", "-e", "create 'as', 'f'\nput 'as', 'r1', 'f:q', 'v'")
	require.Equal(t, 0, code, errOut)
	c, err := client.New(context.Background(), client.Options{ZKQuorum: zkAddr(t)})
	require.NoError(t, err)
	defer c.Close()
	regions, err := c.Regions(context.Background(), "as")
	require.NoError(t, err)
	require.Len(t, regions, 1)
	code, _, errOut = runShell(t, "", "-e", fmt.Sprintf("assign '%s'\nassign '%s'\nget 'as', 'r1'",
		regions[0].Name, regions[0].EncodedName))
	require.Equal(t, 0, code, errOut)
	code, _, errOut = runShell(t, "", "-e", "assign 'as,,1.0123456789abcdef0123456789abcdef.'")
	require.NotEqual(t, 0, code)
	require.Contains(t, errOut, "Unknown region")
	require.Contains(t, errOut, "0123456789abcdef0123456789abcdef")
}
