package shell

import (
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/regionkv/regionkv/encoding"
)

// formatter prints results as HBase's shell formatter (Shell::Formatter):
// on a terminal two-column rows take a quarter and the rest of its width,
// long cells wrapping inside their column; elsewhere (a pipe, a file)
// columns are not padded, so a row is " key value".
type formatter struct {
	out      io.Writer
	width    func() int // the terminal's width, 0 if not a terminal
	maxWidth int
	rows     int
}

// header starts a result: it prints args as a row without the inset and
// resets the row count.
func (f *formatter) header(args ...string) {
	f.maxWidth = 0
	if f.width != nil {
		f.maxWidth = f.width()
	}
	if len(args) > 0 {
		f.row(false, args...)
	}
	f.rows = 0
}

// row prints one row of one or two columns; inset offsets two-column rows
// by a space, as HBase's rows are below their header.
func (f *formatter) row(inset bool, args ...string) {
	switch len(args) {
	case 0:
		return
	case 1:
		for _, l := range splitWidth(f.maxWidth, args[0]) {
			fmt.Fprintln(f.out, pad(f.maxWidth, l))
		}
	default:
		w1, w2 := 0, 0
		if f.maxWidth > 0 {
			w1 = f.maxWidth / 4
			w2 = f.maxWidth - w1 - 2
		}
		s1, s2 := splitWidth(w1, args[0]), splitWidth(w2, args[1])
		n := max(len(s1), len(s2))
		for i := 0; i < n; i++ {
			var sb strings.Builder
			if inset {
				sb.WriteByte(' ')
			}
			sb.WriteString(pad(w1, at(s1, i)))
			if !inset {
				sb.WriteByte(' ')
			}
			sb.WriteByte(' ')
			sb.WriteString(pad(w2, at(s2, i)))
			fmt.Fprintln(f.out, strings.TrimRight(sb.String(), " "))
		}
	}
	f.rows++
}

// footer prints "N row(s)" (the rows printed since the header if n < 0).
func (f *formatter) footer(n int) {
	if n < 0 {
		n = f.rows
	}
	fmt.Fprintf(f.out, "%d row(s)\n", n)
}

func at(s []string, i int) string {
	if i < len(s) {
		return s[i]
	}
	return ""
}

func splitWidth(w int, s string) []string {
	if w <= 0 || len(s) <= w {
		return []string{s}
	}
	var out []string
	for len(s) > w {
		out = append(out, s[:w])
		s = s[w:]
	}
	if s != "" {
		out = append(out, s)
	}
	return out
}

func pad(w int, s string) string {
	if len(s) >= w {
		return s
	}
	return s + strings.Repeat(" ", w-len(s))
}

// binary is HBase's Bytes.toStringBinary.
func binary(b []byte) string { return encoding.FormatBytes(b) }

// toBytesBinary is HBase's Bytes.toBytesBinary: \xNN sequences in s stand
// for bytes (split points are written so).
func toBytesBinary(s []byte) []byte {
	out := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) && s[i+1] == 'x' && isHex(s[i+2]) && isHex(s[i+3]) {
			out = append(out, byte(hexVal(s[i+2])<<4|hexVal(s[i+3])))
			i += 3
			continue
		}
		out = append(out, s[i])
	}
	return out
}

// formatTimestamp prints a cell's timestamp as HBase 2.4+'s shell does:
// the local time as Java's LocalDateTime.toString (ISO-8601: seconds and
// milliseconds only when not zero), or milliseconds since the epoch when
// hbase.shell.timestamp.format.epoch is set.
func formatTimestamp(ts int64, epoch bool, loc *time.Location) string {
	if epoch {
		return strconv.FormatInt(ts, 10)
	}
	t := time.UnixMilli(ts).In(loc)
	var sb strings.Builder
	y := t.Year()
	switch {
	case y > 9999:
		fmt.Fprintf(&sb, "+%d", y)
	case y < 0:
		fmt.Fprintf(&sb, "-%04d", -y)
	default:
		fmt.Fprintf(&sb, "%04d", y)
	}
	fmt.Fprintf(&sb, "-%02d-%02dT%02d:%02d", int(t.Month()), t.Day(), t.Hour(), t.Minute())
	ms := t.Nanosecond() / 1e6
	if t.Second() != 0 || ms != 0 {
		fmt.Fprintf(&sb, ":%02d", t.Second())
		if ms != 0 {
			fmt.Fprintf(&sb, ".%03d", ms)
		}
	}
	return sb.String()
}

// prettyValue is HBase's PrettyPrinter.format for the attributes it knows:
// TTL in seconds reads as "FOREVER" or "N SECONDS (1 DAY ...)", BLOCKSIZE
// as "N B (NKB)".
func prettyValue(key, value string) string {
	switch key {
	case "TTL":
		return prettyTTL(value)
	case "BLOCKSIZE":
		n, err := strconv.ParseInt(value, 10, 64)
		if err != nil || n < 0 {
			return value
		}
		return prettyBytes(n)
	}
	return value
}

func prettyTTL(value string) string {
	n, err := strconv.ParseInt(value, 10, 64)
	if err != nil {
		return value
	}
	if n == 2147483647 {
		return "FOREVER"
	}
	plural := func(k int64, unit string) string {
		if k == 1 {
			return fmt.Sprintf("%d %s", k, unit)
		}
		return fmt.Sprintf("%d %sS", k, unit)
	}
	if n < 60 {
		return plural(n, "SECOND")
	}
	var parts []string
	rest := n
	for _, u := range []struct {
		name string
		secs int64
	}{{"DAY", 86400}, {"HOUR", 3600}, {"MINUTE", 60}, {"SECOND", 1}} {
		if k := rest / u.secs; k > 0 {
			parts = append(parts, plural(k, u.name))
			rest %= u.secs
		}
	}
	return fmt.Sprintf("%d SECONDS (%s)", n, strings.Join(parts, " "))
}

// prettyBytes is PrettyPrinter's byte format: "N B", and past a KiB
// "N B (1GB 2MB 3KB 4B)".
func prettyBytes(n int64) string {
	if n < 1024 {
		return fmt.Sprintf("%d B", n)
	}
	var parts []string
	rest := n
	for _, u := range []struct {
		name string
		size int64
	}{{"TB", 1 << 40}, {"GB", 1 << 30}, {"MB", 1 << 20}, {"KB", 1 << 10}, {"B", 1}} {
		if k := rest / u.size; k > 0 {
			parts = append(parts, fmt.Sprintf("%d%s", k, u.name))
			rest %= u.size
		}
	}
	return fmt.Sprintf("%d B (%s)", n, strings.Join(parts, " "))
}

// HBase's reserved column family keys (ColumnFamilyDescriptorBuilder's
// RESERVED_KEYWORDS): printed as KEY => 'value'; other keys go under
// METADATA.
var familyReserved = map[string]bool{
	"BLOOMFILTER": true, "REPLICATION_SCOPE": true, "VERSIONS": true, "MIN_VERSIONS": true, "COMPRESSION": true,
	"TTL": true, "BLOCKSIZE": true, "IN_MEMORY": true, "BLOCKCACHE": true, "KEEP_DELETED_CELLS": true,
	"DATA_BLOCK_ENCODING": true, "ENCRYPTION": true, "ENCRYPTION_KEY": true, "IS_MOB": true, "MOB_THRESHOLD": true,
	"MOB_COMPACT_PARTITION_POLICY": true,
	// Set through their own setters in HBase, so also printed by name.
	"CACHE_DATA_ON_WRITE": true, "CACHE_INDEX_ON_WRITE": true, "CACHE_BLOOMS_ON_WRITE": true,
	"EVICT_BLOCKS_ON_CLOSE": true, "PREFETCH_BLOCKS_ON_OPEN": true, "COMPRESS_TAGS": true,
	"COMPRESSION_COMPACT": true, "COMPRESSION_COMPACT_MAJOR": true, "COMPRESSION_COMPACT_MINOR": true,
	"NEW_VERSION_BEHAVIOR": true, "DFS_REPLICATION": true, "STORAGE_POLICY": true, "IN_MEMORY_COMPACTION": true,
	"INDEX_BLOCK_ENCODING": true,
}

// javaHashOrder orders string keys as a java.util.HashMap of HBase's Bytes
// keys iterates them (HBase prints a family's attributes in that order):
// by bucket of the spread hash, then by insertion order within a bucket.
// keys are in insertion order.
func javaHashOrder(keys []string) []string {
	return hashOrder(keys, func(k string) int32 {
		h := int32(1) // Bytes.hashCode: WritableComparator.hashBytes
		for j := 0; j < len(k); j++ {
			h = 31*h + int32(int8(k[j]))
		}
		return h
	})
}

func hashOrder(keys []string, hash func(string) int32) []string {
	capacity := 16
	for float64(len(keys)) > float64(capacity)*0.75 {
		capacity *= 2
	}
	type kb struct {
		key    string
		bucket int
	}
	ks := make([]kb, len(keys))
	for i, k := range keys {
		h := hash(k)
		spread := uint32(h) ^ uint32(h)>>16
		ks[i] = kb{k, int(spread & uint32(capacity-1))}
	}
	sort.SliceStable(ks, func(i, j int) bool { return ks[i].bucket < ks[j].bucket })
	out := make([]string, len(ks))
	for i, k := range ks {
		out[i] = k.key
	}
	return out
}

// familyDefaultOrder is the order in which HBase's builder puts its
// default values into a new family's map: its DEFAULT_VALUES map (a
// HashMap of Strings, filled in this order) iterated.
var familyDefaultOrder = javaStringHashOrder([]string{"BLOOMFILTER", "REPLICATION_SCOPE", "VERSIONS", "MIN_VERSIONS",
	"COMPRESSION", "TTL", "BLOCKSIZE", "IN_MEMORY", "BLOCKCACHE", "KEEP_DELETED_CELLS", "DATA_BLOCK_ENCODING"})

// javaStringHashOrder is javaHashOrder for a HashMap of Java Strings
// (String.hashCode), for ASCII keys.
func javaStringHashOrder(keys []string) []string {
	return hashOrder(keys, func(k string) int32 {
		h := int32(0)
		for j := 0; j < len(k); j++ {
			h = 31*h + int32(k[j])
		}
		return h
	})
}

// describeFamily prints a family as HBase's ColumnFamilyDescriptor
// toString: {NAME => 'f', KEY => 'value', ..., METADATA => {...},
// CONFIGURATION => {...}}, keys in HBase's order.
func describeFamily(name string, attrs, conf map[string]string) string {
	// Insertion order as HBase's ProtobufUtil.toColumnFamilyDescriptor
	// builds the map: the builder's defaults, then the schema's attributes
	// (which arrive sorted, as our client and HBase's send them).
	var order []string
	seen := map[string]bool{}
	for _, k := range familyDefaultOrder {
		if _, ok := attrs[k]; ok {
			order = append(order, k)
			seen[k] = true
		}
	}
	var rest []string
	for k := range attrs {
		if !seen[k] {
			rest = append(rest, k)
		}
	}
	sort.Strings(rest)
	order = javaHashOrder(append(order, rest...))
	var sb strings.Builder
	fmt.Fprintf(&sb, "{NAME => '%s'", name)
	var meta []string
	for _, k := range order {
		if !familyReserved[k] {
			meta = append(meta, k)
			continue
		}
		fmt.Fprintf(&sb, ", %s => '%s'", k, prettyValue(k, attrs[k]))
	}
	if len(meta) > 0 {
		sb.WriteString(", METADATA => {")
		for i, k := range meta {
			if i > 0 {
				sb.WriteString(", ")
			}
			fmt.Fprintf(&sb, "'%s' => '%s'", k, prettyValue(k, attrs[k]))
		}
		sb.WriteString("}")
	}
	if len(conf) > 0 {
		keys := javaStringHashOrder(sortedKeys(conf))
		sb.WriteString(", CONFIGURATION => {")
		for i, k := range keys {
			if i > 0 {
				sb.WriteString(", ")
			}
			fmt.Fprintf(&sb, "'%s' => '%s'", k, prettyValue(k, conf[k]))
		}
		sb.WriteString("}")
	}
	sb.WriteString("}")
	return sb.String()
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// HBase's reserved table keys (TableDescriptorBuilder's RESERVED_KEYWORDS).
var tableReserved = map[string]bool{
	"MAX_FILESIZE": true, "READONLY": true, "COMPACTION_ENABLED": true, "SPLIT_ENABLED": true, "MERGE_ENABLED": true,
	"MEMSTORE_FLUSHSIZE": true, "DURABILITY": true, "REGION_REPLICATION": true, "REGION_MEMSTORE_REPLICATION": true,
	"NORMALIZATION_ENABLED": true, "NORMALIZER_TARGET_REGION_COUNT": true, "NORMALIZER_TARGET_REGION_SIZE_MB": true,
	"NORMALIZER_TARGET_REGION_SIZE": true, "PRIORITY": true, "FLUSH_POLICY": true, "SPLIT_POLICY": true,
	"IS_META": true, "OWNER": true, "SERIALIZED_COMPARATOR_CLASS": true,
}

// tableAttributes prints a table's attributes as HBase's
// TableDescriptor.toStringTableAttributes: "" when it has none, else
// ", {TABLE_ATTRIBUTES => {KEY => 'v', METADATA => {'k' => 'v'}}}".
func tableAttributes(attrs map[string]string) string {
	var reserved, user []string
	for _, k := range sortedKeys(attrs) {
		if k == "IS_META" && attrs[k] != "true" {
			continue
		}
		if tableReserved[k] || strings.HasPrefix(k, "coprocessor$") {
			reserved = append(reserved, k)
		} else {
			user = append(user, k)
		}
	}
	if len(reserved)+len(user) == 0 {
		return ""
	}
	var sb strings.Builder
	sb.WriteString(", {TABLE_ATTRIBUTES => {")
	for i, k := range reserved {
		if i > 0 {
			sb.WriteString(", ")
		}
		fmt.Fprintf(&sb, "%s => '%s'", k, attrs[k])
	}
	if len(user) > 0 {
		if len(reserved) > 0 {
			sb.WriteString(", ")
		}
		sb.WriteString("METADATA => {")
		for i, k := range user {
			if i > 0 {
				sb.WriteString(", ")
			}
			fmt.Fprintf(&sb, "'%s' => '%s'", k, attrs[k])
		}
		sb.WriteString("}")
	}
	sb.WriteString("}}")
	return sb.String()
}
