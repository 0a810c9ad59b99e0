// Package ipc is HBase's client RPC protocol on a byte stream: the
// connection preamble and header, length-prefixed request and response
// frames carrying varint-delimited protobuf messages, cellblocks in
// KeyValueCodec form (optionally compressed with Hadoop's SnappyCodec
// framing), and exceptions carried by Java class name, which clients key on.
//
// A connection starts with the 6-byte preamble "HBas", version 0 and the
// SIMPLE auth byte, then a 4-byte big-endian length and a ConnectionHeader.
// The server sends nothing back. After that each request is
//
//	u32 total | varint+RequestHeader | varint+param | cellblock
//
// and each response
//
//	u32 total | varint+ResponseHeader | varint+response | cellblock
//
// where the response message is absent when the header carries an
// exception, and a cellblock is present when the header's cell_block_meta
// says so. Responses may come in any order; call ids match them up.
//
// Server serves connections with a Handler; ClientConn is the client end,
// used by package client and the tests. Both share the framing functions.
package ipc
