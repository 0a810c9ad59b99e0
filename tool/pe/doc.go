// Package pe is `regionsrv pe`, RegionKV's performance evaluation, modelled
// on `hbase pe --nomapred` (HBase's PerformanceEvaluation run in-process):
//
//	regionsrv pe [options] COMMAND NCLIENTS
//
// NCLIENTS goroutines run COMMAND against table TestTable, with families
// info0..info<families-1>, qualifiers "0".."columns-1" and 26-digit row
// keys: by default against an embedded region in --dir (a fresh temporary
// directory if none), or, with --zk, against a server through the client.
// It prints a summary and, with --json, one JSON object on the last line of
// stdout, whose keys docs/design.md ("Command line") fixes. `regionsrv pe
// -h` lists the commands and options.
//
// Main is the whole command line; cmd/regionsrv only dispatches to it. It
// may run more than once in a process, as the tests do, but its heap figures
// (allocsPerOp, gcCycles) are the whole process's and --cpuprofile takes the
// process's one CPU profile: runs side by side would skew each other.
package pe
