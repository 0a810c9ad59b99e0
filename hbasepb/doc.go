// Package hbasepb holds protobuf (proto2) definitions of the subset of Apache
// HBase's client wire protocol that regionkv speaks: RPC framing, Client,
// Master, Admin (region server), Registry and ZooKeeper payload messages,
// filters and comparators, cluster status, and snapshots (the descriptions
// and manifests HBase's master writes).
//
// The .proto files are written for this project; their field numbers, types,
// labels (required/optional/repeated), defaults and enum values match HBase's
// hbase.pb definitions (HBase 2.x/3.x) so that messages produced by HBase
// clients decode unchanged, including required-field checks. The proto
// package is "hbasepb", not "hbase.pb"; package names never appear on the
// wire.
//
// The .proto files are registered as "hbasepb/<File>.proto" so they do not
// collide in the global protobuf registry with other Go HBase bindings
// (e.g. gohbase registers "Client.proto", "RPC.proto", ...).
//
// magic.go is written by hand: AppendPB and ParsePB frame the messages HBase
// stores in hbase:meta and ZooKeeper with the PB magic.
//
// The generated *.pb.go files are committed. To regenerate (needs protoc and
// protoc-gen-go v1.36.12 on PATH):
//
//	go generate ./hbasepb/
package hbasepb

//go:generate sh -c "protoc -I .. --go_out=.. --go_opt=paths=source_relative ../hbasepb/*.proto"
