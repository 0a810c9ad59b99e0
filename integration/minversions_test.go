package integration

import (
	"fmt"
	"testing"
	"time"

	"github.com/regionkv/regionkv/client"
)

// TestMinVersionsAcrossRestart runs MIN_VERSIONS=2 with a TTL against a
// live regionsrv: expired versions beyond the two newest are not read, a
// time range still finds one until the flush at a graceful stop drops it
// (as HBase's flush does), and the descriptor, with its stored-only
// attributes and CONFIGURATION, comes back as given after the restart.
func TestMinVersionsAcrossRestart(t *testing.T) {
	p := startServer(t, "")
	c := newClient(t, p)
	const tbl = "minversions"
	attrs := map[string]string{"VERSIONS": "5", "MIN_VERSIONS": "2", "TTL": "3600", "BLOCKCACHE": "false",
		"REPLICATION_SCOPE": "1", "PREFETCH_BLOCKS_ON_OPEN": "true", "IS_MOB": "true", "STORAGE_POLICY": "HOT",
		"custom.metadata": "kept"}
	conf := map[string]string{"hbase.hstore.compaction.min": "5"}
	createTable(t, c, client.TableDescriptor{Name: tbl, Families: []client.Family{
		{Name: "cf", Attributes: attrs, Configuration: conf}}})
	cf, q := []byte("cf"), []byte("q")
	// Timestamps of 1970: expired when written.
	for ts := int64(1); ts <= 4; ts++ {
		mutate(t, c, client.NewPut(tbl, []byte("r")).AddAt(cf, q, ts, []byte(fmt.Sprint("v", ts))))
	}
	read := func(tr client.TimeRange) []string {
		t.Helper()
		return cellStrings(get(t, c, &client.Get{Table: tbl, Row: []byte("r"), MaxVersions: 10, TimeRange: tr}).Cells, true)
	}
	equalStrings(t, "MIN_VERSIONS keep two", read(client.TimeRange{}), []string{"r/cf:q@4=v4", "r/cf:q@3=v3"})
	equalStrings(t, "time range, before the flush", read(client.TimeRange{Max: 2}), []string{"r/cf:q@1=v1"})

	p.restart(false)
	c = newClient(t, p)
	equalStrings(t, "after the restart", read(client.TimeRange{}), []string{"r/cf:q@4=v4", "r/cf:q@3=v3"})
	equalStrings(t, "time range, after the flush", read(client.TimeRange{Max: 2}), nil)
	// A live version now: the two newest are it and v4.
	now := time.Now().UnixMilli()
	mutate(t, c, client.NewPut(tbl, []byte("r")).AddAt(cf, q, now, []byte("live")))
	equalStrings(t, "with a live version", read(client.TimeRange{}),
		[]string{fmt.Sprintf("r/cf:q@%d=live", now), "r/cf:q@4=v4"})

	td, err := c.TableDescriptor(testCtx(t, 30*time.Second), tbl)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range attrs {
		if got := td.Families[0].Attributes[k]; got != v {
			t.Errorf("descriptor after restart: %s=%q, want %q", k, got, v)
		}
	}
	if got := td.Families[0].Configuration["hbase.hstore.compaction.min"]; got != "5" {
		t.Errorf("descriptor after restart: CONFIGURATION %v", td.Families[0].Configuration)
	}

	err = c.CreateTable(testCtx(t, 30*time.Second), client.TableDescriptor{Name: "minversions_kdc", Families: []client.Family{
		{Name: "cf", Attributes: map[string]string{"KEEP_DELETED_CELLS": "TRUE"}}}}, nil)
	if !client.IsException(err, "org.apache.hadoop.hbase.DoNotRetryIOException") {
		t.Fatalf("KEEP_DELETED_CELLS=TRUE: %v", err)
	}
}
