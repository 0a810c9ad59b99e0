package bulkload

import (
	"bufio"
	"bytes"
	"log/slog"
	"os"
	"strings"

	"github.com/cockroachdb/errors"
	"github.com/regionkv/regionkv/encoding"
	"github.com/regionkv/regionkv/hfile"
)

// derivedFileInfo are the file info entries the writer derives from the
// cells it is given, or that describe the source store (a compaction's
// inputs): a half keeps its own, not the whole file's.
var derivedFileInfo = map[string]bool{
	hfile.FileInfoDataBlockEnc:    true,
	hfile.FileInfoKeyValueVersion: true,
	hfile.FileInfoMaxMemstoreTS:   true,
	hfile.FileInfoTimeRange:       true,
	hfile.FileInfoEarliestPutTS:   true,
	hfile.FileInfoBloomType:       true,
	hfile.FileInfoLastBloomKey:    true,
	hfile.FileInfoDeleteFamilyCnt: true,
	"BLOOM_FILTER_PARAM":          true,
	"COMPACTION_EVENT_KEY":        true,
}

// SplitHFile writes the cells of the HFile at src whose rows are below key
// to bottom and the others to top (HBase's copyHFileHalf for the two halves
// of a file split at a region boundary). The halves keep src's compression,
// data block encoding, bloom filter type, tags and comparator, and its file
// info but for what the writer derives from the cells; blockSize is the
// family's BLOCKSIZE (a file does not record its own), 0 for the default.
// It fails if either half would be empty.
func SplitHFile(src string, key []byte, bottom, top string, blockSize int) (err error) {
	r, err := hfile.OpenFile(src, hfile.ReaderOptions{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		return errors.Wrap(err, "bulkload: splitting")
	}
	defer r.Close()
	o := hfile.WriterOptions{
		BlockSize:    blockSize,
		Encoding:     r.Encoding(),
		Compression:  r.Trailer().CompressionCodec,
		BloomType:    r.BloomType(),
		Comparer:     r.Comparer(),
		IncludesTags: r.Format().IncludesTags,
		ExcludeMvcc:  !r.Format().IncludesMvcc,
	}
	halves := [2]*half{}
	for i, p := range []string{bottom, top} {
		if halves[i], err = newHalf(p, o, r.FileInfo()); err != nil {
			return err
		}
	}
	defer func() {
		for _, h := range halves {
			if cerr := h.abandon(); err == nil {
				err = cerr
			}
		}
		if err != nil {
			os.Remove(bottom)
			os.Remove(top)
		}
	}()
	it := r.NewIterator(false)
	defer it.Close()
	var kv encoding.KeyValue
	ok, err := it.First()
	for ; ok && err == nil; ok, err = it.Next() {
		it.KeyValue(&kv)
		h := halves[0]
		if bytes.Compare(kv.Row, key) >= 0 {
			h = halves[1]
		}
		if err := h.w.Append(&kv); err != nil {
			return errors.Wrapf(err, "bulkload: splitting %s", src)
		}
	}
	if err != nil {
		return errors.Wrapf(err, "bulkload: splitting %s", src)
	}
	for i, h := range halves {
		if h.w.EntryCount() == 0 {
			return errors.Newf("bulkload: splitting %s at %s leaves the %s half empty", src, encoding.FormatBytes(key), [2]string{"bottom", "top"}[i])
		}
		if err := h.finish(); err != nil {
			return errors.Wrapf(err, "bulkload: splitting %s", src)
		}
	}
	return nil
}

// half is one output of SplitHFile.
type half struct {
	f  *os.File
	bw *bufio.Writer
	w  *hfile.Writer
}

func newHalf(path string, o hfile.WriterOptions, info hfile.FileInfo) (*half, error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, errors.Wrap(err, "bulkload: splitting")
	}
	h := &half{f: f, bw: bufio.NewWriterSize(f, 1<<20)}
	if h.w, err = hfile.NewWriter(h.bw, o); err != nil {
		f.Close()
		return nil, errors.Wrap(err, "bulkload: splitting")
	}
	for _, k := range info.Keys() {
		if strings.HasPrefix(k, "hfile.") || derivedFileInfo[k] {
			continue
		}
		if err := h.w.SetFileInfo(k, info[k]); err != nil {
			f.Close()
			return nil, errors.Wrap(err, "bulkload: splitting")
		}
	}
	return h, nil
}

func (h *half) finish() error {
	if err := h.w.Close(); err != nil {
		return err
	}
	if err := h.bw.Flush(); err != nil {
		return err
	}
	if err := h.f.Sync(); err != nil {
		return err
	}
	err := h.f.Close()
	h.f = nil
	return err
}

// abandon closes the file if finish did not.
func (h *half) abandon() error {
	if h == nil || h.f == nil {
		return nil
	}
	return h.f.Close()
}
