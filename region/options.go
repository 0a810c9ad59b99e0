package region

import (
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/cockroachdb/errors"
	"github.com/regionkv/regionkv/encoding"
	"github.com/regionkv/regionkv/hfile"
	"github.com/regionkv/regionkv/internal/vfs"
	"github.com/regionkv/regionkv/wal"
)

// FamilyOptions are a column family's attributes, as HBase's
// ColumnFamilyDescriptor. Zero values mean HBase's defaults.
type FamilyOptions struct {
	Name string
	// MaxVersions is VERSIONS (default 1).
	MaxVersions int
	// TTL is the family's time to live; 0 means forever.
	TTL time.Duration
	// Encoding is DATA_BLOCK_ENCODING (default NONE).
	Encoding encoding.DataBlockEncoding
	// Compression is COMPRESSION (default NONE).
	Compression hfile.Compression
	// Bloom is BLOOMFILTER; HBase's default is ROW. Set NoBloom to disable.
	Bloom   hfile.BloomType
	NoBloom bool
	// BlockSize is BLOCKSIZE (default hfile.DefaultBlockSize, 4 KiB, where
	// HBase's is 64 KiB: see there why).
	BlockSize int
	// InMemory gives the family's blocks in-memory priority in the cache.
	InMemory bool
}

func (f FamilyOptions) withDefaults() FamilyOptions {
	if f.MaxVersions <= 0 {
		f.MaxVersions = 1
	}
	if f.Compression == hfile.CompressionLZO {
		f.Compression = hfile.CompressionNone
	}
	if f.Bloom == hfile.BloomNone && !f.NoBloom {
		f.Bloom = hfile.BloomRow
	}
	if f.NoBloom {
		f.Bloom = hfile.BloomNone
	}
	if f.BlockSize <= 0 {
		f.BlockSize = hfile.DefaultBlockSize
	}
	return f
}

func (f FamilyOptions) validate() error {
	if f.Name == "" || len(f.Name) > encoding.MaxFamilyLen {
		return errors.Newf("region: family name %q must be 1..%d bytes", f.Name, encoding.MaxFamilyLen)
	}
	if strings.ContainsAny(f.Name, "/:\x00") || f.Name == "." || f.Name == ".." || strings.HasPrefix(f.Name, ".") {
		return errors.Newf("region: illegal family name %q", f.Name)
	}
	if err := f.Compression.Supported(); err != nil {
		return err
	}
	if _, err := encoding.NewBlockEncoder(f.Encoding, encoding.BlockFormat{}); err != nil {
		return err
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
	// Families are created if new and must include every existing family.
	// On reopen they may be left empty to use the stored descriptor.
	Families []FamilyOptions
	// Comparer orders rows: encoding.MetaComparer for hbase:meta.
	Meta bool
	// FlushSize triggers a flush when the memstores pass it.
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
	Durability wal.Durability
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
	// BlockCache, if set, caches store file blocks.
	BlockCache hfile.Cache
	// Now returns the current time (for timestamps and TTL); time.Now if nil.
	Now func() time.Time
	// FS is the filesystem every file of the region (store files, their
	// temporary files, .regioninfo, the WAL) is read and written through;
	// vfs.Default if nil. Tests substitute internal/vfs/errorfs to inject
	// faults. The directory lock (<dir>/.lock) is always taken on the
	// operating system's filesystem.
	FS vfs.FS
}

// SetConfig applies HBase configuration properties by name, as
// hbase-site.xml or `-D key=value` give them.
func (o *Options) SetConfig(key, value string) error {
	parseInt := func() (int64, error) {
		v, err := strconv.ParseInt(strings.TrimSpace(value), 10, 64)
		if err != nil {
			return 0, errors.Wrapf(err, "region: property %s", key)
		}
		return v, nil
	}
	switch key {
	case "hbase.hregion.memstore.flush.size":
		v, err := parseInt()
		if err != nil {
			return err
		}
		o.FlushSize = v
	case "hbase.hregion.memstore.block.multiplier":
		v, err := parseInt()
		if err != nil {
			return err
		}
		o.BlockingMultiplier = int(v)
	case "hbase.rowlock.wait.duration":
		v, err := parseInt()
		if err != nil {
			return err
		}
		o.RowLockWait = time.Duration(v) * time.Millisecond
	case "hbase.regionserver.hlog.blocksize", "hbase.regionserver.logroll.size":
		v, err := parseInt()
		if err != nil {
			return err
		}
		o.WALRollSize = v
	case "hbase.hstore.compaction.min", "hbase.hstore.compactionThreshold":
		v, err := parseInt()
		if err != nil {
			return err
		}
		o.CompactionMin = int(v)
	case "hbase.hstore.compaction.max":
		v, err := parseInt()
		if err != nil {
			return err
		}
		o.CompactionMax = int(v)
	case "hbase.hstore.compaction.ratio":
		v, err := strconv.ParseFloat(strings.TrimSpace(value), 64)
		if err != nil {
			return errors.Wrapf(err, "region: property %s", key)
		}
		o.CompactionRatio = v
	case "hbase.hstore.compaction.min.size":
		v, err := parseInt()
		if err != nil {
			return err
		}
		o.CompactionMinSize = v
	case "hbase.hstore.compaction.max.size":
		v, err := parseInt()
		if err != nil {
			return err
		}
		o.CompactionMaxSize = v
	case "hbase.hregion.majorcompaction":
		v, err := parseInt()
		if err != nil {
			return err
		}
		o.MajorCompactionPeriod = time.Duration(v) * time.Millisecond
		if v == 0 {
			o.MajorCompactionPeriod = -1 // HBase: 0 disables
		}
	case "hbase.hstore.compaction.throughput.higher.bound":
		v, err := parseInt()
		if err != nil {
			return err
		}
		o.CompactionThroughput = v
	case "hbase.wal.durability", "hbase.region.durability":
		d, err := wal.ParseDurability(value)
		if err != nil {
			return err
		}
		o.Durability = d
	default:
		return errors.Newf("region: unknown property %q", key)
	}
	return nil
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
	if o.Durability == wal.UseDefault {
		o.Durability = wal.SyncWAL
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.FS == nil {
		o.FS = vfs.Default
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
