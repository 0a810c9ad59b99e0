package integration

import (
	enc "encoding/binary"
	"net"
	"testing"
	"time"

	"github.com/regionkv/regionkv/client"
	"github.com/regionkv/regionkv/hbasepb"
	"github.com/regionkv/regionkv/ipc"
	"google.golang.org/protobuf/proto"
)

// TestSlowAnnouncersRSS: 300 connections that each announce a 255 MiB
// request and send one byte of it (it held 385 MB before the call queue
// bound). With hbase.ipc.server.max.callqueue.size at its 1 GiB default,
// four are admitted and the rest wait to be refused; the server's resident
// memory stays small and it goes on serving.
func TestSlowAnnouncersRSS(t *testing.T) {
	p := startServer(t, "")
	c := newClient(t, p)
	createTable(t, c, client.TableDescriptor{Name: "slow", Families: fams("cf")})
	ctx := testCtx(t, time.Minute)
	before := rssKB(p.cmd.Process.Pid)
	var conns []net.Conn
	defer func() {
		for _, nc := range conns {
			nc.Close()
		}
	}()
	for i := 0; i < 300; i++ {
		nc, err := net.Dial("tcp", p.addr)
		if err != nil {
			t.Fatalf("connection %d: %v", i, err)
		}
		conns = append(conns, nc)
		hdr, err := ipc.AppendConnectionHeader(ipc.Preamble(), &hbasepb.ConnectionHeader{ServiceName: proto.String("ClientService"),
			UserInfo: &hbasepb.UserInformation{EffectiveUser: proto.String("root")}})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := nc.Write(append(enc.BigEndian.AppendUint32(hdr, 255<<20), 0)); err != nil {
			t.Fatalf("connection %d: %v", i, err)
		}
	}
	time.Sleep(2 * time.Second)
	after := rssKB(p.cmd.Process.Pid)
	if before == 0 || after == 0 {
		t.Fatal("cannot read the server's RSS (/proc/PID/status)")
	}
	grew := after - before
	t.Logf("RSS %d KiB before, %d KiB with 300 slow announcers (+%d KiB)", before, after, grew)
	if grew > 100<<10 {
		t.Fatalf("RSS grew by %d KiB, want < 100 MiB", grew)
	}
	if _, err := c.Mutate(ctx, client.NewPut("slow", []byte("r")).Add([]byte("cf"), []byte("q"), []byte("v"))); err != nil {
		t.Fatalf("a put while 300 peers stall: %v", err)
	}
}
