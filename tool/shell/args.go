package shell

import (
	"bytes"
	"strconv"
	"strings"

	"github.com/cockroachdb/errors"
	"github.com/regionkv/regionkv/filter"
)

// Helpers that read commands' arguments with Ruby's conversions (to_s,
// Integer(...)) and HBase's messages.

func argCount(args []Value, min, max int) error {
	if len(args) >= min && (max < 0 || len(args) <= max) {
		return nil
	}
	want := strconv.Itoa(min)
	switch {
	case max < 0:
		want += "+"
	case max != min:
		want += ".." + strconv.Itoa(max)
	}
	return usagef("wrong number of arguments (given %d, expected %s)", len(args), want)
}

// tableArg reads a table name, which must be a string, as in HBase.
func tableArg(v Value) (string, error) {
	s, ok := v.(*Str)
	if !ok || s.Const {
		return "", usagef("Table name must be of type String, got %s", inspect(v))
	}
	if len(s.B) == 0 {
		return "", usagef("Table name must not be empty")
	}
	return string(s.B), nil
}

// nameArg reads a name (a namespace, a snapshot) that must be a string.
func nameArg(what string, v Value) (string, error) {
	s, ok := v.(*Str)
	if !ok || len(s.B) == 0 {
		return "", usagef("%s must be a non-empty String, got %s", what, inspect(v))
	}
	return string(s.B), nil
}

// bytesArg is Ruby's to_s of a row, value or column: strings as they
// are, numbers and booleans written out, nil empty.
func bytesArg(what string, v Value) ([]byte, error) {
	switch v := v.(type) {
	case *Str:
		return v.B, nil
	case *Int:
		return []byte(strconv.FormatInt(v.V, 10)), nil
	case *Float:
		return []byte(rubyFloat(v.V)), nil
	case *Bool:
		return []byte(strconv.FormatBool(v.V)), nil
	case *Nil:
		return []byte{}, nil
	}
	return nil, usagef("%s must be a String, got %s", what, inspect(v))
}

// stringValue is an attribute's value as HBase's descriptors keep it.
func stringValue(key string, v Value) (string, error) {
	switch v := v.(type) {
	case *Str:
		return string(v.B), nil
	case *Int:
		return strconv.FormatInt(v.V, 10), nil
	case *Bool:
		return strconv.FormatBool(v.V), nil
	case *Float:
		return rubyFloat(v.V), nil
	}
	return "", usagef("%s must be a String or a number, got %s", key, inspect(v))
}

func intArg(what string, v Value) (int64, error) {
	switch v := v.(type) {
	case *Int:
		return v.V, nil
	case *Str:
		if n, err := strconv.ParseInt(strings.TrimSpace(string(v.B)), 10, 64); err == nil {
			return n, nil
		}
	}
	return 0, usagef("%s must be an Integer, got %s", what, inspect(v))
}

func boolArg(what string, v Value) (bool, error) {
	switch v := v.(type) {
	case *Bool:
		return v.V, nil
	case *Str:
		switch strings.ToLower(string(v.B)) {
		case "true":
			return true, nil
		case "false":
			return false, nil
		}
	}
	return false, usagef("%s must be true or false, got %s", what, inspect(v))
}

// parseColumn is HBase's KeyValue.parseColumn: "family:qualifier", or a
// family alone.
func parseColumn(b []byte) (family, qualifier []byte, hasQualifier bool) {
	if i := bytes.IndexByte(b, ':'); i >= 0 {
		return b[:i], b[i+1:], true
	}
	return b, nil, false
}

// stringList reads a String or an Array of them (COLUMNS, SPLITS, ...).
func stringList(what string, v Value) ([][]byte, error) {
	switch v := v.(type) {
	case *Array:
		out := make([][]byte, 0, len(v.Elems))
		for _, e := range v.Elems {
			b, err := bytesArg(what, e)
			if err != nil {
				return nil, err
			}
			out = append(out, b)
		}
		return out, nil
	case *Hash:
		return nil, usagef("%s must be a String or an Array, got %s", what, inspect(v))
	}
	b, err := bytesArg(what, v)
	if err != nil {
		return nil, err
	}
	return [][]byte{b}, nil
}

// filterArg reads FILTER: a string in HBase's filter language.
func filterArg(v Value) (filter.Filter, error) {
	s, ok := v.(*Str)
	if !ok {
		return nil, usagef("FILTER must be a filter string such as \"PrefixFilter('r')\", got %s", inspect(v))
	}
	f, err := filter.ParseFilter(string(s.B))
	if err != nil {
		return nil, errors.Wrapf(err, "FILTER %s", rubyQuote(s.B))
	}
	return f, nil
}

// options reads a command's hash of options and reports keys it does not
// know.
type options struct {
	h    *Hash
	used map[string]bool
}

func optionsOf(v Value) (*options, error) {
	h, ok := v.(*Hash)
	if !ok {
		return nil, usagef("expected a Hash of options ({KEY => value, ...}), got %s", inspect(v))
	}
	for _, k := range h.Keys {
		if _, ok := k.(*Str); !ok {
			return nil, usagef("option names must be Strings or constants, got %s", inspect(k))
		}
	}
	return &options{h: h, used: map[string]bool{}}, nil
}

func (o *options) get(key string) (Value, bool) {
	if o == nil {
		return nil, false
	}
	o.used[key] = true
	v, ok := o.h.Get(key)
	if _, isNil := v.(*Nil); isNil {
		return nil, false
	}
	return v, ok
}

// unknown returns the keys that no get asked for.
func (o *options) unknown() []string {
	if o == nil {
		return nil
	}
	var out []string
	for _, k := range o.h.Keys {
		if name := string(k.(*Str).B); !o.used[name] {
			out = append(out, name)
		}
	}
	return out
}

// refuseUnknown fails on keys no get asked for.
func (o *options) refuseUnknown(cmd string) error {
	if u := o.unknown(); len(u) > 0 {
		return usagef("%s does not take %s", cmd, strings.Join(u, ", "))
	}
	return nil
}
