//go:build race

package integration

// raceEnabled: the tests run with -race. With REGIONKV_RACE_SERVER=1,
// regionsrv is built with it too.
const raceEnabled = true
