package client

import (
	"context"
	"time"

	"github.com/cockroachdb/errors"
	"github.com/regionkv/regionkv/hbasepb"
	"github.com/regionkv/regionkv/ipc"
	"google.golang.org/protobuf/proto"
)

// SnapshotType says what a snapshot took: HBase's SnapshotType.
type SnapshotType int

const (
	// SnapshotFlush flushes the table's memstores first, so the snapshot
	// holds every write acknowledged before it (HBase's default).
	SnapshotFlush SnapshotType = iota
	// SnapshotSkipFlush takes only what the store files hold: writes
	// still in the memstores are not in it.
	SnapshotSkipFlush
	// SnapshotDisabled is what the server records for a snapshot of a
	// disabled table (everything is in the store files).
	SnapshotDisabled
)

// String returns HBase's name of the type.
func (t SnapshotType) String() string {
	switch t {
	case SnapshotFlush:
		return "FLUSH"
	case SnapshotSkipFlush:
		return "SKIPFLUSH"
	case SnapshotDisabled:
		return "DISABLED"
	}
	return "SnapshotType(?)"
}

func (t SnapshotType) pb() *hbasepb.SnapshotDescription_Type {
	switch t {
	case SnapshotSkipFlush:
		return hbasepb.SnapshotDescription_SKIPFLUSH.Enum()
	case SnapshotDisabled:
		return hbasepb.SnapshotDescription_DISABLED.Enum()
	}
	return hbasepb.SnapshotDescription_FLUSH.Enum()
}

func snapshotTypeFromPB(t hbasepb.SnapshotDescription_Type) SnapshotType {
	switch t {
	case hbasepb.SnapshotDescription_SKIPFLUSH:
		return SnapshotSkipFlush
	case hbasepb.SnapshotDescription_DISABLED:
		return SnapshotDisabled
	}
	return SnapshotFlush
}

// SnapshotOptions are the optional parts of a snapshot request.
type SnapshotOptions struct {
	// Type is SnapshotFlush (the zero value) or SnapshotSkipFlush; a
	// disabled table's snapshot is SnapshotDisabled whatever is asked.
	Type SnapshotType
	// TTL, if positive, is how long the snapshot may be restored or cloned
	// (whole seconds, as HBase keeps it); after that the server refuses
	// with SnapshotTTLExpiredException.
	TTL time.Duration
}

// SnapshotInfo describes a completed snapshot: HBase's
// SnapshotDescription.
type SnapshotInfo struct {
	Name string
	// Table is the table it was taken of ("ns:table", or "table" in the
	// default namespace).
	Table        string
	CreationTime time.Time
	Type         SnapshotType
	Owner        string
	TTL          time.Duration // 0: no TTL
	// Version is the manifest format (2).
	Version int32
}

func snapshotInfoFromPB(d *hbasepb.SnapshotDescription) SnapshotInfo {
	return SnapshotInfo{Name: d.GetName(), Table: d.GetTable(), CreationTime: time.UnixMilli(d.GetCreationTime()),
		Type: snapshotTypeFromPB(d.GetType()), Owner: d.GetOwner(), TTL: time.Duration(d.GetTtl()) * time.Second,
		Version: d.GetVersion()}
}

// Snapshot takes a snapshot named name of table (HBase's Admin.snapshot)
// and waits until it is complete. opts may be nil (a FLUSH snapshot with
// no TTL). The name must be a legal table qualifier and unused: an
// existing one is refused with SnapshotExistsException, an unknown table
// with SnapshotCreationException.
//
// As HBase 2's client, it follows the procedure the master answers with
// (getProcedureResult), or, from a master that answers none (before
// HBase 2.5), polls IsSnapshotDone until the expected timeout.
func (c *Client) Snapshot(ctx context.Context, table, name string, opts *SnapshotOptions) error {
	if opts == nil {
		opts = &SnapshotOptions{}
	}
	op := "snapshot " + name + " of " + table
	d := &hbasepb.SnapshotDescription{Name: proto.String(name), Table: proto.String(normalizeTable(table)), Type: opts.Type.pb()}
	if opts.TTL > 0 {
		d.Ttl = proto.Int64(int64(opts.TTL / time.Second))
	}
	resp := &hbasepb.SnapshotResponse{}
	if err := c.masterCall(ctx, "Snapshot", &hbasepb.SnapshotRequest{Snapshot: d}, resp); err != nil {
		return errors.Wrapf(err, "client: %s", op)
	}
	if resp.ProcId != nil {
		return c.waitProcedure(ctx, op, uint64(resp.GetProcId()))
	}
	deadline := time.Now().Add(time.Duration(resp.GetExpectedTimeout()) * time.Millisecond)
	wait := 10 * time.Millisecond
	for {
		done, err := c.IsSnapshotDone(ctx, name)
		if err != nil || done {
			return errors.Wrapf(err, "client: %s", op)
		}
		if time.Now().After(deadline) {
			return errors.Wrapf(&ipc.Exception{Class: ipc.ClassSnapshotCreationException,
				Message: "Snapshot '" + name + "' wasn't completed in expectedTime"}, "client: %s", op)
		}
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return errors.Wrapf(ctx.Err(), "client: %s", op)
		}
		wait = min(2*wait, procPollMax)
	}
}

// IsSnapshotDone reports whether the snapshot name is complete (HBase's
// Admin.isSnapshotFinished). A snapshot neither running nor complete is
// an UnknownSnapshotException.
func (c *Client) IsSnapshotDone(ctx context.Context, name string) (bool, error) {
	resp := &hbasepb.IsSnapshotDoneResponse{}
	if err := c.masterCall(ctx, "IsSnapshotDone", &hbasepb.IsSnapshotDoneRequest{
		Snapshot: &hbasepb.SnapshotDescription{Name: proto.String(name)}}, resp); err != nil {
		return false, err
	}
	return resp.GetDone(), nil
}

// ListSnapshots returns the completed snapshots (HBase's
// Admin.listSnapshots), in the master's order (ours: oldest first).
func (c *Client) ListSnapshots(ctx context.Context) ([]SnapshotInfo, error) {
	resp := &hbasepb.GetCompletedSnapshotsResponse{}
	if err := c.masterCall(ctx, "GetCompletedSnapshots", &hbasepb.GetCompletedSnapshotsRequest{}, resp); err != nil {
		return nil, err
	}
	out := make([]SnapshotInfo, 0, len(resp.GetSnapshots()))
	for _, d := range resp.GetSnapshots() {
		out = append(out, snapshotInfoFromPB(d))
	}
	return out, nil
}

// DeleteSnapshot deletes a snapshot (HBase's Admin.deleteSnapshot); the
// tables it was taken of or cloned into are not touched. An unknown name
// is a SnapshotDoesNotExistException.
func (c *Client) DeleteSnapshot(ctx context.Context, name string) error {
	return errors.Wrapf(c.masterCall(ctx, "DeleteSnapshot", &hbasepb.DeleteSnapshotRequest{
		Snapshot: &hbasepb.SnapshotDescription{Name: proto.String(name)}}, &hbasepb.DeleteSnapshotResponse{}),
		"client: delete snapshot %s", name)
}

// RestoreSnapshot rolls the table a snapshot was taken of back to it
// (HBase's Admin.restoreSnapshot): its descriptor, regions and data become
// the snapshot's. As in HBase the table must be disabled
// (TableNotDisabledException otherwise) and stays disabled: enable it
// afterwards. If the table no longer exists, the snapshot is cloned into a
// new table of its name, enabled.
func (c *Client) RestoreSnapshot(ctx context.Context, name string) error {
	snaps, err := c.ListSnapshots(ctx)
	if err != nil {
		return errors.Wrapf(err, "client: restore snapshot %s", name)
	}
	for _, sn := range snaps {
		if sn.Name == name {
			return c.restoreOrClone(ctx, "restore snapshot "+name, name, sn.Table)
		}
	}
	return errors.Wrapf(&ipc.Exception{Class: ipc.ClassRestoreSnapshotException,
		Message: "Unable to find the table name for snapshot=" + name}, "client: restore snapshot %s", name)
}

// CloneSnapshot creates table from a snapshot (HBase's
// Admin.cloneSnapshot): the snapshot's descriptor, regions and data under
// a new name, enabled, sharing the snapshot's store files on the server
// (writes to the clone never reach the original, nor the original's to
// it). An existing table is refused with TableExistsException, as HBase's
// client refuses it.
func (c *Client) CloneSnapshot(ctx context.Context, name, table string) error {
	op := "clone snapshot " + name + " into " + table
	_, err := c.TableState(ctx, table)
	if err == nil {
		return errors.Wrapf(&ipc.Exception{Class: ipc.ClassTableExistsException, Message: table}, "client: %s", op)
	}
	if !IsException(err, ipc.ClassTableNotFoundException) {
		return errors.Wrapf(err, "client: %s", op)
	}
	return c.restoreOrClone(ctx, op, name, table)
}

// restoreOrClone sends RestoreSnapshot, which both HBase 2 calls send
// (the master restores into an existing table, clones into a new one),
// and waits for its procedure.
func (c *Client) restoreOrClone(ctx context.Context, op, name, table string) error {
	defer c.regions.invalidate(table)
	return c.runProcedure(ctx, op, "RestoreSnapshot", &hbasepb.RestoreSnapshotRequest{
		Snapshot: &hbasepb.SnapshotDescription{Name: proto.String(name), Table: proto.String(normalizeTable(table))}},
		&hbasepb.RestoreSnapshotResponse{})
}
