// Package integration holds end-to-end tests: a real ZooKeeper (Debian's,
// as a child process), a real regionsrv process built from this tree, and
// the client package talking to them over the network, as an HBase
// application would. It has no non-test code.
//
// TestMain builds regionsrv and starts ZooKeeper; without ZooKeeper the
// tests are skipped, unless REGIONKV_REQUIRE_ZOOKEEPER is set. Tests that
// need no special settings share one server (sharedServer), each with its
// own tables, which are dropped and created again when a table of the same
// name is left from an earlier run (go test -count); the shared server is
// stopped with SIGTERM after the last test and must exit cleanly. Tests
// that restart the server or need settings (a short scanner lease, small
// memstores) start their own with startServer.
//
// Under -race, REGIONKV_RACE_SERVER=1 builds regionsrv with -race as well,
// so that a data race in the server fails the test that stops it.
package integration
