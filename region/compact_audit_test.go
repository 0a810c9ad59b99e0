package region

import (
	"fmt"
	"testing"

	"github.com/cockroachdb/errors"
	"github.com/regionkv/regionkv/encoding"
	"github.com/regionkv/regionkv/scanner"
	"github.com/stretchr/testify/require"
)

// sliceScanner yields cells from a slice, as a file scan that may end early.
type sliceScanner struct {
	scanner.KeyValueScanner // unused methods panic
	cmp                     *encoding.Comparer
	cells                   []*encoding.KeyValue
	i                       int
}

func (s *sliceScanner) Peek() *encoding.KeyValue {
	if s.i < len(s.cells) {
		return s.cells[s.i]
	}
	return nil
}
func (s *sliceScanner) Next() error { s.i++; return nil }
func (s *sliceScanner) Seek(k encoding.Key) error {
	s.i = 0
	return s.Reseek(k)
}
func (s *sliceScanner) Reseek(k encoding.Key) error {
	for s.i < len(s.cells) && s.cmp.CompareKeyValueKey(s.cells[s.i], k) < 0 {
		s.i++
	}
	return nil
}

// TestCompactionAudit: a compaction input whose scan ends before the
// file's last key, or yields fewer cells than its trailer counts, is
// refused as corruption; a full scan, or one that seeks past the end, is
// not.
func TestCompactionAudit(t *testing.T) {
	r := openTest(t, t.TempDir(), func(o *Options) { o.DisableAutoCompaction = true })
	defer r.Close()
	for i := 0; i < 10; i++ {
		require.NoError(t, r.Put(NewPut(b(fmt.Sprintf("r%d", i))).Add(fam, b("q"), b("v"))))
	}
	require.NoError(t, r.Flush())
	f := r.Store("f").Files()[0]
	var cells []*encoding.KeyValue
	for i := 0; i < 10; i++ {
		res, err := r.Get(NewGet(b(fmt.Sprintf("r%d", i))))
		require.NoError(t, err)
		cells = append(cells, res.Cells[0])
	}
	audit := func(n int) *auditScanner {
		return newAuditScanner(&sliceScanner{cmp: r.cmp, cells: cells[:n]}, r.cmp, f)
	}
	drain := func(a *auditScanner) {
		for a.Peek() != nil {
			require.NoError(t, a.Next())
		}
	}
	full := audit(10)
	drain(full)
	require.NoError(t, full.check(f))
	require.NoError(t, full.checkCount(f))

	short := audit(7) // the last block's cells never came
	drain(short)
	err := short.check(f)
	require.True(t, errors.Is(err, ErrCorruption), "%v", err)
	require.Contains(t, err.Error(), f.Path)
	err = short.checkCount(f)
	require.True(t, errors.Is(err, ErrCorruption), "%v", err)
	require.Contains(t, err.Error(), "read 7 cells, its trailer claims 10")

	none := audit(0)
	drain(none)
	require.True(t, errors.Is(none.check(f), ErrCorruption))

	// A major compaction's matcher may seek past the last cells (surplus
	// versions, say): that reached the end.
	sought := audit(10)
	require.NoError(t, sought.Next())
	require.NoError(t, sought.Reseek(encoding.FirstOnRow(nil, b("r9\x00"))))
	require.Nil(t, sought.Peek())
	require.NoError(t, sought.check(f))
}
