package hbaseconf

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestRegistry: every property has a name, a doc and a known component, and
// its default parses as its kind.
func TestRegistry(t *testing.T) {
	require.NotEmpty(t, Properties())
	for _, p := range Properties() {
		require.NotEmpty(t, p.Doc, p.Name)
		require.Contains(t, []Component{Region, BlockCache, Server, Ignored}, p.Component, p.Name)
		require.NoError(t, p.Check(p.Default), p.Name)
		for _, n := range append([]string{p.Name}, p.Aliases...) {
			got, ok := Lookup(n)
			require.True(t, ok, n)
			require.Same(t, p, got, n)
		}
	}
	_, ok := Lookup("hbase.hregion.memstore.flush.sise")
	require.False(t, ok)
}

func TestKinds(t *testing.T) {
	p := &Property{Name: "x", Kind: Int}
	v, err := p.Int(" 42 ")
	require.NoError(t, err)
	require.Equal(t, int64(42), v)
	_, err = p.Int("4k")
	require.ErrorContains(t, err, "x")
	b, err := (&Property{Name: "b", Kind: Bytes}).Bytes("64m")
	require.NoError(t, err)
	require.Equal(t, int64(64<<20), b)
	for in, want := range map[string]int64{"1": 1, "2k": 2048, "1.5g": 3 << 29, "8MiB": 8 << 20, "3MB": 3 << 20, "1t": 1 << 40} {
		got, err := ParseBytes(in)
		require.NoError(t, err, in)
		require.Equal(t, want, got, in)
	}
	for _, in := range []string{"", "-1", "x", "1q", "9999999t", "NaN"} {
		_, err := ParseBytes(in)
		require.Error(t, err, in)
	}
	_, err = (&Property{Name: "f", Kind: Float}).Float("Inf")
	require.Error(t, err)
	d, err := (&Property{Name: "d", Kind: Millis}).Millis("1500")
	require.NoError(t, err)
	require.Equal(t, "1.5s", d.String())
	_, err = (&Property{Name: "d", Kind: Millis}).Millis("9223372036854775807")
	require.Error(t, err, "overflows a Duration")
	require.Error(t, (&Property{Name: "t", Kind: Bool}).Check("yes please"))
}

func TestFor(t *testing.T) {
	p, err := For(Region, "hbase.hstore.compactionThreshold")
	require.NoError(t, err)
	require.Equal(t, "hbase.hstore.compaction.min", p.Name, "aliases resolve to the canonical name")
	_, err = For(Region, "hfile.block.cache.size")
	require.ErrorContains(t, err, "blockcache")
	_, err = For(Server, "no.such.key")
	require.ErrorContains(t, err, "unknown property")
}

// TestSettingsXMLRoundTrip: what WriteXML prints loads back as the same
// settings, every property with its effective value.
func TestSettingsXMLRoundTrip(t *testing.T) {
	var s Settings
	require.NoError(t, s.Set("hbase.hregion.memstore.flush.size", "1048576"))
	require.NoError(t, s.Set("hbase.master.port", "16000"))
	require.Error(t, s.Set("hbase.master.port", "sixteen"))
	require.Error(t, s.Set("bogus", "1"))
	v, ok := s.Get("hbase.regionserver.port")
	require.True(t, ok)
	require.Equal(t, "16000", v)
	var buf bytes.Buffer
	require.NoError(t, s.WriteXML(&buf))
	out := buf.String()
	require.Contains(t, out, "<name>hbase.regionserver.port</name>")
	require.Contains(t, out, "<value>16000</value>")
	require.Contains(t, out, "<source>set</source>")
	require.Equal(t, len(Properties()), strings.Count(out, "<property>"))
	path := filepath.Join(t.TempDir(), "hbase-site.xml")
	require.NoError(t, os.WriteFile(path, buf.Bytes(), 0o644))
	var back Settings
	require.NoError(t, back.LoadSiteXML(path))
	for _, p := range Properties() {
		got, ok := back.Get(p.Name)
		require.True(t, ok, p.Name)
		want, set := s.Get(p.Name)
		if !set {
			want = p.Default
		}
		require.Equal(t, want, got, p.Name)
	}
}

func TestDefines(t *testing.T) {
	args := ExpandDefines([]string{"-Da.b=1", "-D", "c=2=3", "-D=x", "pe"})
	require.Equal(t, []string{"-D", "a.b=1", "-D", "c=2=3", "-D=x", "pe"}, args)
	var d Defines
	require.NoError(t, d.Set("a.b=1"))
	require.NoError(t, d.Set("c=2=3"))
	require.Error(t, d.Set("novalue"))
	require.Error(t, d.Set("=v"))
	require.Equal(t, Defines{{"a.b", "1"}, {"c", "2=3"}}, d)
	require.Equal(t, "a.b=1,c=2=3", d.String())
}
