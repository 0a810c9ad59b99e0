package region

import (
	"crypto/rand"
	"encoding/hex"
	"strconv"
	"strings"

	"github.com/regionkv/regionkv/encoding"
)

// Store file names. A flush or a compaction names its file with 32 random
// hex digits, followed by storeFileSuffix unless Options.HBaseFileNames
// (HBase's own names have no suffix); a bulk load names the file it adds
// <32 hex digits>_SeqId_<N>_, as HBase's HRegionFileSystem.bulkLoadStoreFile
// does, where N is the sequence id the load gave it (HBase's
// StoreFileInfo reads that suffix, and so does openFile). Anything else in a
// store directory (a crash's leftovers) is ignored.
const (
	storeFileSuffix = ".hfile"
	bulkSeqPrefix   = "_SeqId_"
)

// newFileName returns the name of a new flushed or compacted store file.
func (s *Store) newFileName() string {
	if s.hbaseNames {
		return randomHex()
	}
	return randomHex() + storeFileSuffix
}

// bulkLoadFileName returns the name of a new bulk-loaded store file with
// sequence id seq.
func bulkLoadFileName(seq encoding.SeqNum) string {
	return randomHex() + bulkSeqPrefix + strconv.FormatUint(uint64(seq), 10) + "_"
}

func randomHex() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// parseStoreFileName reports whether name is a store file's and, for a
// bulk-loaded one, the sequence id in its name (0 for others).
func parseStoreFileName(name string) (bulkSeq encoding.SeqNum, ok bool) {
	if hexName := strings.TrimSuffix(name, storeFileSuffix); len(hexName) == 32 && isHex(hexName) {
		return 0, true
	}
	i := strings.LastIndex(name, bulkSeqPrefix)
	if i <= 0 || !isHex(name[:i]) || !strings.HasSuffix(name, "_") {
		return 0, false
	}
	digits := name[i+len(bulkSeqPrefix) : len(name)-1]
	n, err := strconv.ParseUint(digits, 10, 63)
	if err != nil || n == 0 {
		return 0, false
	}
	return encoding.SeqNum(n), true
}

func isHex(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}
