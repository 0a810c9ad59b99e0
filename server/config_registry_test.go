package server

import (
	"bytes"
	"testing"

	"github.com/regionkv/regionkv/internal/hbaseconf"
	"github.com/stretchr/testify/require"
)

// TestConfigRegistryDefaults: Set takes every registered property, of every
// component, under each of its names; the server's defaults are the
// registry's, and WriteConfigXML lists them all.
func TestConfigRegistryDefaults(t *testing.T) {
	var c Config
	for _, p := range hbaseconf.Properties() {
		for _, n := range append([]string{p.Name}, p.Aliases...) {
			require.NoError(t, c.Set(n, p.Default), n)
		}
	}
	got, want := c.withDefaults(), Config{}.withDefaults()
	// Set marks the ports as given and remembers what it was given.
	got.portSet, got.infoPortSet, got.settings = false, false, hbaseconf.Settings{}
	// The region template is defaulted when a region opens; region's own
	// test checks that the registry's defaults are its defaults.
	require.NotZero(t, got.Region.FlushSize, "region properties reach the template")
	got.Region = want.Region
	require.Equal(t, want, got)
	var buf bytes.Buffer
	require.NoError(t, c.WriteConfigXML(&buf))
	for _, p := range hbaseconf.Properties() {
		require.Contains(t, buf.String(), "<name>"+p.Name+"</name>")
	}
	require.Error(t, c.Set("hbase.regionserver.prot", "1"))
}
