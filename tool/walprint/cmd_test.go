package walprint

import (
	"bytes"
)

// runCmd runs `regionsrv ARGS...`, whose first argument is "wal".
func runCmd(args ...string) (code int, stdout, stderr string) {
	if args[0] != "wal" {
		panic("walprint tests: no command " + args[0])
	}
	var o, e bytes.Buffer
	code = Main(args[1:], &o, &e)
	return code, o.String(), e.String()
}
