package blockcache

import (
	"testing"

	"github.com/regionkv/regionkv/internal/hbaseconf"
	"github.com/stretchr/testify/require"
)

// TestConfigRegistryDefaults: SetConfig takes every property the registry
// gives the block cache, and the registry's defaults are DefaultOptions'.
func TestConfigRegistryDefaults(t *testing.T) {
	props := hbaseconf.Of(hbaseconf.BlockCache)
	require.Len(t, props, len(ConfigKeys))
	o := DefaultOptions()
	for _, p := range props {
		require.True(t, IsConfigKey(p.Name))
		require.NoError(t, o.SetConfig(p.Name, p.Default), p.Name)
	}
	require.Equal(t, DefaultOptions(), o)
	require.Error(t, o.SetConfig("hbase.hregion.memstore.flush.size", "1"), "a region property")
}
