//go:build !unix

package blockcache

func processCPU() int64 { return 0 }
