package encoding

// PBMagic is HBase's ProtobufMagic.PB_MAGIC: the 4 bytes HBase writes before
// a protobuf message it stores rather than sends, so that readers can tell it
// from the Writable encodings older versions stored. It starts the HFile file
// info block and some file-info values (COMPACTION_EVENT_KEY), hbase:meta
// cells and znode payloads, and is part of both the on-disk and the wire
// format.
//
// It lives here, at the bottom, because both sides need it: hfile and region
// write those protobufs by hand with protowire and must not depend on the
// RPC messages, and hbasepb.AppendPB and hbasepb.ParsePB frame generated
// messages with it for server and client.
const PBMagic = "PBUF"
