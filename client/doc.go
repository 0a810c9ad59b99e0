// Package client is a small Go client for RegionKV and HBase: it finds
// hbase:meta and the master through ZooKeeper, locates regions in
// hbase:meta, and speaks HBase's client protocol (package ipc) to the
// region servers and the master. It is used by the integration tests and by
// `regionsrv pe --zk`; it is not a replacement for gohbase or the Java
// client, but it is correct and safe for concurrent use.
//
// Usage:
//
//	c, err := client.New(ctx, client.Options{ZKQuorum: "127.0.0.1:2181"})
//	...
//	defer c.Close()
//	err = c.CreateTable(ctx, client.TableDescriptor{Name: "t",
//		Families: []client.Family{{Name: "cf", Attributes: map[string]string{"VERSIONS": "3"}}}}, nil)
//	_, err = c.Mutate(ctx, client.NewPut("t", []byte("row")).Add([]byte("cf"), []byte("q"), []byte("v")))
//	res, err := c.Get(ctx, &client.Get{Table: "t", Row: []byte("row")})
//	sc := c.Scan(&client.Scan{Table: "t"})
//	for {
//		res, err := sc.Next(ctx)
//		if err == io.EOF {
//			break
//		}
//		...
//	}
//	sc.Close()
//
// # Locating regions
//
// The znode <root>/meta-region-server (HBase's format: 0xFF, a 4-byte
// length, an identifier, "PBUF", a MetaRegionServer protobuf) names the
// server of hbase:meta, and <root>/master the master. A ZooKeeper session
// is opened for each read and closed after it, as gohbase does, so the
// client holds no session between lookups.
//
// A table's regions are read from hbase:meta with one forward scan of the
// table's rows ("<table>,<startKey>,<regionId>.<encoded>." with
// info:regioninfo and info:server) and cached per table. Offline regions
// are skipped; a table without rows is a TableNotFoundException. When a
// server answers NotServingRegionException, WrongRegionException or
// RegionMovedException, or a connection fails, the cached locations are
// dropped and the call is retried after a backoff, a bounded number of
// times (Options.Retries).
//
// # Cells on the wire
//
// When the connection has a cellblock codec (the default), mutations send
// their cells in the request's cellblock (MutationProto.associated_cell_count),
// as gohbase does; with Options.NoCellBlocks they go inline as ColumnValues.
// Results are accepted both inline and in cellblocks.
//
// # Errors
//
// Exceptions from the server are *ipc.Exception values (use
// ipc.AsException, or IsException with a class name) wrapped with the
// operation and table; per-action errors of Batch are too. Admin
// operations that HBase runs as procedures (create, disable, enable,
// delete, truncate, modify table, add / modify / delete column family,
// the namespace changes, flush table, snapshot, restore and clone) poll
// getProcedureResult until the procedure finishes and return its
// exception the same way.
//
// # Admin
//
// Table and namespace administration goes to the master (MasterService):
// CreateTable, ModifyTable, AddColumn, ModifyColumn, DeleteColumn,
// CreateNamespace, DeleteNamespace, ListNamespaces, FlushTable, ...
// Calls about a region go to the server that hosts it (AdminService):
// FlushRegion, CompactRegion and CompactTable (queued, as in HBase; poll
// CompactionState or TableCompactionState), StoreFiles; and calls about a
// server to that server: RollWAL, ServerInfo, OnlineRegions.
//
// Snapshots are the master's too, as HBase's Admin has them: Snapshot
// (FLUSH or SKIPFLUSH, waiting until it is complete), IsSnapshotDone,
// ListSnapshots, DeleteSnapshot, RestoreSnapshot (a disabled table back to
// its snapshot; it stays disabled) and CloneSnapshot (a new, enabled table
// from a snapshot). Restore and clone are both MasterService.RestoreSnapshot
// on the wire, as HBase 2's client sends them, and poll getProcedureResult.
//
// # Bulk load
//
// PrepareBulkLoad, BulkLoadHFiles and CleanupBulkLoad are HBase 2's bulk
// load calls (ClientService): BulkLoadHFiles makes HFiles store files of
// one region, all its families at once, and answers false when a file does
// not fit the region (split it at the boundaries Regions lists, as
// `regionsrv bulkload` does). Paths are on the server's filesystem.
//
// # Concurrency
//
// A Client is safe for concurrent use by many goroutines; requests share
// one connection per server and service. A Scanner is not safe for
// concurrent use. Requests (Get, Mutation, Scan) must not be modified while
// a call that uses them runs.
package client
