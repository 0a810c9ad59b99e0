package region

import (
	"testing"

	"github.com/cockroachdb/errors"
	"github.com/regionkv/regionkv/internal/hbaseconf"
	"github.com/stretchr/testify/require"
)

// TestConfigRegistryDefaults: SetConfig takes every property the registry
// gives the region, under each of its names, and the registry's defaults
// are the region's: setting them all changes nothing.
func TestConfigRegistryDefaults(t *testing.T) {
	props := hbaseconf.Of(hbaseconf.Region)
	require.NotEmpty(t, props)
	var o Options
	for _, p := range props {
		for _, n := range append([]string{p.Name}, p.Aliases...) {
			require.NoError(t, o.SetConfig(n, p.Default), n)
		}
	}
	got, want := o.withDefaults(), Options{}.withDefaults()
	got.Now, want.Now = nil, nil
	require.Equal(t, want, got)
}

func TestConfigRefusesOthers(t *testing.T) {
	var o Options
	for _, key := range []string{"hfile.block.cache.size", "hbase.regionserver.port", "hbase.hregion.memstore.flush.sise"} {
		err := o.SetConfig(key, "1")
		require.Error(t, err, key)
		require.True(t, errors.Is(err, ErrInvalidArgument), key)
	}
	err := o.SetConfig("hbase.hstore.compaction.ratio", "fast")
	require.True(t, errors.Is(err, ErrInvalidArgument), "%v", err)
	require.NoError(t, o.SetConfig("hbase.hstore.compaction.ratio", "2.5"))
	require.Equal(t, 2.5, o.CompactionRatio)
}
