package hbasepb

import (
	"bytes"
	"testing"

	"google.golang.org/protobuf/proto"
)

func TestPBMagic(t *testing.T) {
	m := &TableState{State: TableState_DISABLED.Enum()}
	b, err := AppendPB([]byte("x"), m)
	if err != nil {
		t.Fatal(err)
	}
	// "PBUF", then field 1 (state) varint 1 (DISABLED).
	if want := []byte("xPBUF\x08\x01"); !bytes.Equal(b, want) {
		t.Fatalf("AppendPB = %q, want %q", b, want)
	}
	var got TableState
	if err := ParsePB(b[1:], &got); err != nil || !proto.Equal(&got, m) {
		t.Fatalf("ParsePB = %v, %v", &got, err)
	}
	for _, bad := range [][]byte{nil, []byte("PBU"), []byte("\x08\x01"), []byte("PBUF\x08")} {
		if err := ParsePB(bad, &got); err == nil {
			t.Errorf("ParsePB(%q) succeeded", bad)
		}
	}
	// A required field left unset is an encoding error, and b is kept.
	if b, err := AppendPB([]byte("x"), &TableState{}); err == nil || string(b) != "x" {
		t.Errorf("AppendPB without the required state = %q, %v", b, err)
	}
}
