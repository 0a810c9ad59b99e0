package shell

// command is one shell command: its name, its group in help, its help
// text and what it does. run returns the command's result as the shell
// prints it after "=> " ("" for none).
type command struct {
	name, group string
	help        string
	// untimed commands print no "Took" line (help, exit).
	untimed bool
	run     func(s *Shell, args []Value) (string, error)
}

type group struct{ name, doc string }

var groups = []group{
	{"general", "Commands about the shell and the cluster."},
	{"ddl", "Commands that create, change and remove tables."},
	{"namespace", "Commands about namespaces."},
	{"dml", "Commands that read and write data."},
	{"tools", "Commands for administrators: flushes, compactions, splits."},
	{"snapshots", "Commands about snapshots."},
}

var commands []command
var commandsByName map[string]*command

func init() {
	commands = []command{
		{name: "status", group: "general", run: cmdStatus, help: `Show the cluster's status: 'summary' (the default), 'simple' or 'detailed'
(simple with every region's load). Examples:

  hbase> status
  hbase> status 'simple'
  hbase> status 'summary'
  hbase> status 'detailed'
`},
		{name: "version", group: "general", run: cmdVersion, help: `Show the version of this shell (RegionKV's build).

  hbase> version
`},
		{name: "help", group: "general", untimed: true, run: cmdHelp, help: `Show the list of commands, the help of one command or of a group of commands.

  hbase> help
  hbase> help 'scan'
  hbase> help 'dml'
`},
		{name: "exit", group: "general", untimed: true, run: cmdExit, help: `Leave the shell (Ctrl-D does the same).
`},
		{name: "quit", group: "general", untimed: true, run: cmdExit, help: `Leave the shell, as exit.
`},

		{name: "create", group: "ddl", run: cmdCreate, help: `Create a table: a table name, then column families as names or as hashes of
family attributes (NAME plus VERSIONS, TTL, BLOOMFILTER, COMPRESSION,
DATA_BLOCK_ENCODING, BLOCKSIZE, IN_MEMORY, BLOCKCACHE, MIN_VERSIONS, METADATA,
CONFIGURATION, ...), and optionally table options: SPLITS (split points, \xNN
escapes allowed), SPLITS_FILE (one split point a line), NUMREGIONS with SPLITALGO
(HexStringSplit, DecimalStringSplit, UniformSplit), MAX_FILESIZE, READONLY,
MEMSTORE_FLUSHSIZE, DURABILITY, REGION_REPLICATION, OWNER, METADATA. Attributes
left out take the server's defaults. Examples:

  hbase> create 't1', 'f1', 'f2', 'f3'
  hbase> create 'ns1:t1', {NAME => 'f1', VERSIONS => 5}
  hbase> create 't1', {NAME => 'f1', VERSIONS => 1, TTL => 2592000, BLOCKCACHE => true}
  hbase> create 't1', {NAME => 'f1', CONFIGURATION => {'hbase.hstore.blockingStoreFiles' => '10'}}
  hbase> create 't1', 'f1', SPLITS => ['10', '20', '30', '40']
  hbase> create 't1', 'f1', SPLITS_FILE => 'splits.txt', OWNER => 'johndoe'
  hbase> create 't1', {NAME => 'f1', VERSIONS => 5}, METADATA => { 'mykey' => 'myvalue' }
  hbase> create 't1', 'f1', {NUMREGIONS => 15, SPLITALGO => 'HexStringSplit'}
`},
		{name: "alter", group: "ddl", run: cmdAlter, help: `Change a table's column families or attributes. A family hash changes the
family (the attributes given; the others keep their values) or adds it when
the table does not have it. METHOD => 'delete' (or 'delete' => 'f1') removes a
family and its data; table attributes (MAX_FILESIZE, READONLY,
MEMSTORE_FLUSHSIZE, DURABILITY, METADATA, ...) go alone or with
METHOD => 'table_att'; METHOD => 'table_att_unset' removes one. The table may
be enabled: the shell returns when every region has the new schema. Examples:

  hbase> alter 't1', NAME => 'f1', VERSIONS => 5
  hbase> alter 't1', 'f1', {NAME => 'f2', IN_MEMORY => true}, {NAME => 'f3', VERSIONS => 5}
  hbase> alter 'ns1:t1', NAME => 'f1', METHOD => 'delete'
  hbase> alter 'ns1:t1', 'delete' => 'f1'
  hbase> alter 't1', MAX_FILESIZE => '134217728'
  hbase> alter 't1', CONFIGURATION => {'hbase.hregion.scan.loadColumnFamiliesOnDemand' => 'true'}  (refused: table CONFIGURATION)
  hbase> alter 't1', {NAME => 'f1', CONFIGURATION => {'hbase.hstore.blockingStoreFiles' => '10'}}
  hbase> alter 't1', METHOD => 'table_att_unset', NAME => 'MAX_FILESIZE'
`},
		{name: "describe", group: "ddl", run: cmdDescribe, help: `Show a table's state, attributes and column families, as its descriptor on the
server holds them (attributes not set there have the server's defaults).

  hbase> describe 't1'
  hbase> describe 'ns1:t1'
  hbase> desc 't1'
`},
		{name: "desc", group: "ddl", run: cmdDescribe, help: `The same as describe.

  hbase> desc 't1'
`},
		{name: "list", group: "ddl", run: cmdList, help: `List the user tables, all or those whose name matches a regular expression
(the whole name must match, as in Java); 'ns:regex' lists a namespace's tables.

  hbase> list
  hbase> list 'abc.*'
  hbase> list 'ns:abc.*'
  hbase> list 'ns:.*'
`},
		{name: "exists", group: "ddl", run: cmdExists, help: `Tell whether a table exists.

  hbase> exists 't1'
  hbase> exists 'ns1:t1'
`},
		{name: "enable", group: "ddl", run: cmdEnable, help: `Enable a table (nothing happens if it is enabled).

  hbase> enable 't1'
  hbase> enable 'ns1:t1'
`},
		{name: "disable", group: "ddl", run: cmdDisable, help: `Disable a table (nothing happens if it is disabled). A disabled table takes no
reads or writes; it can be dropped or truncated.

  hbase> disable 't1'
  hbase> disable 'ns1:t1'
`},
		{name: "is_enabled", group: "ddl", run: cmdIsEnabled(true), help: `Tell whether a table is enabled.

  hbase> is_enabled 't1'
`},
		{name: "is_disabled", group: "ddl", run: cmdIsEnabled(false), help: `Tell whether a table is disabled.

  hbase> is_disabled 't1'
`},
		{name: "drop", group: "ddl", run: cmdDrop, help: `Drop a table and its data. The table must be disabled first.

  hbase> disable 't1'
  hbase> drop 't1'
`},

		{name: "create_namespace", group: "namespace", run: cmdCreateNamespace, help: `Create a namespace, optionally with properties.

  hbase> create_namespace 'ns1'
  hbase> create_namespace 'ns1', {'hbase.namespace.quota.maxtables' => '5'}
`},
		{name: "drop_namespace", group: "namespace", run: cmdDropNamespace, help: `Drop a namespace; it must have no tables.

  hbase> drop_namespace 'ns1'
`},
		{name: "list_namespace", group: "namespace", run: cmdListNamespace, help: `List the namespaces, all or those matching a regular expression.

  hbase> list_namespace
  hbase> list_namespace 'abc.*'
`},
		{name: "describe_namespace", group: "namespace", run: cmdDescribeNamespace, help: `Show a namespace and its properties.

  hbase> describe_namespace 'ns1'
`},

		{name: "put", group: "dml", run: cmdPut, help: `Write a cell: table, row, column ('family:qualifier'), value, and optionally a
timestamp and {TTL => milliseconds}.

  hbase> put 'ns1:t1', 'r1', 'c1', 'value'
  hbase> put 't1', 'r1', 'f1:q1', 'value', ts1
  hbase> put 't1', 'r1', 'f1:q1', 'value', {TTL => 60000}
  hbase> put 't1', "r\x00\x01", 'f1:q1', "\x00\xff"
`},
		{name: "get", group: "dml", run: cmdGet, help: `Read a row or some of its cells: table, row, and optionally columns or a hash of
COLUMN/COLUMNS, TIMESTAMP, TIMERANGE => [min, max) , VERSIONS, FILTER (a filter
string, see scan) and MAXLENGTH (cut each printed cell).

  hbase> get 'ns1:t1', 'r1'
  hbase> get 't1', 'r1'
  hbase> get 't1', 'r1', {TIMERANGE => [ts1, ts2]}
  hbase> get 't1', 'r1', {COLUMN => 'c1'}
  hbase> get 't1', 'r1', {COLUMN => ['c1', 'c2', 'c3']}
  hbase> get 't1', 'r1', {COLUMN => 'c1', TIMESTAMP => ts1}
  hbase> get 't1', 'r1', {COLUMN => 'c1', TIMERANGE => [ts1, ts2], VERSIONS => 4}
  hbase> get 't1', 'r1', {FILTER => "ValueFilter(=, 'binary:abc')"}
  hbase> get 't1', 'r1', 'c1'
  hbase> get 't1', 'r1', 'c1', 'c2'
  hbase> get 't1', 'r1', ['c1', 'c2']
`},
		{name: "scan", group: "dml", run: cmdScan, help: `Scan a table, or part of it, with a hash of: STARTROW, STOPROW, ROWPREFIXFILTER,
LIMIT, REVERSED, COLUMNS (a column, a family or a list of them), VERSIONS,
TIMESTAMP, TIMERANGE => [min, max), FILTER, CACHE (rows per RPC), CACHE_BLOCKS,
MAXLENGTH, ALL_METRICS and METRICS => ['ROWS_SCANNED', ...].

FILTER takes HBase's filter language: filters such as PrefixFilter('p'),
RowFilter(op, 'comparator'), ValueFilter, QualifierFilter, FamilyFilter,
SingleColumnValueFilter('f', 'q', op, 'comparator'[, ifMissing, latestOnly]),
ColumnPrefixFilter, MultipleColumnPrefixFilter, ColumnRangeFilter, PageFilter,
TimestampsFilter, KeyOnlyFilter, FirstKeyOnlyFilter, InclusiveStopFilter,
ColumnCountGetFilter, ColumnPaginationFilter, DependentColumnFilter,
ColumnValueFilter, combined with AND, OR, SKIP, WHILE and parentheses. An op is
one of < <= = != >= > and a comparator 'binary:v', 'binaryprefix:v',
'regexstring:re' or 'substring:s'.

  hbase> scan 'hbase:meta'
  hbase> scan 'hbase:meta', {COLUMNS => 'info:regioninfo'}
  hbase> scan 'ns1:t1', {COLUMNS => ['c1', 'c2'], LIMIT => 10, STARTROW => 'xyz'}
  hbase> scan 't1', {COLUMNS => 'c1', TIMERANGE => [1303668804000, 1303668904000]}
  hbase> scan 't1', {REVERSED => true}
  hbase> scan 't1', {ALL_METRICS => true}
  hbase> scan 't1', {ROWPREFIXFILTER => 'row2', FILTER => "(QualifierFilter (>=, 'binary:xyz')) AND (TimestampsFilter ( 123, 456))"}
  hbase> scan 't1', {FILTER => "PrefixFilter('r') AND ValueFilter(=, 'binary:x')"}
`},
		{name: "delete", group: "dml", run: cmdDelete, help: `Delete every version of a cell at or before a timestamp (now by default):
table, row, column and optionally the timestamp.

  hbase> delete 'ns1:t1', 'r1', 'c1', ts1
  hbase> delete 't1', 'r1', 'c1'
`},
		{name: "deleteall", group: "dml", run: cmdDeleteAll, help: `Delete a whole row, or a column or family of it, at or before a timestamp.

  hbase> deleteall 'ns1:t1', 'r1'
  hbase> deleteall 't1', 'r1'
  hbase> deleteall 't1', 'r1', 'c1'
  hbase> deleteall 't1', 'r1', 'c1', ts1
`},
		{name: "incr", group: "dml", run: cmdIncr, help: `Add to a counter (an 8-byte big-endian cell; a missing cell counts from 0) and
print its new value: table, row, column, and optionally the amount (1).

  hbase> incr 'ns1:t1', 'r1', 'c1'
  hbase> incr 't1', 'r1', 'c1', 10
  hbase> incr 't1', 'r1', 'c1', 10, {TTL => 60000}
`},
		{name: "get_counter", group: "dml", run: cmdGetCounter, help: `Print a counter's value.

  hbase> get_counter 'ns1:t1', 'r1', 'c1'
  hbase> get_counter 't1', 'r1', 'c1'
`},
		{name: "count", group: "dml", run: cmdCount, help: `Count a table's rows, printing the count every INTERVAL rows (1000) and reading
CACHE rows per RPC (10); FILTER counts the rows a filter passes.

  hbase> count 'ns1:t1'
  hbase> count 't1'
  hbase> count 't1', INTERVAL => 100000
  hbase> count 't1', CACHE => 1000
  hbase> count 't1', INTERVAL => 10, CACHE => 1000
  hbase> count 't1', FILTER => "PrefixFilter('r')"
`},
		{name: "truncate", group: "dml", run: cmdTruncate(false), help: `Remove every row of a table: it is disabled, truncated to one region and enabled.

  hbase> truncate 't1'
`},
		{name: "truncate_preserve", group: "dml", run: cmdTruncate(true), help: `Remove every row of a table, keeping its regions' boundaries.

  hbase> truncate_preserve 't1'
`},

		{name: "flush", group: "tools", run: cmdFlush, help: `Flush the memstores of a table (optionally of one family) or of one region
(by its full name) to store files.

  hbase> flush 'TABLENAME'
  hbase> flush 'TABLENAME', 'FAMILYNAME'
  hbase> flush 'REGIONNAME'
`},
		{name: "compact", group: "tools", run: cmdCompact(false), help: `Queue a compaction of a table's or a region's store files, optionally of one
family. The command returns once the compaction is queued.

  hbase> compact 't1'
  hbase> compact 't1', 'c1'
  hbase> compact 'r1'
  hbase> compact 'r1', 'c1'
`},
		{name: "major_compact", group: "tools", run: cmdCompact(true), help: `Queue a major compaction (every store file into one, deleted and expired cells
dropped) of a table or a region, optionally of one family.

  hbase> major_compact 't1'
  hbase> major_compact 't1', 'c1'
  hbase> major_compact 'r1'
`},
		{name: "split", group: "tools", run: cmdSplit, help: `Split a table's regions or one region: at the given row, or without one each
region at the middle of its largest store file. A region made by a split or merge splits again once it has
compacted its parent's files away.

  hbase> split 'tableName'
  hbase> split 'namespace:tableName'
  hbase> split 'regionName' # format: 'tableName,startKey,id.encodedName.'
  hbase> split 'tableName', 'splitKey'
  hbase> split 'regionName', 'splitKey'
`},
		{name: "merge_region", group: "tools", run: cmdMergeRegion, help: `Merge adjacent regions of a table into one, named by their encoded names or
full region names. With force (true), regions may be given in any order, but must still cover a range with no
region left out.

  hbase> merge_region 'ENCODED_REGIONNAME', 'ENCODED_REGIONNAME'
  hbase> merge_region 'FULL_REGIONNAME', 'FULL_REGIONNAME', true
  hbase> merge_region ['ENCODED_REGIONNAME', 'ENCODED_REGIONNAME', 'ENCODED_REGIONNAME']
  hbase> merge_region ['ENCODED_REGIONNAME', 'ENCODED_REGIONNAME'], true
`},
		{name: "assign", group: "tools", run: cmdAssign, help: `Open a region that is not open: one the server left FAILED_OPEN because it
could not open it (a damaged or unreadable file; the server's log and its
/rs-status page say why), once that is mended. The command fails,
with the reason, if the region still does not open; an open region is left
as it is. The region is named by its full or its encoded name.

  hbase> assign 'REGIONNAME'
  hbase> assign 'ENCODED_REGIONNAME'
`},
		{name: "splitormerge_switch", group: "tools", run: cmdSplitOrMergeSwitch, help: `Turn the split or the merge switch on or off, and print its previous
state. While the split switch is off no region splits, on request or by itself.

  hbase> splitormerge_switch 'SPLIT', true
  hbase> splitormerge_switch 'MERGE', false
`},
		{name: "splitormerge_enabled", group: "tools", run: cmdSplitOrMergeEnabled, help: `Tell whether the split or the merge switch is on.

  hbase> splitormerge_enabled 'SPLIT'
  hbase> splitormerge_enabled 'MERGE'
`},

		{name: "snapshot", group: "snapshots", run: cmdSnapshot, help: `Take a snapshot of a table: its descriptor, regions and store files (kept until
the snapshot is deleted). SKIP_FLUSH => true leaves out what only the memstores hold; TTL (seconds) is how long it
may be restored or cloned.

  hbase> snapshot 'sourceTable', 'snapshotName'
  hbase> snapshot 'namespace:sourceTable', 'snapshotName', {SKIP_FLUSH => true}
  hbase> snapshot 'sourceTable', 'snapshotName', {TTL => 86400}
`},
		{name: "list_snapshots", group: "snapshots", run: cmdListSnapshots, help: `List the snapshots, all or those matching a regular expression.

  hbase> list_snapshots
  hbase> list_snapshots 'abc.*'
`},
		{name: "restore_snapshot", group: "snapshots", run: cmdRestoreSnapshot, help: `Restore a table to a snapshot: its descriptor, regions and data become the
snapshot's. The table must be disabled, and stays disabled.

  hbase> restore_snapshot 'snapshotName'
`},
		{name: "clone_snapshot", group: "snapshots", run: cmdCloneSnapshot, help: `Create a new table from a snapshot: the snapshot's descriptor, regions and
data, sharing its files; writes to either table never reach the other.

  hbase> clone_snapshot 'snapshotName', 'tableName'
  hbase> clone_snapshot 'snapshotName', 'namespace:tableName'
`},
		{name: "delete_snapshot", group: "snapshots", run: cmdDeleteSnapshot, help: `Delete a snapshot; tables restored or cloned from it keep their data.

  hbase> delete_snapshot 'snapshotName'
`},
	}
	commandsByName = map[string]*command{}
	for i := range commands {
		commandsByName[commands[i].name] = &commands[i]
	}
}
