package region

import (
	"log/slog"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/cockroachdb/errors"
	"github.com/regionkv/regionkv/encoding"
	"github.com/regionkv/regionkv/hfile"
	"github.com/regionkv/regionkv/internal/hbaseconf"
	"github.com/regionkv/regionkv/internal/vfs"
	"github.com/regionkv/regionkv/wal"
)

// Compression is a family's COMPRESSION: the codec applied to every block
// of its store files. The zero value is NONE, HBase's default. NONE, GZ,
// SNAPPY and ZSTD are implemented; the others (LZO, LZ4, ...) are refused
// when a family asks for them.
type Compression = hfile.Compression

// Compressions a family may use.
const (
	CompressionNone   = hfile.CompressionNone
	CompressionGZ     = hfile.CompressionGZ
	CompressionSnappy = hfile.CompressionSnappy
	CompressionZstd   = hfile.CompressionZstd
)

// ParseCompression maps an HBase compression name ("SNAPPY", "gz", ...; case
// is ignored) to a Compression.
func ParseCompression(name string) (Compression, error) { return hfile.ParseCompression(name) }

// DataBlockEncoding is a family's DATA_BLOCK_ENCODING: how cells are laid out
// inside a data block. The zero value is NONE, HBase's default.
type DataBlockEncoding = encoding.DataBlockEncoding

// Data block encodings a family may use.
const (
	EncodingNone       = encoding.EncodingNone
	EncodingPrefix     = encoding.EncodingPrefix
	EncodingFastDiff   = encoding.EncodingFastDiff
	EncodingRowIndexV1 = encoding.EncodingRowIndexV1
)

// ParseDataBlockEncoding maps an HBase encoding name ("FAST_DIFF", ...) to a
// DataBlockEncoding.
func ParseDataBlockEncoding(name string) (DataBlockEncoding, error) {
	return encoding.ParseDataBlockEncoding(name)
}

// BloomFilter is a family's BLOOMFILTER: which bloom filter its store files
// carry, so that a point read skips files that cannot hold its row (ROW) or
// its row and column (ROWCOL). The zero value is ROW, HBase's default.
type BloomFilter uint8

// Bloom filters a family may use.
const (
	BloomFilterRow BloomFilter = iota
	BloomFilterNone
	BloomFilterRowCol
)

var bloomFilterNames = [...]string{BloomFilterRow: "ROW", BloomFilterNone: "NONE", BloomFilterRowCol: "ROWCOL"}

// String returns HBase's name: "ROW", "NONE" or "ROWCOL".
func (b BloomFilter) String() string {
	if int(b) < len(bloomFilterNames) {
		return bloomFilterNames[b]
	}
	return "BloomFilter(" + strconv.Itoa(int(b)) + ")"
}

// ParseBloomFilter maps HBase's bloom filter name, in any case, to a
// BloomFilter.
func ParseBloomFilter(name string) (BloomFilter, error) {
	for i, n := range bloomFilterNames {
		if strings.EqualFold(name, n) {
			return BloomFilter(i), nil
		}
	}
	return 0, invalidArgf("region: unknown bloom filter %q", name)
}

func (b BloomFilter) hfileType() hfile.BloomType {
	switch b {
	case BloomFilterNone:
		return hfile.BloomNone
	case BloomFilterRowCol:
		return hfile.BloomRowCol
	}
	return hfile.BloomRow
}

func bloomFilterOf(t hfile.BloomType) BloomFilter {
	switch t {
	case hfile.BloomNone:
		return BloomFilterNone
	case hfile.BloomRowCol:
		return BloomFilterRowCol
	}
	return BloomFilterRow
}

// FamilyOptions are a column family's attributes, as HBase's
// ColumnFamilyDescriptor. Every zero value means HBase's default.
type FamilyOptions struct {
	Name string
	// MaxVersions is VERSIONS (default 1).
	MaxVersions int
	// TTL is the family's time to live; 0 means forever.
	TTL time.Duration
	// Encoding is DATA_BLOCK_ENCODING (default NONE).
	Encoding DataBlockEncoding
	// Compression is COMPRESSION (default NONE).
	Compression Compression
	// BloomFilter is BLOOMFILTER (default ROW).
	BloomFilter BloomFilter
	// BlockSize is BLOCKSIZE (default hfile.DefaultBlockSize, 4 KiB, where
	// HBase's is 64 KiB: see there why).
	BlockSize int
	// InMemory gives the family's blocks in-memory priority in the cache.
	InMemory bool
	// MinVersions is MIN_VERSIONS (default 0, at most MaxVersions): with a
	// TTL, the newest MinVersions versions of a column that are not deleted
	// stay readable, and flushes and major compactions keep them, after
	// they expire. Without a TTL it changes nothing.
	MinVersions int
	// NoBlockCache is BLOCKCACHE=false: the family's data blocks are not
	// put in the block cache (index and bloom blocks still are, as in
	// HBase, where the attribute only means cache data on read).
	NoBlockCache bool
	// CompactionCompression is COMPRESSION_COMPACT, the codec of the files
	// compactions write, and Major- and MinorCompactionCompression are
	// COMPRESSION_COMPACT_MAJOR and _MINOR for one kind of compaction.
	// Unset, each falls back as in HBase: major or minor to
	// CompactionCompression, that to Compression.
	CompactionCompression      CompressionOverride
	MajorCompactionCompression CompressionOverride
	MinorCompactionCompression CompressionOverride

	// Bloom and NoBloom are the old spelling of BloomFilter, whose zero
	// value could not mean ROW. When either is set it decides.
	//
	// Deprecated: use BloomFilter.
	Bloom   hfile.BloomType
	NoBloom bool
}

// CompressionOverride is a codec that replaces a more general one when Set.
type CompressionOverride struct {
	Set         bool
	Compression Compression
}

// OverrideCompression returns a CompressionOverride that sets c.
func OverrideCompression(c Compression) CompressionOverride {
	return CompressionOverride{Set: true, Compression: c}
}

// or returns o's codec if set, else c.
func (o CompressionOverride) or(c Compression) Compression {
	if o.Set {
		return o.Compression
	}
	return c
}

// compactionCompression is the codec of a compaction's output (HBase's
// getMajor/MinorCompactionCompressionType).
func (f FamilyOptions) compactionCompression(major bool) Compression {
	c := f.CompactionCompression.or(f.Compression)
	if major {
		return f.MajorCompactionCompression.or(c)
	}
	return f.MinorCompactionCompression.or(c)
}

// withDefaults resolves zero values and the deprecated fields; the result
// has BloomFilter decided and Bloom / NoBloom agreeing with it, so that
// callers reading either spelling see the same.
func (f FamilyOptions) withDefaults() FamilyOptions {
	if f.MaxVersions <= 0 {
		f.MaxVersions = 1
	}
	switch {
	case f.NoBloom:
		f.BloomFilter = BloomFilterNone
	case f.Bloom != hfile.BloomNone:
		f.BloomFilter = bloomFilterOf(f.Bloom)
	}
	f.Bloom, f.NoBloom = f.BloomFilter.hfileType(), f.BloomFilter == BloomFilterNone
	if f.BlockSize <= 0 {
		f.BlockSize = hfile.DefaultBlockSize
	}
	return f
}

// Validate returns the error (marked ErrInvalidArgument) Open, AddFamily
// or ModifyFamily would refuse f with, or nil.
func (f FamilyOptions) Validate() error { return f.withDefaults().validate() }

func (f FamilyOptions) validate() error {
	if f.Name == "" || len(f.Name) > encoding.MaxFamilyLen {
		return invalidArgf("region: family name %q must be 1..%d bytes", f.Name, encoding.MaxFamilyLen)
	}
	if strings.ContainsAny(f.Name, "/:\x00") || f.Name == "." || f.Name == ".." || strings.HasPrefix(f.Name, ".") {
		return invalidArgf("region: illegal family name %q", f.Name)
	}
	if err := f.Compression.Supported(); err != nil {
		return errors.Mark(errors.Wrapf(err, "region: family %q", f.Name), ErrInvalidArgument)
	}
	if _, err := encoding.NewBlockEncoder(f.Encoding, encoding.BlockFormat{}); err != nil {
		return errors.Mark(errors.Wrapf(err, "region: family %q", f.Name), ErrInvalidArgument)
	}
	if f.BloomFilter > BloomFilterRowCol {
		return invalidArgf("region: family %q: unknown bloom filter %d", f.Name, f.BloomFilter)
	}
	// HBase's TableDescriptorChecker refuses both (HBASE-13776 for the
	// second); MaxVersions is already defaulted to at least 1 here.
	if f.MinVersions < 0 {
		return invalidArgf("region: family %q: MIN_VERSIONS %d must not be negative", f.Name, f.MinVersions)
	}
	if f.MinVersions > f.MaxVersions {
		return invalidArgf("region: family %q: MIN_VERSIONS %d must not exceed VERSIONS %d", f.Name, f.MinVersions, f.MaxVersions)
	}
	for _, o := range []CompressionOverride{f.CompactionCompression, f.MajorCompactionCompression, f.MinorCompactionCompression} {
		if err := o.Compression.Supported(); o.Set && err != nil {
			return errors.Mark(errors.Wrapf(err, "region: family %q: compaction compression", f.Name), ErrInvalidArgument)
		}
	}
	return nil
}

// Defaults, as HBase's.
const (
	DefaultFlushSize          = 128 << 20 // hbase.hregion.memstore.flush.size
	DefaultBlockingMultiplier = 4         // hbase.hregion.memstore.block.multiplier
	DefaultRowLockWait        = 30 * time.Second
	DefaultBlockingWait       = 60 * time.Second
)

// Options configure a Region. Zero values mean the defaults.
type Options struct {
	// Table and EncodedName name the region in WAL entries and errors.
	Table       string
	EncodedName string
	// MustExist makes Open fail with ErrNoRegion when dir does not exist,
	// rather than create an empty region there: for a region that is known
	// to have data (listed in hbase:meta), a missing directory is damage,
	// and an empty region in its place would answer reads wrongly.
	MustExist bool
	// StartKey and EndKey are the region's rows, [StartKey, EndKey): HBase's
	// RegionInfo start and end keys, empty for no bound. BulkLoadHFiles
	// refuses files with rows outside them (ErrWrongRegion); other
	// operations take any row, as the caller routes them.
	StartKey, EndKey []byte
	// HBaseFileNames names new store files as HBase's StoreFileInfo expects
	// them: 32 lowercase hex digits and no suffix. Without it they are named
	// <32 hex digits>.hfile, which HBase would read as a reference file to a
	// region named "hfile". Both kinds are read either way, so the setting
	// can change on a region that has files. The server sets it: its data
	// directory is what HBase's tools meet. The embedded default keeps the
	// suffix, which ../shared/bench/peers (the peer benchmark, not ours to
	// change) finds data files by; data handed to HBase goes through
	// `regionsrv export` or a snapshot, which always use HBase's names.
	HBaseFileNames bool
	// Families are created if new and must include every existing family
	// (unless DropFamilies). On reopen they may be left empty to use the
	// stored descriptor. A family that an existing region did not have
	// starts empty, as with AddFamily.
	Families []FamilyOptions
	// DropFamilies makes Families the region's whole schema: a family the
	// region has that Families leaves out is deleted with its data, as
	// DeleteFamily does. A server whose table descriptor is the truth
	// (regionsrv) opens its regions so, which finishes a family deletion
	// that a crash interrupted.
	DropFamilies bool
	// Meta orders rows as hbase:meta's (encoding.MetaComparer: by table,
	// then start key, then region id) instead of bytewise. It is fixed when
	// the region is created.
	Meta bool
	// FlushSize triggers a flush when the memstores' heap size (their
	// cells with the memory that holds them, memstore.Size.HeapSize)
	// passes it, as HBase 2 compares hbase.hregion.memstore.flush.size.
	FlushSize int64
	// BlockingMultiplier × FlushSize is where writes block until a flush
	// frees memory.
	BlockingMultiplier int
	// BlockingWait bounds how long a blocked write waits before failing with
	// ErrRegionTooBusy.
	BlockingWait time.Duration
	// RowLockWait is hbase.rowlock.wait.duration.
	RowLockWait time.Duration
	// Durability is the default for mutations that say USE_DEFAULT
	// (SYNC_WAL if unset).
	Durability Durability
	// WALRollSize is the size at which WAL segments roll.
	WALRollSize int64
	// Compaction: HBase's hbase.hstore.compaction.min / .max / .ratio /
	// .min.size (default FlushSize) / .max.size, hbase.hregion.majorcompaction
	// (negative disables periodic major compactions) and the throughput
	// limit in bytes per second (negative: unlimited).
	CompactionMin         int
	CompactionMax         int
	CompactionRatio       float64
	CompactionMinSize     int64
	CompactionMaxSize     int64
	MajorCompactionPeriod time.Duration
	CompactionThroughput  int64
	// DisableAutoCompaction leaves compaction to explicit Compact calls.
	DisableAutoCompaction bool
	// Cache is the block cache the region's store files read through. One
	// Cache may serve many regions; its creator closes it after the last of
	// them. If nil, the region makes a cache of CacheSize bytes of its own
	// and closes it with the region; with CacheSize 0 too, blocks are not
	// cached (every read of a data block reads the file).
	Cache     *Cache
	CacheSize int64
	// BlockCache is any hfile.Cache, for callers that build their own.
	//
	// Deprecated: use Cache, whose counters Stats reports.
	BlockCache hfile.Cache
	// CompactionPool, if set, is compaction capacity and a throughput
	// limit this region shares with other regions (then
	// CompactionThroughput is the pool's business, not the region's).
	CompactionPool *CompactionPool
	// MemstoreLimit, if set, is a memory budget this region's memstores
	// share with other regions' (HBase's global memstore limit): the
	// largest region is flushed when they pass its lower limit, and writes
	// block above its upper one.
	MemstoreLimit *MemstoreLimit
	// BloomErrorRate is io.storefile.bloom.error.rate: the false positive
	// rate of the bloom filters new store files get (default 0.01).
	BloomErrorRate float64
	// Logger receives the region's log lines (flushes and compactions at
	// Debug and Info, trouble at Warn and Error); slog.Default() if nil.
	Logger *slog.Logger
	// Now returns the current time (for timestamps and TTL); time.Now if nil.
	Now func() time.Time
	// StoreFilesChanged, if set, is called after each flush that wrote a
	// store file and each compaction, from the goroutine that ran it, so
	// that the region's owner can see whether the region should now split
	// (HBase's region server checks its split policy then) or whether its
	// parents' files are still referenced. It must not block, nor call the
	// region's Flush, Compact or Close.
	StoreFilesChanged func()

	// FS is the filesystem every file of the region (store files, their
	// temporary files, .regioninfo, the WAL) is read and written through;
	// DefaultFS, the operating system's, if nil. Tests substitute one that
	// injects faults or loses power. The directory lock (<dir>/.lock) is
	// always taken on the operating system's filesystem.
	FS FS
}

// SetConfig applies an HBase configuration property by name, as
// hbase-site.xml or `-D key=value` give them. It takes the properties the
// registry (internal/hbaseconf, listed by `regionsrv serve --print-config`)
// assigns to the region; others are refused.
func (o *Options) SetConfig(key, value string) error {
	p, err := hbaseconf.For(hbaseconf.Region, key)
	if err != nil {
		return errors.Mark(err, ErrInvalidArgument)
	}
	intv := func(dst *int64) error {
		v, err := p.Int(value)
		*dst = v
		return errors.Mark(err, ErrInvalidArgument)
	}
	var n int64
	switch p.Name {
	case "hbase.hregion.memstore.flush.size":
		return intv(&o.FlushSize)
	case "hbase.hregion.memstore.block.multiplier":
		err = intv(&n)
		o.BlockingMultiplier = int(n)
	case "hbase.rowlock.wait.duration":
		o.RowLockWait, err = p.Millis(value)
	case "hbase.regionserver.logroll.size":
		return intv(&o.WALRollSize)
	case "hbase.hstore.compaction.min":
		err = intv(&n)
		o.CompactionMin = int(n)
	case "hbase.hstore.compaction.max":
		err = intv(&n)
		o.CompactionMax = int(n)
	case "hbase.hstore.compaction.ratio":
		o.CompactionRatio, err = p.Float(value)
	case "hbase.hstore.compaction.min.size":
		return intv(&o.CompactionMinSize)
	case "hbase.hstore.compaction.max.size":
		return intv(&o.CompactionMaxSize)
	case "hbase.hregion.majorcompaction":
		o.MajorCompactionPeriod, err = p.Millis(value)
		if err == nil && o.MajorCompactionPeriod == 0 {
			o.MajorCompactionPeriod = -1 // HBase: 0 disables
		}
	case "hbase.hstore.compaction.throughput.higher.bound":
		return intv(&o.CompactionThroughput)
	case "hbase.wal.durability":
		o.Durability, err = wal.ParseDurability(value)
	case "io.storefile.bloom.error.rate":
		o.BloomErrorRate, err = p.Float(value)
	default:
		return errors.AssertionFailedf("region: registered property %q not applied", p.Name)
	}
	return errors.Mark(err, ErrInvalidArgument)
}

func (o Options) withDefaults() Options {
	if o.FlushSize <= 0 {
		o.FlushSize = DefaultFlushSize
	}
	if o.BlockingMultiplier <= 0 {
		o.BlockingMultiplier = DefaultBlockingMultiplier
	}
	if o.BlockingWait <= 0 {
		o.BlockingWait = DefaultBlockingWait
	}
	if o.RowLockWait <= 0 {
		o.RowLockWait = DefaultRowLockWait
	}
	if o.WALRollSize <= 0 {
		o.WALRollSize = wal.DefaultRollSize
	}
	if o.Durability == wal.UseDefault {
		o.Durability = wal.SyncWAL
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.FS == nil {
		o.FS = vfs.Default
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.BloomErrorRate <= 0 || o.BloomErrorRate >= 1 {
		o.BloomErrorRate = hfile.DefaultBloomErrorRate
	}
	if o.Table == "" {
		o.Table = "default"
	}
	if o.CompactionMin <= 0 {
		o.CompactionMin = DefaultCompactionMin
	}
	if o.CompactionMin < 2 {
		o.CompactionMin = 2
	}
	if o.CompactionMax <= 0 {
		o.CompactionMax = DefaultCompactionMax
	}
	o.CompactionMax = max(o.CompactionMax, o.CompactionMin)
	if o.CompactionRatio <= 0 {
		o.CompactionRatio = DefaultCompactionRatio
	}
	if o.CompactionMinSize <= 0 {
		o.CompactionMinSize = o.FlushSize
	}
	if o.CompactionMaxSize <= 0 {
		o.CompactionMaxSize = math.MaxInt64
	}
	if o.MajorCompactionPeriod == 0 {
		o.MajorCompactionPeriod = DefaultMajorPeriod
	}
	if o.CompactionThroughput == 0 {
		o.CompactionThroughput = DefaultCompactionThroughput
	}
	return o
}
