package wal

// orderedCopy copies min(len(dst), len(src)) bytes of src to dst, storing
// them in ascending address order, and returns how many it copied. Records
// are copied into a mapped segment with it, not with copy.
//
// Why: a copy into a mapping is the write, and a process killed in the
// middle of it (most often while a store into a page touched for the first
// time waits for the page fault) leaves whatever stores were done. The
// reader calls a bad record followed by an intact one corruption, which is
// right only if an interrupted write always leaves a prefix of what it
// was writing. Go's memmove does not: on amd64 a copy of more than 256
// bytes stores its first 1 to 32 bytes and its last 128 after the middle
// (they are saved in registers first, so that the middle can be copied to
// aligned addresses). A killed round left a record whose header was still
// zeros, followed by intact records: the region would not open
// (TestSplitKillLoop, once in CI; TestOrderedCopyFault shows the pattern).
//
// orderedCopy copies in pieces of at most orderedPiece bytes, in order.
// Within a piece the order of the stores is memmove's; see orderedPiece for
// why a piece cannot hold a whole record written out of turn.
func orderedCopy(dst, src []byte) int {
	n := min(len(dst), len(src))
	for i := 0; i < n; i += orderedPiece {
		j := min(i+orderedPiece, n)
		copy(dst[i:j], src[i:j])
	}
	return n
}
