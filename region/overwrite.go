package region

import (
	"bytes"

	"github.com/regionkv/regionkv/encoding"
	"github.com/regionkv/regionkv/hfile"
)

// Overwrite-heavy stores. When a store's rows are rewritten faster than it
// grows (a small table under random overwrites), every flush writes nearly
// the whole table again, and the exploring policy, which waits for
// CompactionMin files, lets the store hold two or three copies of its live
// data in between. So each flush and compaction output keeps a small sample
// of the keys its bloom filter holds; a newer file's sample, probed against
// an older file's bloom, estimates how much of the older file the newer one
// rewrites. When a third of the store's bytes are estimated superseded (the
// store holds 1.5× its live data), the background compactor compacts the
// store whole (a major compaction), whatever the file count. Files opened
// from disk have no sample and are not counted as rewriting others until a
// compaction rewrites them.

// overwriteSampleSize is the fewest keys a file's sample keeps, given
// enough keys; it keeps fewer than twice as many.
const overwriteSampleSize = 128

// overwriteDeadShare is the share of a store's bytes estimated superseded
// at which the store is compacted whole.
const overwriteDeadShare = 1.0 / 3

// keySample is a sample, evenly spaced in key order, of the keys a file's
// bloom filter holds: rows for a ROW bloom, row and qualifier for ROWCOL.
type keySample struct {
	bloom hfile.BloomType
	keys  []sampleKey
}

type sampleKey struct{ row, qualifier []byte }

// keySampler builds a keySample from a file's cells, in order.
type keySampler struct {
	sample        keySample
	stride, count int
	lastRow       []byte
	lastQualifier []byte
	started       bool
}

func newKeySampler(bloom hfile.BloomType) *keySampler {
	if bloom != hfile.BloomRow && bloom != hfile.BloomRowCol {
		return nil
	}
	return &keySampler{sample: keySample{bloom: bloom}, stride: 1}
}

// add notes a cell written to the file.
func (k *keySampler) add(kv *encoding.KeyValue) {
	if k == nil {
		return
	}
	rowCol := k.sample.bloom == hfile.BloomRowCol
	if k.started && bytes.Equal(kv.Row, k.lastRow) && (!rowCol || bytes.Equal(kv.Qualifier, k.lastQualifier)) {
		return
	}
	k.started = true
	k.lastRow = append(k.lastRow[:0], kv.Row...)
	k.lastQualifier = append(k.lastQualifier[:0], kv.Qualifier...)
	if k.count%k.stride == 0 {
		key := sampleKey{row: append([]byte(nil), kv.Row...)}
		if rowCol {
			key.qualifier = append([]byte{}, kv.Qualifier...)
		}
		k.sample.keys = append(k.sample.keys, key)
		if len(k.sample.keys) == 2*overwriteSampleSize {
			// Keep every other key: those at multiples of the doubled stride.
			kept := k.sample.keys[:0]
			for i := 0; i < len(k.sample.keys); i += 2 {
				kept = append(kept, k.sample.keys[i])
			}
			clear(k.sample.keys[len(kept):])
			k.sample.keys = kept
			k.stride *= 2
		}
	}
	k.count++
}

// result returns the sample, or nil if there is none.
func (k *keySampler) result() *keySample {
	if k == nil || len(k.sample.keys) == 0 {
		return nil
	}
	return &k.sample
}

// bloomKeys returns the number of keys f's bloom filter holds, 0 if it has
// none of type t.
func bloomKeys(f *StoreFile, t hfile.BloomType) int64 {
	if f.Reader.BloomType() != t {
		return 0
	}
	general, _ := f.Reader.Blooms()
	if general == nil {
		return 0
	}
	return general.TotalKeyCount
}

// supersededShare estimates, of the files given (a store's, oldest first),
// the bytes newer files rewrite and the bytes of them all. A newer file n
// whose sample finds a share p of its keys in an older file o's bloom
// rewrites p × n's keys of o: of o's bytes, that share of its keys, but
// no more than the bytes of n that do it; and a version is superseded only
// once maxVersions newer ones exist.
func (s *Store) supersededShare(files []*StoreFile, maxVersions int) (superseded, total int64, _ error) {
	for i, o := range files {
		size := o.Size()
		total += size
		var dead float64
		for _, n := range files[i+1:] {
			smp := n.sample
			if smp == nil || o.ref != nil || n.ref != nil {
				continue
			}
			oKeys, nKeys := bloomKeys(o, smp.bloom), bloomKeys(n, smp.bloom)
			if oKeys == 0 || nKeys == 0 {
				continue
			}
			hits := 0
			for _, k := range smp.keys {
				var ok bool
				var err error
				if smp.bloom == hfile.BloomRowCol {
					ok, err = o.Reader.MayContainRowCol(k.row, s.family, k.qualifier)
				} else {
					ok, err = o.Reader.MayContainRow(k.row)
				}
				if err != nil {
					return 0, 0, err
				}
				if ok {
					hits++
				}
			}
			p := float64(hits) / float64(len(smp.keys))
			dead += p * min(float64(size)*float64(nKeys)/float64(oKeys), float64(n.Size())) / float64(max(maxVersions, 1))
		}
		superseded += min(size, int64(dead))
	}
	return superseded, total, nil
}

// mostlyOverwritten reports whether at least overwriteDeadShare of the
// store's bytes are estimated superseded by newer files.
func (s *Store) mostlyOverwritten() (bool, error) {
	// Referenced, so that a compaction meanwhile does not close them.
	s.mu.RLock(0)
	files := append([]*StoreFile(nil), s.files...)
	for _, f := range files {
		f.acquire()
	}
	s.mu.RUnlock(0)
	defer func() {
		for _, f := range files {
			f.release()
		}
	}()
	if len(files) < 2 {
		return false, nil
	}
	dead, total, err := s.supersededShare(files, s.options().MaxVersions)
	if err != nil {
		return false, err
	}
	return total > 0 && float64(dead) >= overwriteDeadShare*float64(total), nil
}
