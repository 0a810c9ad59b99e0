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

// TestRowProbeSharedAcrossFiles: one RowProbe asked of several files, as a
// Get asks each file of a store with the row's bloom hashes computed once,
// answers as a fresh probe does in each file, for ROW and delete-family
// blooms; a ROWCOL file in between does not disturb the row's hashes.
func TestRowProbeSharedAcrossFiles(t *testing.T) {
	mk := func(start int, typ encoding.Type) []*encoding.KeyValue {
		var kvs []*encoding.KeyValue
		for i := start; i < 3000; i += 3 {
			kvs = append(kvs, &encoding.KeyValue{Row: []byte(fmt.Sprintf("row%05d", i)), Family: []byte("f"),
				Qualifier: []byte("q"), Timestamp: 1, Type: typ, Value: []byte("v")})
			if typ == encoding.TypeDeleteFamily {
				kvs[len(kvs)-1].Qualifier, kvs[len(kvs)-1].Value = nil, nil
			}
		}
		return kvs
	}
	files := []*Reader{
		writeFile(t, mk(0, encoding.TypePut), WriterOptions{BloomType: BloomRow}),
		writeFile(t, mk(1, encoding.TypePut), WriterOptions{BloomType: BloomRowCol}),
		writeFile(t, mk(2, encoding.TypeDeleteFamily), WriterOptions{BloomType: BloomRow}),
	}
	noes := 0
	for i := 0; i < 3000; i++ {
		row := []byte(fmt.Sprintf("row%05d", i))
		for _, q := range [][]byte{nil, []byte("q")} {
			shared := RowProbe{Row: row, Family: []byte("f"), Qualifier: q}
			for fi, r := range files {
				want, err := r.mayContainGet(&RowProbe{Row: row, Family: []byte("f"), Qualifier: q})
				require.NoError(t, err)
				got, err := r.mayContainGet(&shared)
				require.NoError(t, err)
				require.Equal(t, want, got, "row %s qualifier %q file %d", row, q, fi)
				if i%3 == fi {
					require.True(t, got, "row %s is in file %d", row, fi)
				} else if !got {
					noes++
				}
			}
		}
	}
	require.Greater(t, noes, 9000, "the blooms rule rows out")
}
