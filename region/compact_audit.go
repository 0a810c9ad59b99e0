package region

import (
	"github.com/cockroachdb/errors"
	"github.com/regionkv/regionkv/encoding"
	"github.com/regionkv/regionkv/scanner"
)

// auditScanner wraps a compaction input's scanner to check afterwards that
// the compaction read the whole file: the furthest key it was at or sought
// past must reach the file's last key (file info LASTKEY). A damaged
// trailer or index can make a file's scan end early without any error;
// publishing that compaction and deleting the input would make the loss
// permanent. It also counts the cells Next stepped over.
type auditScanner struct {
	scanner.KeyValueScanner
	cmp      *encoding.Comparer
	furthest []byte // a key; nil before the first cell
	stepped  uint64
}

func (a *auditScanner) note(k encoding.Key) {
	if a.furthest == nil || a.cmp.CompareKeys(k, encoding.Key(a.furthest)) > 0 {
		a.furthest = append(a.furthest[:0], k...)
	}
}

func (a *auditScanner) noteCurrent() {
	if kv := a.KeyValueScanner.Peek(); kv != nil {
		if a.furthest == nil || a.cmp.CompareKeyValueKey(kv, encoding.Key(a.furthest)) > 0 {
			a.furthest = kv.AppendKey(a.furthest[:0])
		}
	}
}

func (a *auditScanner) Next() error {
	a.noteCurrent()
	if a.KeyValueScanner.Peek() != nil {
		a.stepped++
	}
	err := a.KeyValueScanner.Next()
	a.noteCurrent()
	return err
}

func (a *auditScanner) Seek(k encoding.Key) error {
	a.noteCurrent()
	err := a.KeyValueScanner.Seek(k)
	a.noteSought(k)
	return err
}

func (a *auditScanner) Reseek(k encoding.Key) error {
	a.noteCurrent()
	err := a.KeyValueScanner.Reseek(k)
	a.noteSought(k)
	return err
}

// noteSought records a seek: where it landed, or, past the end, that the
// scanner was sent beyond k (everything before k was the scan's to skip).
func (a *auditScanner) noteSought(k encoding.Key) {
	if a.KeyValueScanner.Peek() == nil {
		a.note(k)
	}
	a.noteCurrent()
}

// check returns an error marked ErrCorruption if the scan of f stopped
// before f's last key.
func (a *auditScanner) check(f *StoreFile) error {
	last := f.Reader.LastKey()
	if len(last) == 0 {
		return nil // an empty file
	}
	if a.furthest == nil || a.cmp.CompareKeys(encoding.Key(a.furthest), last) < 0 {
		at := "before its first cell"
		if a.furthest != nil {
			at = "at " + encoding.Key(a.furthest).String()
		}
		return errors.Mark(errors.Newf("region: compaction input %s: its scan ended %s, before its last key %s; "+
			"the file's trailer or index is damaged; not publishing the compaction, keeping the input",
			f.Path, at, last), ErrCorruption)
	}
	return nil
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
