package pe

import (
	"bytes"
	"context"
	"io"

	"github.com/regionkv/regionkv/tool/hfileprint"
)

// run is the part of regionsrv's command line these tests call: pe, and
// hfile to look at the files pe writes.
func run(args []string, stdout, stderr io.Writer) int {
	switch args[0] {
	case "pe":
		return Main(context.Background(), args[1:], stdout, stderr)
	case "hfile":
		return hfileprint.Main(args[1:], stdout, stderr)
	}
	panic("pe tests: no command " + args[0])
}

func runCmd(args ...string) (code int, stdout, stderr string) {
	var o, e bytes.Buffer
	code = run(args, &o, &e)
	return code, o.String(), e.String()
}
