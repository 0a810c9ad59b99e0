// Package filter implements the server-side filters and comparators of
// Apache HBase's org.apache.hadoop.hbase.filter package: the Filter
// interface with its return codes, HBase 2's standard filters, the
// ByteArrayComparable comparators they and CheckAndMutate compare with, and
// CompareOp, the one comparison operator of the module.
//
// The filters, by what they look at:
//
//   - rows: RowFilter, PrefixFilter, InclusiveStopFilter,
//     MultiRowRangeFilter, FuzzyRowFilter, RandomRowFilter, PageFilter;
//   - columns: FamilyFilter, QualifierFilter, ColumnPrefixFilter,
//     MultipleColumnPrefixFilter, ColumnRangeFilter, ColumnCountGetFilter,
//     ColumnPaginationFilter, FirstKeyOnlyFilter,
//     FirstKeyValueMatchingQualifiersFilter;
//   - versions: TimestampsFilter;
//   - values: ValueFilter, SingleColumnValueFilter,
//     SingleColumnValueExcludeFilter, ColumnValueFilter,
//     DependentColumnFilter;
//   - cells' contents: KeyOnlyFilter;
//   - other filters: FilterList, SkipFilter, WhileMatchFilter.
//
// Each follows its HBase class cell by cell (return codes, seek hints, row
// decisions); where one deliberately does not, its documentation says so.
//
// A filter decides what a read returns; it does not read anything itself.
// The storage engine drives it: for each row the region scanner asks
// FilterRowKey, package scanner's QueryMatcher hands FilterCell every cell
// that survives the read point, delete markers, TTL, time range, columns and
// versions, and merges the answer with its own; the store scanner follows
// the filter's seek hints and copies what TransformCell returns; at the end
// of the row the region scanner asks FilterRowCells and FilterRow, then
// calls Reset. Filter documents the order exactly. Clients build the same
// types and send them to the server; this package imports neither the
// scanners nor anything else of the storage engine, so a client can use it.
//
// On the wire a filter is HBase's Filter message, hbasepb.Filter: the
// filter's Java class name (org.apache.hadoop.hbase.filter.PrefixFilter,
// ...) and the class's own message (hbasepb.PrefixFilter, ...) serialized
// into serialized_filter; comparators likewise travel as hbasepb.Comparator.
// FilterFromPB and FilterToPB convert the messages, FilterFromProto and
// FilterToProto their bytes, and the Comparator functions do the same for
// comparators. Decoding is for untrusted input: bytes that do not decode,
// unknown classes, missing required fields and filters nested too deeply
// give an error marked ErrBadFilter, never a panic.
//
// Comparators are immutable and safe for concurrent use. A filter keeps
// per-scan state: one instance serves one read, and is not safe for
// concurrent use.
package filter
