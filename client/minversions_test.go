package client

import (
	"fmt"
	"testing"
	"time"

	"github.com/regionkv/regionkv/ipc"
	"github.com/stretchr/testify/require"
)

// TestMinVersions creates a table with MIN_VERSIONS=2 and a TTL of two
// seconds through the client: past the TTL the two newest versions of a
// column are still read, the others are not, and a family without
// MIN_VERSIONS loses them all.
func TestMinVersions(t *testing.T) {
	c := newClient(t, nil)
	tbl := fmt.Sprintf("t%d_minversions", env.tableID.Add(1))
	require.NoError(t, c.CreateTable(ctx(t), TableDescriptor{Name: tbl, Families: []Family{
		{Name: "cf", Attributes: map[string]string{"VERSIONS": "5", "MIN_VERSIONS": "2", "TTL": "2"},
			Configuration: map[string]string{"hbase.hstore.blockingStoreFiles": "20"}},
		{Name: "cf2", Attributes: map[string]string{"VERSIONS": "5", "TTL": "2"}},
	}}, nil))
	td, err := c.TableDescriptor(ctx(t), tbl)
	require.NoError(t, err)
	require.Equal(t, "2", td.Families[0].Attributes["MIN_VERSIONS"])
	require.Equal(t, map[string]string{"hbase.hstore.blockingStoreFiles": "20"}, td.Families[0].Configuration)

	all := func(row string, tr TimeRange) []string {
		t.Helper()
		return cellStrings(get(t, c, &Get{Table: tbl, Row: []byte(row), MaxVersions: 10, TimeRange: tr}).Cells, true)
	}
	putAt := func(row string, ts int64, v string) {
		t.Helper()
		_, err := c.Mutate(ctx(t), NewPut(tbl, []byte(row)).AddAt(cf, qa, ts, []byte(v)).AddAt(cf2, qa, ts, []byte(v)))
		require.NoError(t, err)
	}

	// Long expired when written (timestamps of 1970).
	for ts := int64(10); ts <= 40; ts += 10 {
		putAt("old", ts, fmt.Sprint(ts))
	}
	require.Equal(t, []string{"old/cf:a/40=40", "old/cf:a/30=30"}, all("old", TimeRange{}))
	require.Equal(t, []string{"old/cf:a/10=10"}, all("old", TimeRange{Max: 15}),
		"versions are counted within the time range")

	// Live versions are all read (VERSIONS 5), the expired ones no more.
	now := time.Now().UnixMilli()
	putAt("live", 10, "10")
	putAt("live", 20, "20")
	putAt("live", now-1, "n1")
	putAt("live", now, "n2")
	require.Equal(t, []string{
		fmt.Sprintf("live/cf:a/%d=n2", now), fmt.Sprintf("live/cf:a/%d=n1", now-1),
		fmt.Sprintf("live/cf2:a/%d=n2", now), fmt.Sprintf("live/cf2:a/%d=n1", now-1),
	}, all("live", TimeRange{}))
	// Once they expire, MIN_VERSIONS keeps the two newest; cf2 has none.
	time.Sleep(time.Until(time.UnixMilli(now + 2100)))
	require.Equal(t, []string{fmt.Sprintf("live/cf:a/%d=n2", now), fmt.Sprintf("live/cf:a/%d=n1", now-1)},
		all("live", TimeRange{}))

	// What HBase refuses or we cannot honour fails the create at once.
	for _, attrs := range []map[string]string{
		{"VERSIONS": "2", "MIN_VERSIONS": "3"},
		{"KEEP_DELETED_CELLS": "TRUE"},
	} {
		err := c.CreateTable(ctx(t), TableDescriptor{Name: tbl + "_bad", Families: []Family{{Name: "cf", Attributes: attrs}}}, nil)
		require.True(t, IsException(err, ipc.ClassDoNotRetryIOException), "%v: %v", attrs, err)
	}
}
