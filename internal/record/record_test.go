package record

import (
	"bytes"
	"encoding/binary"
	"io"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var buf []byte
	var payloads [][]byte
	for i := 0; i < 200; i++ {
		p := make([]byte, 1+rng.IntN(100000>>(rng.IntN(10))))
		for j := range p {
			p[j] = byte(rng.Uint32())
		}
		payloads = append(payloads, p)
		var err error
		buf, err = Append(buf, p)
		require.NoError(t, err)
	}
	r := NewReader(bytes.NewReader(buf), 0, int64(len(buf)))
	off := int64(0)
	for i, want := range payloads {
		require.Equal(t, off, r.Offset())
		got, err := r.Next()
		require.NoError(t, err, "record %d", i)
		require.Equal(t, want, got)
		off += HeaderSize + int64(len(want))
		// Decode agrees with the Reader.
		p, n, err := Decode(buf[off-HeaderSize-int64(len(want)):])
		require.NoError(t, err)
		require.Equal(t, want, p)
		require.Equal(t, HeaderSize+len(want), n)
	}
	_, err := r.Next()
	require.Equal(t, io.EOF, err)
}

func TestFinishRejectsEmpty(t *testing.T) {
	buf, start := Start([]byte("x"))
	buf, err := Finish(buf, start)
	require.Error(t, err)
	require.Equal(t, []byte("x"), buf)
}

func TestInvalidRecords(t *testing.T) {
	rec, err := Append(nil, []byte("hello, world"))
	require.NoError(t, err)
	cases := []struct {
		name string
		b    []byte
		want error
	}{
		{"short header", rec[:5], ErrTruncated},
		{"short payload", rec[:len(rec)-1], ErrTruncated},
		{"zeros", make([]byte, 32), ErrInvalidLength},
		{"huge length", binary.BigEndian.AppendUint32(nil, MaxPayloadSize+1), ErrTruncated},
	}
	huge := append(binary.BigEndian.AppendUint32(nil, MaxPayloadSize+1), make([]byte, 4)...)
	cases = append(cases, struct {
		name string
		b    []byte
		want error
	}{"huge length, full header", huge, ErrInvalidLength})
	for i := range rec {
		flipped := bytes.Clone(rec)
		flipped[i] ^= 0x10
		want := ErrChecksum
		if i < 4 {
			want = nil // any of the three: the length changed
		}
		cases = append(cases, struct {
			name string
			b    []byte
			want error
		}{"flip", flipped, want})
	}
	for _, c := range cases {
		_, _, err := Decode(c.b)
		require.True(t, IsInvalidRecord(err), "%s: %v", c.name, err)
		if c.want != nil {
			require.ErrorIs(t, err, c.want, c.name)
		}
		r := NewReader(bytes.NewReader(c.b), 0, int64(len(c.b)))
		_, err2 := r.Next()
		require.True(t, IsInvalidRecord(err2), "%s: %v", c.name, err2)
		// The Reader stays on the bad record.
		require.Equal(t, int64(0), r.Offset())
		_, err3 := r.Next()
		require.Equal(t, err2, err3)
	}
}

func TestMaskedChecksum(t *testing.T) {
	// A record whose payload is a record does not share its checksum.
	inner, err := Append(nil, []byte("inner"))
	require.NoError(t, err)
	outer, err := Append(nil, inner)
	require.NoError(t, err)
	require.NotEqual(t, outer[4:8], inner[4:8])
}

func TestFindValid(t *testing.T) {
	rec, err := Append(nil, []byte("payload"))
	require.NoError(t, err)
	b := append(make([]byte, 100), rec...)
	b = append(b, 1, 2, 3)
	off, ok := FindValid(b, 0, nil)
	require.True(t, ok)
	require.Equal(t, 100, off)
	_, ok = FindValid(b, 101, nil)
	require.False(t, ok)
	_, ok = FindValid(b, 0, func([]byte) bool { return false })
	require.False(t, ok)
}
