package hbasepb

import (
	"bytes"

	"github.com/cockroachdb/errors"
	"github.com/regionkv/regionkv/encoding"
	"google.golang.org/protobuf/proto"
)

// AppendPB appends m to b as HBase stores a message in an hbase:meta cell or
// a znode: encoding.PBMagic, then the message (HBase's
// ProtobufUtil.prependPBMagic). Encoding fails only for a message with an
// unset required field.
func AppendPB(b []byte, m proto.Message) ([]byte, error) {
	out, err := proto.MarshalOptions{}.MarshalAppend(append(b, encoding.PBMagic...), m)
	if err != nil {
		return b, errors.Wrapf(err, "hbasepb: encoding %T", m)
	}
	return out, nil
}

// ParsePB decodes into m a value AppendPB wrote. A value without the magic is
// an error: it would be one of the Writables HBase stored before protobuf,
// which we do not read.
func ParsePB(b []byte, m proto.Message) error {
	if !bytes.HasPrefix(b, []byte(encoding.PBMagic)) {
		return errors.Newf("hbasepb: %d-byte value for %T lacks the %s magic", len(b), m, encoding.PBMagic)
	}
	if err := proto.Unmarshal(b[len(encoding.PBMagic):], m); err != nil {
		return errors.Wrapf(err, "hbasepb: decoding %T", m)
	}
	return nil
}
