package encoding

import (
	"bytes"
	"fmt"
)

// Comparer orders cells. It is HBase's CellComparator: rows ascending (by the
// comparer's row order), a "last on row" key after every real key of its row,
// then family and qualifier ascending, timestamp descending, type descending
// and, in full comparisons only, sequence id descending.
//
// Comparers are immutable and safe for concurrent use.
type Comparer struct {
	// Name is the Java class name HBase writes in the HFile trailer.
	Name string
	kind comparerKind
}

type comparerKind uint8

const (
	kindInnerStore comparerKind = iota // families compared by length only
	kindDefault                        // families compared bytewise
	kindMeta                           // hbase:meta row order
)

// The comparers HBase knows by name.
var (
	// InnerStoreComparer is used inside one store, where all cells share a
	// family: it compares family lengths only (fake keys have an empty family).
	InnerStoreComparer = &Comparer{Name: "org.apache.hadoop.hbase.InnerStoreCellComparator", kind: kindInnerStore}
	// DefaultComparer compares families bytewise; use it across families.
	DefaultComparer = &Comparer{Name: "org.apache.hadoop.hbase.CellComparatorImpl", kind: kindDefault}
	// MetaComparer orders hbase:meta rows: table, then start key up to the
	// last comma, then the rest (region id and encoded name).
	MetaComparer = &Comparer{Name: "org.apache.hadoop.hbase.MetaCellComparator", kind: kindMeta}
)

// ComparerByName maps a trailer's comparator class name, including HBase's
// legacy names, to a Comparer.
func ComparerByName(name string) (*Comparer, error) {
	switch name {
	case "", InnerStoreComparer.Name, "org.apache.hadoop.hbase.KeyValue$KVComparator",
		"org.apache.hadoop.hbase.CellComparator", "org.apache.hadoop.hbase.CellComparatorImpl":
		return InnerStoreComparer, nil
	case MetaComparer.Name, "org.apache.hadoop.hbase.KeyValue$MetaComparator",
		"org.apache.hadoop.hbase.CellComparator$MetaCellComparator",
		"org.apache.hadoop.hbase.CellComparatorImpl$MetaCellComparator":
		return MetaComparer, nil
	}
	return nil, fmt.Errorf("unsupported comparator class %q", name)
}

// IsMeta reports whether c is the hbase:meta comparator.
func (c *Comparer) IsMeta() bool { return c.kind == kindMeta }

// FamiliesByLength reports whether c orders families by their lengths only,
// as InnerStoreCellComparator does: every cell of a store has the store's
// family, and only seek keys have an empty one.
func (c *Comparer) FamiliesByLength() bool { return c.kind == kindInnerStore }

// CompareRows compares two rows.
func (c *Comparer) CompareRows(a, b []byte) int {
	if c.kind == kindMeta {
		return compareMetaRows(a, b)
	}
	return bytes.Compare(a, b)
}

// CompareKeys compares two serialized keys, ignoring sequence ids (as HBase's
// compareKeyIgnoresMvcc does for HFile seeks).
func (c *Comparer) CompareKeys(a, b Key) int {
	arl, brl := a.RowLen(), b.RowLen()
	var r int
	if c.kind == kindMeta {
		r = compareMetaRows(a[2:2+arl], b[2:2+brl])
	} else {
		r = bytes.Compare(a[2:2+arl], b[2:2+brl])
	}
	if r != 0 {
		return r
	}
	afo, bfo := 2+arl, 2+brl
	afl, bfl := int(a[afo]), int(b[bfo])
	aql := len(a) - afo - 1 - afl - TimestampTypeSize
	bql := len(b) - bfo - 1 - bfl - TimestampTypeSize
	return c.compareAfterRow(
		a[afo+1:afo+1+afl], a[afo+1+afl:afo+1+afl+aql], a.Timestamp(), a.Type(), aql,
		b[bfo+1:bfo+1+bfl], b[bfo+1+bfl:bfo+1+bfl+bql], b.Timestamp(), b.Type(), bql)
}

// CompareKeyValues compares two cells including their sequence ids.
func (c *Comparer) CompareKeyValues(a, b *KeyValue) int {
	if r := c.CompareRows(a.Row, b.Row); r != 0 {
		return r
	}
	return c.CompareKeyValuesSameRow(a, b)
}

// CompareKeyValuesSameRow is CompareKeyValues for two cells whose rows the
// caller knows are equal: it compares the rest of their keys and their
// sequence ids only.
func (c *Comparer) CompareKeyValuesSameRow(a, b *KeyValue) int {
	if r := c.compareAfterRow(a.Family, a.Qualifier, a.Timestamp, a.Type, len(a.Qualifier),
		b.Family, b.Qualifier, b.Timestamp, b.Type, len(b.Qualifier)); r != 0 {
		return r
	}
	switch {
	case a.SeqNum > b.SeqNum:
		return -1
	case a.SeqNum < b.SeqNum:
		return 1
	}
	return 0
}

// CompareKeyValueKey compares a cell with a serialized key, ignoring sequence ids.
func (c *Comparer) CompareKeyValueKey(a *KeyValue, b Key) int {
	if r := c.CompareRows(a.Row, b.Row()); r != 0 {
		return r
	}
	bq := b.Qualifier()
	return c.compareAfterRow(a.Family, a.Qualifier, a.Timestamp, a.Type, len(a.Qualifier),
		b.Family(), bq, b.Timestamp(), b.Type(), len(bq))
}

// CompareColumns compares the families and qualifiers of two cells of the
// same row as CompareKeyValues orders them, ignoring timestamps, types and
// sequence ids; a "last on row" key (empty family and qualifier, type
// Minimum) sorts after every column. A memstore groups the versions of a
// column by it.
func (c *Comparer) CompareColumns(a, b *KeyValue) int {
	return c.compareColumns(a.Family, a.Qualifier, a.Type, len(a.Qualifier), b.Family, b.Qualifier, b.Type, len(b.Qualifier))
}

// CompareVersions compares two cells of one column (the same row, family
// and qualifier) as CompareKeyValues orders them, without reading those:
// the newer timestamp first, then the larger type, then the larger sequence
// id. The order is the same under every comparer.
func CompareVersions(a, b *KeyValue) int {
	switch {
	case a.Timestamp != b.Timestamp:
		if a.Timestamp > b.Timestamp {
			return -1
		}
		return 1
	case a.Type != b.Type:
		if a.Type > b.Type {
			return -1
		}
		return 1
	case a.SeqNum != b.SeqNum:
		if a.SeqNum > b.SeqNum {
			return -1
		}
		return 1
	}
	return 0
}

func (c *Comparer) compareColumns(af, aq []byte, at Type, aql int, bf, bq []byte, bt Type, bql int) int {
	// A key with empty family and qualifier and type Minimum is "last on row".
	if len(af)+aql == 0 && at == TypeMinimum {
		if len(bf)+bql == 0 && bt == TypeMinimum {
			return 0
		}
		return 1
	}
	if len(bf)+bql == 0 && bt == TypeMinimum {
		return -1
	}
	if c.kind == kindInnerStore {
		if len(af) != len(bf) {
			if len(af) < len(bf) {
				return -1
			}
			return 1
		}
	} else if r := bytes.Compare(af, bf); r != 0 {
		return r
	}
	return bytes.Compare(aq, bq)
}

func (c *Comparer) compareAfterRow(af, aq []byte, ats int64, at Type, aql int, bf, bq []byte, bts int64, bt Type, bql int) int {
	if r := c.compareColumns(af, aq, at, aql, bf, bq, bt, bql); r != 0 || len(af)+aql == 0 && at == TypeMinimum {
		return r // two "last on row" keys are equal whatever their timestamps
	}
	switch {
	case ats > bts:
		return -1
	case ats < bts:
		return 1
	}
	switch {
	case at > bt:
		return -1
	case at < bt:
		return 1
	}
	return 0
}

// compareMetaRows orders hbase:meta rows "table,startkey,regionid.encoded.":
// first the table name up to the first comma, then the start key up to the
// last comma, then what follows. Start keys may themselves contain commas,
// which is why the middle part runs to the last comma, and why plain byte
// order would misplace split keys below ','.
func compareMetaRows(a, b []byte) int {
	ad, bd := bytes.IndexByte(a, ','), bytes.IndexByte(b, ',')
	ap, bp := a, b
	if ad >= 0 {
		ap = a[:ad]
	}
	if bd >= 0 {
		bp = b[:bd]
	}
	if r := bytes.Compare(ap, bp); r != 0 {
		return r
	}
	switch {
	case ad < 0 && bd >= 0:
		return -1
	case bd < 0 && ad >= 0:
		return 1
	case ad < 0 && bd < 0:
		return 0
	}
	a, b = a[ad+1:], b[bd+1:]
	af, bf := bytes.LastIndexByte(a, ','), bytes.LastIndexByte(b, ',')
	ap, bp = a, b
	if af >= 0 {
		ap = a[:af]
	}
	if bf >= 0 {
		bp = b[:bf]
	}
	if r := bytes.Compare(ap, bp); r != 0 {
		return r
	}
	switch {
	case af < 0 && bf >= 0:
		return -1
	case bf < 0 && af >= 0:
		return 1
	case af < 0 && bf < 0:
		return 0
	}
	return bytes.Compare(a[af+1:], b[bf+1:])
}
