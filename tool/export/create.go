package export

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/cockroachdb/errors"
	"github.com/regionkv/regionkv/hbasepb"
)

const (
	createScriptName = "create.rb"
	splitsFileName   = "splits.txt"
)

// shellFamilyKeys are the column family attributes `hbase shell` takes by
// name in a family's hash (its admin.rb); the others go in METADATA, which
// sets the same descriptor values.
var shellFamilyKeys = map[string]bool{
	"VERSIONS": true, "MIN_VERSIONS": true, "TTL": true, "BLOCKSIZE": true, "BLOCKCACHE": true,
	"BLOOMFILTER": true, "COMPRESSION": true, "COMPRESSION_COMPACT": true, "DATA_BLOCK_ENCODING": true,
	"IN_MEMORY": true, "IN_MEMORY_COMPACTION": true, "KEEP_DELETED_CELLS": true, "REPLICATION_SCOPE": true,
	"CACHE_DATA_ON_WRITE": true, "CACHE_INDEX_ON_WRITE": true, "CACHE_BLOOMS_ON_WRITE": true,
	"EVICT_BLOCKS_ON_CLOSE": true, "PREFETCH_BLOCKS_ON_OPEN": true, "COMPRESS_TAGS": true,
	"IS_MOB": true, "MOB_THRESHOLD": true, "MOB_COMPACT_PARTITION_POLICY": true,
	"NEW_VERSION_BEHAVIOR": true, "STORAGE_POLICY": true, "DFS_REPLICATION": true,
}

// writeDescriptorFiles writes create.rb, an `hbase shell` script that
// creates the table with the snapshot's descriptor and region boundaries,
// and splits.txt, the split keys one a line.
func writeDescriptorFiles(out string, schema *hbasepb.TableSchema, res *Result) error {
	var b strings.Builder
	ns, q := string(schema.GetTableName().GetNamespace()), string(schema.GetTableName().GetQualifier())
	name := q
	if ns != "" && ns != "default" {
		name = ns + ":" + q
	}
	fmt.Fprintf(&b, "# Written by regionsrv export at %s: table %s, from snapshot %s,\n",
		time.Now().UTC().Format(time.RFC3339), name, res.Snapshot)
	fmt.Fprintf(&b, "# %d regions, %d HFiles. On the HBase cluster:\n", len(res.Regions), len(res.Files))
	fmt.Fprintf(&b, "#   hbase shell -n create.rb\n#   hbase completebulkload <this directory> %s\n", name)
	if ns != "" && ns != "default" {
		fmt.Fprintf(&b, "# The namespace first; leave this line out if the cluster has it.\ncreate_namespace %s\n", rubyString([]byte(ns)))
	}
	fmt.Fprintf(&b, "create %s", rubyString([]byte(name)))
	for _, cf := range schema.GetColumnFamilies() {
		fmt.Fprintf(&b, ",\n  {NAME => %s", rubyString(cf.GetName()))
		meta := map[string]string{}
		for _, a := range cf.GetAttributes() {
			k, v := string(a.GetFirst()), string(a.GetSecond())
			if shellFamilyKeys[k] {
				fmt.Fprintf(&b, ", %s => %s", k, rubyString([]byte(v)))
			} else {
				meta[k] = v
			}
		}
		writeHash(&b, "METADATA", meta)
		conf := map[string]string{}
		for _, c := range cf.GetConfiguration() {
			conf[c.GetName()] = c.GetValue()
		}
		writeHash(&b, "CONFIGURATION", conf)
		b.WriteString("}")
	}
	tableMeta := map[string]string{}
	for _, a := range schema.GetAttributes() {
		tableMeta[string(a.GetFirst())] = string(a.GetSecond())
	}
	tableConf := map[string]string{}
	for _, c := range schema.GetConfiguration() {
		tableConf[c.GetName()] = c.GetValue()
	}
	if len(tableMeta) > 0 || len(tableConf) > 0 {
		b.WriteString(",\n  {")
		var sub strings.Builder
		writeHash(&sub, "METADATA", tableMeta)
		writeHash(&sub, "CONFIGURATION", tableConf)
		b.WriteString(strings.TrimPrefix(sub.String(), ", "))
		b.WriteString("}")
	}
	splits := res.SplitKeys()
	if len(splits) > 0 {
		b.WriteString(",\n  SPLITS => [")
		for i, k := range splits {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(splitLiteral(k))
		}
		b.WriteString("]")
	}
	b.WriteString("\nexit\n")
	if err := writeFile(filepath.Join(out, createScriptName), b.String()); err != nil {
		return err
	}
	var s strings.Builder
	for _, k := range splits {
		s.WriteString(binaryString(k))
		s.WriteByte('\n')
	}
	return writeFile(filepath.Join(out, splitsFileName), s.String())
}

func writeHash(b *strings.Builder, key string, m map[string]string) {
	if len(m) == 0 {
		return
	}
	fmt.Fprintf(b, ", %s => {", key)
	for i, k := range sortedKeys(m) {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(b, "%s => %s", rubyString([]byte(k)), rubyString([]byte(m[k])))
	}
	b.WriteString("}")
}

// binaryString is HBase's Bytes.toStringBinary, less the characters that
// would end or escape a single-quoted Ruby string (' and \ are written
// \xNN too), so that Bytes.toBytesBinary, which the shell applies to split
// keys, gives the bytes back.
func binaryString(k []byte) string {
	var b strings.Builder
	for _, c := range k {
		if c >= ' ' && c <= '~' && c != '\\' && c != '\'' {
			b.WriteByte(c)
		} else {
			fmt.Fprintf(&b, "\\x%02X", c)
		}
	}
	return b.String()
}

// splitLiteral is a split key as `hbase shell` takes it: a single-quoted
// Ruby string in binaryString's form (the shell applies
// Bytes.toBytesBinary to split keys).
func splitLiteral(k []byte) string { return "'" + binaryString(k) + "'" }

// rubyString is s as a single-quoted Ruby string, for names and attribute
// values, which the shell takes as they are.
func rubyString(s []byte) string {
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(string(s)) + "'"
}

func writeFile(path, content string) error {
	f, err := os.Create(path)
	if err != nil {
		return errors.Wrap(err, "export")
	}
	if _, err := f.WriteString(content); err != nil {
		f.Close()
		return errors.Wrapf(err, "export: writing %s", path)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return errors.Wrapf(err, "export: writing %s", path)
	}
	return errors.Wrap(f.Close(), "export")
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
