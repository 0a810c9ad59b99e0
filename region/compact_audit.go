package region

import (
	"github.com/cockroachdb/errors"
	"github.com/regionkv/regionkv/encoding"
	"github.com/regionkv/regionkv/scanner"
)

// auditScanner wraps a compaction input's scanner to check afterwards that
// the compaction read the whole file: it must have been at the file's last
// key (file info LASTKEY), or have been sent past it by a seek. A damaged
// trailer or index can make a file's scan end early without any error;
// publishing that compaction and deleting the input would make the loss
// permanent. It also counts the cells Next stepped over.
//
// Cells come in key order, so comparing each with the last key is enough:
// nothing is copied per cell.
//
// A reference file's scan ends at its half's end: the parent's last key for
// a top half, else the split row, where the bounded file scanner stops
// (AtUpperBound).
type auditScanner struct {
	scanner.KeyValueScanner
	cmp     *encoding.Comparer
	last    encoding.Key // the file's LASTKEY; empty for an empty file
	reached bool
	stepped uint64
	bounded *scanner.StoreFileScanner // a reference's scanner, else nil
}

func newAuditScanner(s scanner.KeyValueScanner, cmp *encoding.Comparer, f *StoreFile) *auditScanner {
	a := &auditScanner{KeyValueScanner: s, cmp: cmp, last: f.Reader.LastKey()}
	if fs, ok := s.(*scanner.StoreFileScanner); ok && f.ref != nil {
		a.bounded = fs
		if len(a.last) > 0 && f.ref.lo != nil && cmp.CompareRows(f.ref.lo, a.last.Row()) > 0 {
			a.reached = true // the half is empty: nothing to read
		}
	}
	return a
}

func (a *auditScanner) noteCurrent() {
	if a.reached || len(a.last) == 0 {
		return
	}
	if kv := a.KeyValueScanner.Peek(); kv != nil && a.cmp.CompareKeyValueKey(kv, a.last) >= 0 {
		a.reached = true
	}
}

func (a *auditScanner) Next() error {
	a.noteCurrent() // the cell being stepped over may be the last
	if a.KeyValueScanner.Peek() != nil {
		a.stepped++
	}
	err := a.KeyValueScanner.Next()
	a.noteCurrent()
	return err
}

func (a *auditScanner) Seek(k encoding.Key) error {
	err := a.KeyValueScanner.Seek(k)
	a.noteSought(k)
	return err
}

func (a *auditScanner) Reseek(k encoding.Key) error {
	err := a.KeyValueScanner.Reseek(k)
	a.noteSought(k)
	return err
}

// noteSought records a seek: a seek past the last key that finds nothing
// means everything before it was the scan's to skip.
func (a *auditScanner) noteSought(k encoding.Key) {
	if !a.reached && len(a.last) > 0 && a.KeyValueScanner.Peek() == nil && a.cmp.CompareKeys(k, a.last) > 0 {
		a.reached = true
	}
	a.noteCurrent()
}

// check returns an error marked ErrCorruption if the scan of f stopped
// before f's last key.
func (a *auditScanner) check(f *StoreFile) error {
	if len(a.last) == 0 || a.reached || a.bounded != nil && a.bounded.AtUpperBound() {
		return nil
	}
	return errors.Mark(errors.Newf("region: compaction input %s: its scan ended before its last key %s; "+
		"the file's trailer or index is damaged; not publishing the compaction, keeping the input",
		f.Path, a.last), ErrCorruption)
}

// checkCount returns an error marked ErrCorruption if a scan that stepped
// over every cell of f (a minor compaction's) saw another number of cells
// than f's trailer claims.
func (a *auditScanner) checkCount(f *StoreFile) error {
	if want := f.Reader.EntryCount(); a.stepped != want {
		return errors.Mark(errors.Newf("region: compaction input %s: read %d cells, its trailer claims %d; "+
			"not publishing the compaction, keeping the input", f.Path, a.stepped, want), ErrCorruption)
	}
	return nil
}
