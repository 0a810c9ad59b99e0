//go:build !unix

package server

// defaultMaxConnections is a fixed bound where the open-file limit cannot
// be read.
func defaultMaxConnections() int { return 10000 }
