package hfile

import (
	"fmt"
	"testing"

	"github.com/regionkv/regionkv/encoding"
	"github.com/stretchr/testify/require"
)

// TestBloomGate: a file whose bloom says "no" to fewer than one point read
// in bloomPaysEvery stops being asked, but for one read in
// bloomSampleEvery; once the sampled answers show that it pays again, every
// read asks it again. A bloom that pays is never turned off.
func TestBloomGate(t *testing.T) {
	var kvs []*encoding.KeyValue
	for i := 0; i < 2000; i++ {
		kvs = append(kvs, &encoding.KeyValue{Row: []byte(fmt.Sprintf("row%05d", 2*i)), Family: []byte("f"), Qualifier: []byte("q"),
			Timestamp: 1, Type: encoding.TypePut, Value: []byte("v")})
	}
	probe := func(r *Reader, i int) bool {
		ok, err := r.MayContainGet(&RowProbe{Row: []byte(fmt.Sprintf("row%05d", i)), Family: []byte("f")})
		require.NoError(t, err)
		return ok
	}
	absentNoes := func(r *Reader, n int) (noes int) {
		for i := 0; i < n; i++ {
			if !probe(r, 2*(i%2000)+1) {
				noes++
			}
		}
		return noes
	}

	r := writeFile(t, kvs, WriterOptions{BloomType: BloomRow})
	require.Greater(t, absentNoes(r, 100), 90, "a fresh file asks its bloom")
	// One answer in bloomObserveEvery is counted, at random: twice the
	// reads a window needs on average.
	for i := 0; i < 2*bloomWindow*bloomObserveEvery; i++ {
		require.True(t, probe(r, 2*(i%2000)))
	}
	require.True(t, r.gate.skipping.Load(), "a bloom that never says no is turned off")
	// The sample is random, one read in bloomSampleEvery on average: 100 of
	// these 1,600, and far from the bounds.
	n := absentNoes(r, 1600)
	require.LessOrEqual(t, n, 1600/(bloomSampleEvery/2), "rows the file lacks are asked about only in a sample")
	require.Greater(t, n, 0, "the sample still asks")
	// The sampled answers fill a window that shows the bloom pays: about
	// bloomWindow × bloomSampleEvery reads.
	for i := 0; i < 3*bloomWindow*bloomSampleEvery && r.gate.skipping.Load(); i += 100 {
		absentNoes(r, 100)
	}
	require.False(t, r.gate.skipping.Load())
	require.Greater(t, absentNoes(r, 100), 90, "asked again")

	// One read in ten for a row the file lacks: the bloom pays, and stays.
	r2 := writeFile(t, kvs, WriterOptions{BloomType: BloomRow})
	for i := 0; i < 4*bloomWindow*bloomObserveEvery; i++ {
		row := 2 * (i % 2000)
		if i%10 == 0 {
			row++
		}
		probe(r2, row)
		require.False(t, r2.gate.skipping.Load(), "read %d", i)
	}
}
