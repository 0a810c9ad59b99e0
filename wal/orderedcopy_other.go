//go:build !amd64

package wal

// orderedPiece, where memmove's order within a small copy is not known:
// pieces shorter than any record (a header and an entry's key), so that no
// whole record can be in a piece whose later bytes were stored before its
// earlier ones.
const orderedPiece = 16
