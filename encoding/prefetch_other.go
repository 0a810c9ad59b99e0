//go:build !amd64

package encoding

func prefetch(p *byte) {}
