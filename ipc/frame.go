package ipc

import (
	"encoding/binary"
	"io"
	"slices"

	"github.com/cockroachdb/errors"
	"github.com/regionkv/regionkv/hbasepb"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
)

// Connection constants.
const (
	// Magic opens every connection.
	Magic = "HBas"
	// Version is the RPC version byte after Magic.
	Version = 0
	// AuthSimple is the SIMPLE (no SASL) auth byte.
	AuthSimple = 0x50
	// KeyValueCodecClass and KeyValueCodecWithTagsClass are the cellblock
	// codecs a connection header may name.
	KeyValueCodecClass         = "org.apache.hadoop.hbase.codec.KeyValueCodec"
	KeyValueCodecWithTagsClass = "org.apache.hadoop.hbase.codec.KeyValueCodecWithTags"
	// SnappyCodecClass is the one cellblock compressor we support.
	SnappyCodecClass = "org.apache.hadoop.io.compress.SnappyCodec"
	// DefaultMaxRequestSize is hbase.ipc.max.request.size's default.
	DefaultMaxRequestSize = 256 << 20
	// maxHeaderSize bounds the ConnectionHeader (HBase allows no more).
	maxHeaderSize = 64 << 10
)

// Preamble returns the 6 bytes that open a connection.
func Preamble() []byte { return []byte{'H', 'B', 'a', 's', Version, AuthSimple} }

// ErrBadPreamble is returned (marked) by ReadPreamble for anything but
// HBase's preamble with SIMPLE auth.
var ErrBadPreamble = errors.New("ipc: bad connection preamble")

// ErrFrameTooBig is returned (marked) when a frame is larger than allowed.
var ErrFrameTooBig = errors.New("ipc: frame too big")

// ReadPreamble reads and checks the preamble, returning the 6 bytes read.
func ReadPreamble(r io.Reader) ([6]byte, error) {
	var p [6]byte
	if _, err := io.ReadFull(r, p[:]); err != nil {
		return p, errors.Wrap(err, "ipc: reading preamble")
	}
	if string(p[:4]) != Magic {
		return p, errors.Mark(errors.Newf("ipc: expected HEADER=HBas but received HEADER=%q", p[:4]), ErrBadPreamble)
	}
	if p[4] != Version {
		return p, errors.Mark(errors.Newf("ipc: unsupported RPC version %d", p[4]), ErrBadPreamble)
	}
	if p[5] != AuthSimple {
		return p, errors.Mark(errors.Newf("ipc: unsupported auth method %d (only SIMPLE, 0x50)", p[5]), ErrBadPreamble)
	}
	return p, nil
}

// ReadFrame reads one u32-length-prefixed frame into buf (grown as needed)
// and returns it. A length above max is an error marked ErrFrameTooBig,
// returned with the length and without reading the body.
func ReadFrame(r io.Reader, max int, buf []byte) ([]byte, uint32, error) {
	// The length is read into buf when it has room: a local array would
	// escape to the heap through the io.Reader.
	var l []byte
	if cap(buf) >= 4 {
		l = buf[:4]
	} else {
		l = make([]byte, 4)
	}
	if _, err := io.ReadFull(r, l); err != nil {
		return buf, 0, err
	}
	n := binary.BigEndian.Uint32(l)
	if uint64(n) > uint64(max) {
		return buf, n, errors.Mark(errors.Newf("ipc: frame of %d bytes exceeds the limit of %d", n, max), ErrFrameTooBig)
	}
	if cap(buf) >= int(n) || n <= frameReadChunk {
		if cap(buf) < int(n) {
			buf = make([]byte, n)
		}
		buf = buf[:n]
		if _, err := io.ReadFull(r, buf); err != nil {
			return buf, n, errors.Wrapf(err, "ipc: reading frame of %d bytes", n)
		}
		return buf, n, nil
	}
	// A large frame is read in chunks, growing buf as its bytes arrive, so
	// a peer cannot make us allocate max bytes by sending 4 bytes of length.
	buf = buf[:0]
	for len(buf) < int(n) {
		k := min(int(n)-len(buf), frameReadChunk)
		buf = append(buf, make([]byte, k)...)
		if _, err := io.ReadFull(r, buf[len(buf)-k:]); err != nil {
			return buf, n, errors.Wrapf(err, "ipc: reading frame of %d bytes", n)
		}
	}
	return buf, n, nil
}

// frameReadChunk is the most ReadFrame allocates ahead of the bytes read.
const frameReadChunk = 1 << 20

// ReadConnectionHeader reads the length-prefixed ConnectionHeader.
func ReadConnectionHeader(r io.Reader) (*hbasepb.ConnectionHeader, error) {
	b, _, err := ReadFrame(r, maxHeaderSize, nil)
	if err != nil {
		return nil, errors.Wrap(err, "ipc: reading connection header")
	}
	h := &hbasepb.ConnectionHeader{}
	if err := proto.Unmarshal(b, h); err != nil {
		return nil, errors.Wrap(err, "ipc: decoding connection header")
	}
	return h, nil
}

// AppendConnectionHeader appends the preamble and the framed header.
func AppendConnectionHeader(dst []byte, h *hbasepb.ConnectionHeader) ([]byte, error) {
	dst = append(dst, Preamble()...)
	start := len(dst)
	dst = append(dst, 0, 0, 0, 0)
	dst, err := proto.MarshalOptions{}.MarshalAppend(dst, h)
	if err != nil {
		return nil, errors.Wrap(err, "ipc: encoding connection header")
	}
	binary.BigEndian.PutUint32(dst[start:], uint32(len(dst)-start-4))
	return dst, nil
}

// nextDelimited splits a varint-length-delimited message off b.
func nextDelimited(b []byte, what string) (msg, rest []byte, err error) {
	n, k := protowire.ConsumeVarint(b)
	if k < 0 {
		return nil, nil, errors.Newf("ipc: bad varint length of %s", what)
	}
	if n > uint64(len(b)-k) {
		return nil, nil, errors.Newf("ipc: %s of %d bytes overruns the frame (%d left)", what, n, len(b)-k)
	}
	return b[k : k+int(n)], b[k+int(n):], nil
}

func appendDelimited(dst []byte, m proto.Message) ([]byte, error) {
	size := proto.Size(m)
	dst = protowire.AppendVarint(dst, uint64(size))
	return proto.MarshalOptions{UseCachedSize: true}.MarshalAppend(dst, m)
}

// Request is a decoded request frame. Param and CellBlock alias the frame.
// The header's fields may point into the Request itself, so a Request is
// reused in place, never copied.
type Request struct {
	Header    hbasepb.RequestHeader
	Param     []byte
	CellBlock []byte

	// What the header's fields point to when decodeHeader fills them, so
	// that decoding a common header allocates nothing.
	callID, priority, timeout, cbLen uint32
	requestParam                     bool
	method                           string
	cbMeta                           hbasepb.CellBlockMeta
}

// ParseRequest decodes a request frame (without its length prefix).
func ParseRequest(frame []byte, req *Request) error {
	return parseRequest(frame, req, nil)
}

// parseRequest is ParseRequest taking method names from names (if not nil).
func parseRequest(frame []byte, req *Request, names *methodNames) error {
	h, rest, err := nextDelimited(frame, "request header")
	if err != nil {
		return err
	}
	if !decodeHeader(h, req, names) {
		proto.Reset(&req.Header)
		if err := proto.Unmarshal(h, &req.Header); err != nil {
			return errors.Wrap(err, "ipc: decoding request header")
		}
	}
	req.Param, req.CellBlock = nil, nil
	if req.Header.GetRequestParam() {
		if req.Param, rest, err = nextDelimited(rest, "request param"); err != nil {
			return err
		}
	}
	if m := req.Header.GetCellBlockMeta(); m != nil && m.GetLength() > 0 {
		if int(m.GetLength()) != len(rest) {
			return errors.Newf("ipc: cellblock meta says %d bytes, frame has %d", m.GetLength(), len(rest))
		}
		req.CellBlock = rest
	} else if len(rest) != 0 {
		return errors.Newf("ipc: %d stray bytes after the request", len(rest))
	}
	return nil
}

// decodeHeader decodes a RequestHeader of the shape every client sends
// (call id, method, request_param, cell_block_meta, priority, timeout, each
// at most once, well formed) into req.Header, pointing its fields into req;
// proto.Unmarshal allocates every one of them. It returns false, leaving
// the header to proto.Unmarshal, for anything else: other fields (trace
// info, attributes), repeated or mistyped fields, malformed bytes.
func decodeHeader(b []byte, req *Request, names *methodNames) bool {
	h := &req.Header
	proto.Reset(h)
	var seen uint8
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 || num < 1 || num > 7 || num == 2 || seen&(1<<num) != 0 {
			return false
		}
		seen |= 1 << num
		b = b[n:]
		if num == 3 || num == 5 {
			if typ != protowire.BytesType {
				return false
			}
			v, n := protowire.ConsumeBytes(b)
			if n < 0 {
				return false
			}
			b = b[n:]
			if num == 3 {
				req.method = names.intern(v)
				h.MethodName = &req.method
				continue
			}
			if !decodeCellBlockMeta(v, &req.cbMeta, &req.cbLen) {
				return false
			}
			h.CellBlockMeta = &req.cbMeta
			continue
		}
		if typ != protowire.VarintType {
			return false
		}
		v, n := protowire.ConsumeVarint(b)
		if n < 0 {
			return false
		}
		b = b[n:]
		switch num {
		case 1:
			req.callID = uint32(v)
			h.CallId = &req.callID
		case 4:
			req.requestParam = v != 0
			h.RequestParam = &req.requestParam
		case 6:
			req.priority = uint32(v)
			h.Priority = &req.priority
		case 7:
			req.timeout = uint32(v)
			h.Timeout = &req.timeout
		}
	}
	return true
}

// decodeCellBlockMeta decodes a CellBlockMeta of at most its one field,
// length (1, varint), into m, pointing it to length.
func decodeCellBlockMeta(b []byte, m *hbasepb.CellBlockMeta, length *uint32) bool {
	m.Reset()
	if len(b) == 0 {
		return true
	}
	if len(b) < 2 || b[0] != byte(protowire.EncodeTag(1, protowire.VarintType)) {
		return false
	}
	l, n := protowire.ConsumeVarint(b[1:])
	if n != len(b)-1 {
		return false
	}
	*length = uint32(l)
	m.Length = length
	return true
}

// decodeResponseHeader is decodeHeader for the header of an answer: a call
// id and a cell_block_meta, each at most once. An exception, or anything
// else, is left to proto.Unmarshal.
func decodeResponseHeader(b []byte, resp *Response) bool {
	h := &resp.Header
	proto.Reset(h)
	var seen uint8
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 || (num != 1 && num != 3) || seen&(1<<num) != 0 {
			return false
		}
		seen |= 1 << num
		b = b[n:]
		if num == 1 {
			if typ != protowire.VarintType {
				return false
			}
			v, n := protowire.ConsumeVarint(b)
			if n < 0 {
				return false
			}
			b = b[n:]
			resp.callID = uint32(v)
			h.CallId = &resp.callID
			continue
		}
		if typ != protowire.BytesType {
			return false
		}
		v, n := protowire.ConsumeBytes(b)
		if n < 0 || !decodeCellBlockMeta(v, &resp.cbMeta, &resp.cbLen) {
			return false
		}
		b = b[n:]
		h.CellBlockMeta = &resp.cbMeta
	}
	return true
}

// methodNames interns the method names of one connection's requests: a
// client calls a handful of methods, so each name is allocated once.
type methodNames map[string]string

// maxMethodNames bounds a connection's interned names: a client sending
// ever new names gets each allocated instead.
const maxMethodNames = 64

func (m *methodNames) intern(b []byte) string {
	if m == nil {
		return string(b)
	}
	if s, ok := (*m)[string(b)]; ok {
		return s
	}
	s := string(b)
	if *m == nil {
		*m = methodNames{}
	}
	if len(*m) < maxMethodNames {
		(*m)[s] = s
	}
	return s
}

// AppendRequest appends a framed request.
func AppendRequest(dst []byte, h *hbasepb.RequestHeader, param proto.Message, cellBlock []byte) ([]byte, error) {
	start := len(dst)
	dst = append(dst, 0, 0, 0, 0)
	if param != nil {
		h.RequestParam = proto.Bool(true)
	}
	if len(cellBlock) > 0 {
		h.CellBlockMeta = &hbasepb.CellBlockMeta{Length: proto.Uint32(uint32(len(cellBlock)))}
	}
	var err error
	if dst, err = appendDelimited(dst, h); err != nil {
		return nil, errors.Wrap(err, "ipc: encoding request header")
	}
	if param != nil {
		if dst, err = appendDelimited(dst, param); err != nil {
			return nil, errors.Wrap(err, "ipc: encoding request")
		}
	}
	dst = append(dst, cellBlock...)
	binary.BigEndian.PutUint32(dst[start:], uint32(len(dst)-start-4))
	return dst, nil
}

// Response is a decoded response frame. Param and CellBlock alias the frame.
// The header's fields may point into the Response itself, so a Response is
// reused in place, never copied.
type Response struct {
	Header    hbasepb.ResponseHeader
	Param     []byte
	CellBlock []byte

	// What the header's fields point to when decodeResponseHeader fills them.
	callID, cbLen uint32
	cbMeta        hbasepb.CellBlockMeta
}

// ParseResponse decodes a response frame (without its length prefix). As
// gohbase does, the cellblock is the last cell_block_meta.length bytes.
func ParseResponse(frame []byte, resp *Response) error {
	h, rest, err := nextDelimited(frame, "response header")
	if err != nil {
		return err
	}
	if !decodeResponseHeader(h, resp) {
		proto.Reset(&resp.Header)
		if err := proto.Unmarshal(h, &resp.Header); err != nil {
			return errors.Wrap(err, "ipc: decoding response header")
		}
	}
	resp.Param, resp.CellBlock = nil, nil
	if m := resp.Header.GetCellBlockMeta(); m != nil && m.GetLength() > 0 {
		n := int(m.GetLength())
		if n > len(rest) {
			return errors.Newf("ipc: cellblock meta says %d bytes, frame has %d", n, len(rest))
		}
		resp.CellBlock = rest[len(rest)-n:]
		rest = rest[:len(rest)-n]
	}
	if resp.Header.Exception != nil || len(rest) == 0 {
		return nil
	}
	resp.Param, _, err = nextDelimited(rest, "response")
	return err
}

// AppendResponse appends a framed response: the message and cellblock, or
// the exception when exc is not nil.
func AppendResponse(dst []byte, callID uint32, msg proto.Message, cellBlock []byte, exc *Exception) ([]byte, error) {
	start := len(dst)
	if exc != nil {
		dst = append(dst, 0, 0, 0, 0)
		h := &hbasepb.ResponseHeader{CallId: proto.Uint32(callID), Exception: &hbasepb.ExceptionResponse{
			ExceptionClassName: proto.String(exc.Class),
			StackTrace:         proto.String(exc.Message),
			DoNotRetry:         proto.Bool(exc.DoNotRetry()),
		}}
		var err error
		if dst, err = appendDelimited(dst, h); err != nil {
			return nil, errors.Wrap(err, "ipc: encoding response header")
		}
		binary.BigEndian.PutUint32(dst[start:], uint32(len(dst)-start-4))
		return dst, nil
	}
	msgSize := 0
	if msg != nil {
		msgSize = proto.Size(msg)
	}
	// The header of an answer is a call id and a cellblock length: written
	// by hand (the bytes proto.Marshal writes, fields in order) it costs no
	// header message, and dst grows once for the whole frame.
	hdrSize := 1 + protowire.SizeVarint(uint64(callID))
	if len(cellBlock) > 0 {
		hdrSize += 3 + protowire.SizeVarint(uint64(len(cellBlock)))
	}
	dst = slices.Grow(dst, 4+1+hdrSize+binary.MaxVarintLen32+msgSize+len(cellBlock))
	dst = append(dst, 0, 0, 0, 0)
	dst = protowire.AppendVarint(dst, uint64(hdrSize))
	dst = protowire.AppendVarint(dst, protowire.EncodeTag(1, protowire.VarintType))
	dst = protowire.AppendVarint(dst, uint64(callID))
	if len(cellBlock) > 0 {
		dst = protowire.AppendVarint(dst, protowire.EncodeTag(3, protowire.BytesType))
		dst = protowire.AppendVarint(dst, uint64(1+protowire.SizeVarint(uint64(len(cellBlock)))))
		dst = protowire.AppendVarint(dst, protowire.EncodeTag(1, protowire.VarintType))
		dst = protowire.AppendVarint(dst, uint64(len(cellBlock)))
	}
	if msg != nil {
		dst = protowire.AppendVarint(dst, uint64(msgSize))
		var err error
		if dst, err = (proto.MarshalOptions{UseCachedSize: true}).MarshalAppend(dst, msg); err != nil {
			return nil, errors.Wrap(err, "ipc: encoding response")
		}
	}
	dst = append(dst, cellBlock...)
	binary.BigEndian.PutUint32(dst[start:], uint32(len(dst)-start-4))
	return dst, nil
}

// peekCallID extracts the call id from the first bytes of a request frame,
// for answering a request whose body is not read (too big).
func peekCallID(prefix []byte) (uint32, bool) {
	h, _, err := nextDelimited(prefix, "request header")
	if err != nil {
		return 0, false
	}
	var rh hbasepb.RequestHeader
	if err := (proto.UnmarshalOptions{AllowPartial: true}).Unmarshal(h, &rh); err != nil || rh.CallId == nil {
		return 0, false
	}
	return rh.GetCallId(), true
}
