// Package hbaseconf is the registry of the HBase configuration properties
// RegionKV reads: for each its name (HBase's wherever HBase has one), older
// names it is also known by, its type, its default, what it does, and which
// component reads it. Components (region, blockcache, server) apply the
// properties they own with their SetConfig methods, parsing values with the
// Property methods here, so a value means the same wherever it is given;
// a caller holding properties of several components (hbase-site.xml, -D
// flags) routes each by its Component. A property not registered here is
// refused everywhere, so a typo is not silently ignored.
package hbaseconf

import (
	"encoding/xml"
	"io"
	"math"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/cockroachdb/errors"
)

// Component names who reads a property.
type Component string

// The components.
const (
	Region     Component = "region"     // region.Options.SetConfig
	BlockCache Component = "blockcache" // blockcache.Options.SetConfig
	Server     Component = "server"     // server.Config.Set
	// Ignored properties are accepted, so that an HBase cluster's
	// hbase-site.xml loads, and have no effect here.
	Ignored Component = "ignored"
)

// Kind is a property's value type.
type Kind int

// The kinds, as HBase's Configuration getters read them.
const (
	String Kind = iota
	Int         // a decimal integer
	Bytes       // a byte count, with an optional binary unit: 64k, 128m, 1g
	Float       // a decimal fraction
	Bool        // true or false
	Millis      // a duration in milliseconds
)

var kindNames = [...]string{String: "string", Int: "int", Bytes: "bytes", Float: "float", Bool: "bool", Millis: "milliseconds"}

func (k Kind) String() string { return kindNames[k] }

// Property is one registered property.
type Property struct {
	Name string
	// Aliases are other names HBase reads for the same setting.
	Aliases   []string
	Kind      Kind
	Default   string
	Component Component
	Doc       string
	// Ours marks a property HBase does not have.
	Ours bool
}

// Lookup returns the property name (or one of its aliases) names.
func Lookup(name string) (*Property, bool) {
	p, ok := byName[name]
	return p, ok
}

// Properties returns every registered property, sorted by name.
func Properties() []*Property {
	out := make([]*Property, len(registry))
	for i := range registry {
		out[i] = &registry[i]
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Of returns the properties component reads, sorted by name.
func Of(c Component) []*Property {
	var out []*Property
	for _, p := range Properties() {
		if p.Component == c {
			out = append(out, p)
		}
	}
	return out
}

// For returns the property key names, refusing it unless it belongs to c.
// Components call it first in their SetConfig.
func For(c Component, key string) (*Property, error) {
	p, ok := Lookup(key)
	if !ok {
		return nil, errors.Newf("%s: unknown property %q", c, key)
	}
	if p.Component != c {
		return nil, errors.Newf("%s: property %q is read by %s, not %s", c, key, p.Component, c)
	}
	return p, nil
}

func (p *Property) wrap(value string, err error) error {
	return errors.Wrapf(err, "property %s=%q (%s)", p.Name, value, p.Kind)
}

// Int parses value as p's integer.
func (p *Property) Int(value string) (int64, error) {
	v, err := strconv.ParseInt(strings.TrimSpace(value), 10, 64)
	if err != nil {
		return 0, p.wrap(value, err)
	}
	return v, nil
}

// Bytes parses value as a byte count (see ParseBytes).
func (p *Property) Bytes(value string) (int64, error) {
	v, err := ParseBytes(value)
	if err != nil {
		return 0, p.wrap(value, err)
	}
	return v, nil
}

// Float parses value as a decimal fraction.
func (p *Property) Float(value string) (float64, error) {
	v, err := strconv.ParseFloat(strings.TrimSpace(value), 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		if err == nil {
			err = errors.New("not a finite number")
		}
		return 0, p.wrap(value, err)
	}
	return v, nil
}

// Bool parses value as true or false.
func (p *Property) Bool(value string) (bool, error) {
	v, err := strconv.ParseBool(strings.TrimSpace(value))
	if err != nil {
		return false, p.wrap(value, err)
	}
	return v, nil
}

// Millis parses value as milliseconds.
func (p *Property) Millis(value string) (time.Duration, error) {
	v, err := p.Int(value)
	if err != nil {
		return 0, err
	}
	if v > math.MaxInt64/int64(time.Millisecond) || v < math.MinInt64/int64(time.Millisecond) {
		return 0, p.wrap(value, errors.New("out of range"))
	}
	return time.Duration(v) * time.Millisecond, nil
}

// Check parses value as p's kind, for callers that only validate.
func (p *Property) Check(value string) error {
	var err error
	switch p.Kind {
	case Int:
		_, err = p.Int(value)
	case Bytes:
		_, err = p.Bytes(value)
	case Float:
		_, err = p.Float(value)
	case Bool:
		_, err = p.Bool(value)
	case Millis:
		_, err = p.Millis(value)
	}
	return err
}

// ParseBytes parses a byte count with an optional binary unit: k, m, g, t,
// optionally followed by b or ib ("64m", "64MB", "64MiB", "1.5g").
func ParseBytes(s string) (int64, error) {
	t := strings.ToLower(strings.TrimSpace(s))
	t = strings.TrimSuffix(strings.TrimSuffix(t, "b"), "i")
	mult := int64(1)
	if t != "" {
		switch t[len(t)-1] {
		case 'k':
			mult = 1 << 10
		case 'm':
			mult = 1 << 20
		case 'g':
			mult = 1 << 30
		case 't':
			mult = 1 << 40
		}
		if mult != 1 {
			t = t[:len(t)-1]
		}
	}
	v, err := strconv.ParseFloat(strings.TrimSpace(t), 64)
	if err != nil || v < 0 || math.IsNaN(v) || v*float64(mult) > math.MaxInt64 {
		return 0, errors.Newf("bad size %q", s)
	}
	return int64(v * float64(mult)), nil
}

// Settings are property values by canonical name, as an hbase-site.xml and
// -D flags give them, in the order they were set.
type Settings struct {
	values map[string]string
	order  []string
}

// Set records key=value after checking that key is registered and value
// parses as its kind. An alias is recorded under the canonical name.
func (s *Settings) Set(key, value string) error {
	p, ok := Lookup(key)
	if !ok {
		return errors.Newf("unknown property %q", key)
	}
	if err := p.Check(value); err != nil {
		return err
	}
	if s.values == nil {
		s.values = map[string]string{}
	}
	if _, ok := s.values[p.Name]; !ok {
		s.order = append(s.order, p.Name)
	}
	s.values[p.Name] = strings.TrimSpace(value)
	return nil
}

// Clone returns a copy of s that changes independently of it.
func (s *Settings) Clone() Settings {
	c := Settings{order: append([]string(nil), s.order...)}
	if s.values != nil {
		c.values = make(map[string]string, len(s.values))
		for k, v := range s.values {
			c.values[k] = v
		}
	}
	return c
}

// Entry is one property's effective value: Source is "set" if Settings
// holds a value for it, else "default" (Value is then the default).
type Entry struct {
	*Property
	Value, Source string
}

// Effective returns every registered property with its effective value,
// sorted by name: what WriteXML writes and HBase's /conf page shows.
func (s *Settings) Effective() []Entry {
	props := Properties()
	out := make([]Entry, 0, len(props))
	for _, p := range props {
		e := Entry{Property: p, Value: p.Default, Source: "default"}
		if v, ok := s.values[p.Name]; ok {
			e.Value, e.Source = v, "set"
		}
		out = append(out, e)
	}
	return out
}

// Get returns the value set for the property name names, if any.
func (s *Settings) Get(name string) (string, bool) {
	p, ok := Lookup(name)
	if !ok {
		return "", false
	}
	v, ok := s.values[p.Name]
	return v, ok
}

// Each calls fn for every property set, in the order set.
func (s *Settings) Each(fn func(p *Property, value string) error) error {
	for _, n := range s.order {
		if err := fn(byName[n], s.values[n]); err != nil {
			return err
		}
	}
	return nil
}

// LoadSiteXML sets every property of an hbase-site.xml file.
func (s *Settings) LoadSiteXML(path string) error {
	props, err := ReadSiteXML(path)
	if err != nil {
		return err
	}
	for _, kv := range props {
		if err := s.Set(kv[0], kv[1]); err != nil {
			return errors.Wrapf(err, "%s", path)
		}
	}
	return nil
}

// ReadSiteXML returns the name/value pairs of an hbase-site.xml file, in
// file order.
func ReadSiteXML(path string) ([][2]string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, errors.Wrap(err, "reading configuration")
	}
	var doc struct {
		Properties []struct {
			Name  string `xml:"name"`
			Value string `xml:"value"`
		} `xml:"property"`
	}
	if err := xml.Unmarshal(b, &doc); err != nil {
		return nil, errors.Wrapf(err, "parsing %s", path)
	}
	out := make([][2]string, 0, len(doc.Properties))
	for _, p := range doc.Properties {
		out = append(out, [2]string{strings.TrimSpace(p.Name), p.Value})
	}
	return out, nil
}

// WriteXML writes every registered property with its effective value (set
// in s, else the default) as Hadoop's configuration XML, the format of an
// hbase-site.xml and of HBase's /conf page: a file that loads back.
func (s *Settings) WriteXML(w io.Writer) error {
	type property struct {
		Name        string `xml:"name"`
		Value       string `xml:"value"`
		Source      string `xml:"source"`
		Description string `xml:"description"`
	}
	var doc struct {
		XMLName    xml.Name   `xml:"configuration"`
		Properties []property `xml:"property"`
	}
	for _, e := range s.Effective() {
		doc.Properties = append(doc.Properties, property{Name: e.Name, Value: e.Value, Source: e.Source,
			Description: e.Doc + " (read by " + string(e.Component) + ")"})
	}
	b, err := xml.MarshalIndent(doc, "", "  ")
	if err != nil {
		return err
	}
	b = append([]byte(xml.Header), b...)
	_, err = w.Write(append(b, '\n'))
	return err
}

var byName = func() map[string]*Property {
	m := map[string]*Property{}
	for i := range registry {
		p := &registry[i]
		for _, n := range append([]string{p.Name}, p.Aliases...) {
			if _, dup := m[n]; dup {
				panic("hbaseconf: property registered twice: " + n)
			}
			m[n] = p
		}
	}
	return m
}()

// Defines collects repeated `-D key=value` command-line flags, in order: a
// flag.Value, as HBase's tools take properties.
type Defines [][2]string

// String returns the flags as given, comma-separated.
func (d *Defines) String() string {
	parts := make([]string, len(*d))
	for i, kv := range *d {
		parts[i] = kv[0] + "=" + kv[1]
	}
	return strings.Join(parts, ",")
}

// Set adds one key=value.
func (d *Defines) Set(s string) error {
	k, v, ok := strings.Cut(s, "=")
	if !ok || k == "" {
		return errors.Newf("want key=value, got %q", s)
	}
	*d = append(*d, [2]string{k, v})
	return nil
}

// ExpandDefines splits Hadoop-style "-Dkey=value" arguments into "-D"
// "key=value", which Go's flag package parses; HBase's tools accept both.
func ExpandDefines(args []string) []string {
	out := make([]string, 0, len(args))
	for _, a := range args {
		if strings.HasPrefix(a, "-D") && len(a) > 2 && a[2] != '=' {
			out = append(out, "-D", a[2:])
			continue
		}
		out = append(out, a)
	}
	return out
}
