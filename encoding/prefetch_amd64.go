package encoding

// prefetch asks the processor to bring the cache line holding *p into its
// caches, without waiting for it.
//
//go:noescape
func prefetch(p *byte)
