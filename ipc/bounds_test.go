package ipc

import (
	"bytes"
	"encoding/binary"
	"net"
	"testing"
	"time"

	"github.com/regionkv/regionkv/hbasepb"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

// TestCallQueueBytes: requests being read count against
// hbase.ipc.server.max.callqueue.size over every connection. Peers that
// announce large requests and send them slowly hold the budget, not the
// server's memory; a request past it is read into nothing and answered
// with CallQueueTooBigException, and its connection goes on.
func TestCallQueueBytes(t *testing.T) {
	ts := startServer(t, func(s *Server) { s.MaxQueueBytes = 1 << 20 })
	// Two peers announce 400 KiB each and send one byte.
	var slow []net.Conn
	for i := 0; i < 2; i++ {
		nc := rawConn(t, ts.addr, "ClientService", false)
		_, err := nc.Write(append(binary.BigEndian.AppendUint32(nil, 400<<10), 0))
		require.NoError(t, err)
		slow = append(slow, nc)
	}
	require.Eventually(t, func() bool { return ts.s.Stats().QueuedBytes == 800<<10 }, 5*time.Second, 5*time.Millisecond)
	// A 300 KiB request does not fit in what is left.
	nc := rawConn(t, ts.addr, "ClientService", false)
	big := bytes.Repeat([]byte("x"), 300<<10)
	req, err := AppendRequest(nil, &hbasepb.RequestHeader{CallId: proto.Uint32(7), MethodName: proto.String("Echo")}, wrapperspb.Bytes(big), nil)
	require.NoError(t, err)
	_, err = nc.Write(req)
	require.NoError(t, err)
	r := readResponse(t, nc)
	require.EqualValues(t, 7, r.Header.GetCallId())
	require.Equal(t, ClassCallQueueTooBigException, r.Header.GetException().GetExceptionClassName())
	require.EqualValues(t, 1, ts.s.Stats().QueueRejected)
	// A small one on the same connection is served.
	small, err := AppendRequest(nil, &hbasepb.RequestHeader{CallId: proto.Uint32(8), MethodName: proto.String("Echo")}, wrapperspb.Bytes([]byte("v")), nil)
	require.NoError(t, err)
	_, err = nc.Write(small)
	require.NoError(t, err)
	r = readResponse(t, nc)
	require.EqualValues(t, 8, r.Header.GetCallId())
	require.Nil(t, r.Header.Exception)
	// The slow peers leave; their budget comes back, and the big request fits.
	for _, c := range slow {
		c.Close()
	}
	require.Eventually(t, func() bool { return ts.s.Stats().QueuedBytes == 0 }, 5*time.Second, 5*time.Millisecond)
	req, err = AppendRequest(nil, &hbasepb.RequestHeader{CallId: proto.Uint32(9), MethodName: proto.String("Echo")}, wrapperspb.Bytes(big), nil)
	require.NoError(t, err)
	_, err = nc.Write(req)
	require.NoError(t, err)
	r = readResponse(t, nc)
	require.EqualValues(t, 9, r.Header.GetCallId())
	require.Nil(t, r.Header.Exception)
	require.Eventually(t, func() bool { return ts.s.Stats().QueuedBytes == 0 }, 5*time.Second, 5*time.Millisecond,
		"a served call gives its bytes back")
}

// TestMaxConnections: connections over the limit are closed at once; the
// ones under it are served.
func TestMaxConnections(t *testing.T) {
	ts := startServer(t, func(s *Server) { s.MaxConnections = 2 })
	a := dial(t, ts.addr, DialOptions{})
	b := dial(t, ts.addr, DialOptions{})
	echo(t, a, "a", nil)
	echo(t, b, "b", nil)
	nc, err := net.Dial("tcp", ts.addr)
	require.NoError(t, err)
	defer nc.Close()
	expectClosed(t, nc)
	require.EqualValues(t, 1, ts.s.Stats().ConnsRefused)
	b.Close()
	require.Eventually(t, func() bool { return ts.s.Stats().OpenConnections == 1 }, 5*time.Second, 5*time.Millisecond)
	c := dial(t, ts.addr, DialOptions{})
	echo(t, c, "c", nil)
}

// TestIdleThreshold: as HBase's hbase.ipc.client.idlethreshold, idle
// connections are closed only while more than the threshold are open.
func TestIdleThreshold(t *testing.T) {
	ts := startServer(t, func(s *Server) { s.IdleTimeout = 100 * time.Millisecond; s.IdleThreshold = 2 })
	a := dial(t, ts.addr, DialOptions{})
	b := dial(t, ts.addr, DialOptions{})
	echo(t, a, "a", nil)
	echo(t, b, "b", nil)
	time.Sleep(400 * time.Millisecond)
	require.EqualValues(t, 2, ts.s.Stats().OpenConnections, "at the threshold nothing is closed")
	require.Zero(t, ts.s.Stats().IdleClosed)
	c := dial(t, ts.addr, DialOptions{})
	echo(t, c, "c", nil)
	require.Eventually(t, func() bool { return ts.s.Stats().IdleClosed >= 2 }, 5*time.Second, 10*time.Millisecond,
		"above it, the idle ones go")
}

// TestWriteTimeout: a peer that sends requests but never reads the answers
// loses its connection once a write has waited WriteTimeout; others are
// served meanwhile.
func TestWriteTimeout(t *testing.T) {
	ts := startServer(t, func(s *Server) { s.WriteTimeout = 200 * time.Millisecond })
	nc := rawConn(t, ts.addr, "ClientService", false)
	nc.(*net.TCPConn).SetReadBuffer(4 << 10)
	val := bytes.Repeat([]byte("y"), 1<<20)
	go func() {
		for i := 0; i < 64; i++ {
			req, _ := AppendRequest(nil, &hbasepb.RequestHeader{CallId: proto.Uint32(uint32(i)), MethodName: proto.String("Echo")}, wrapperspb.Bytes(val), nil)
			if _, err := nc.Write(req); err != nil {
				return
			}
		}
	}()
	good := dial(t, ts.addr, DialOptions{})
	echo(t, good, "served", nil)
	require.Equal(t, 2, ts.s.Stats().OpenConnections)
	require.Eventually(t, func() bool { return ts.s.Stats().OpenConnections == 1 }, 10*time.Second, 20*time.Millisecond,
		"the stalled reader's connection is closed")
	echo(t, good, "still served", nil)
	nc.Close()
}
