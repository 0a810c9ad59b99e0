package filter

import (
	"fmt"
	"strconv"

	"github.com/cockroachdb/errors"
)

// ParseFilter builds a filter from HBase's filter language, the strings
// that HBase's shell, REST and Thrift servers take (HBase's ParseFilter):
//
//	PrefixFilter('row') AND (QualifierFilter(>=, 'binary:q') OR SKIP ValueFilter(!=, 'substring:x'))
//
// A simple expression is a filter name and its arguments in parentheses,
// separated by commas (or spaces, as HBase allows). Arguments are quoted
// byte strings ('it”s': a quote is doubled), integers, true or false
// (any case), and the comparison operators <, <=, =, !=, >=, >. A
// comparator is a quoted "type:value": binary, binaryprefix, regexstring
// or substring (the last two only with = and !=). Expressions combine with
// AND (a FilterList that must pass all), OR (must pass one), SKIP
// (SkipFilter) and WHILE (WhileMatchFilter), and parentheses. SKIP and
// WHILE bind tightest, then AND, then OR, as in HBase; a run of ANDs (or
// ORs) makes one FilterList.
//
// The filters the language knows are HBase 2's: KeyOnlyFilter,
// FirstKeyOnlyFilter, PrefixFilter, ColumnPrefixFilter,
// MultipleColumnPrefixFilter, ColumnCountGetFilter, PageFilter,
// ColumnPaginationFilter, InclusiveStopFilter, TimestampsFilter, RowFilter,
// FamilyFilter, QualifierFilter, ValueFilter, ColumnRangeFilter,
// SingleColumnValueFilter, SingleColumnValueExcludeFilter,
// DependentColumnFilter and ColumnValueFilter, each with the argument forms
// of its HBase createFilterFromArguments.
//
// A string that does not parse gives a *ParseError (with the byte offset
// of the problem), marked ErrBadFilter.
func ParseFilter(s string) (Filter, error) {
	p := &filterParser{src: s}
	p.next()
	f, err := p.orExpr()
	if err != nil {
		return nil, err
	}
	if p.tok.kind != tokEOF {
		return nil, p.errorf(p.tok.off, "unexpected %s after the filter", p.tok.describe())
	}
	return f, nil
}

// ParseError is a filter string that does not parse: Offset is the byte
// offset in the string where the problem is.
type ParseError struct {
	Offset int
	Msg    string
}

func (e *ParseError) Error() string {
	return fmt.Sprintf("filter string at offset %d: %s", e.Offset, e.Msg)
}

type tokKind int

const (
	tokEOF    tokKind = iota
	tokName           // a filter name or a keyword (AND, OR, SKIP, WHILE)
	tokLParen         // (
	tokRParen         // )
	tokComma          // ,
	tokQuoted         // 'bytes'
	tokWord           // an unquoted argument: number, boolean, operator
)

type filterTok struct {
	kind tokKind
	off  int
	text string // the name, the unquoted argument, or the quoted bytes without quotes
	err  string // a lexing error, reported when the token is used
}

func (t filterTok) describe() string {
	switch t.kind {
	case tokEOF:
		return "end of string"
	case tokLParen:
		return "'('"
	case tokRParen:
		return "')'"
	case tokComma:
		return "','"
	case tokQuoted:
		return "quoted argument"
	}
	return strconv.Quote(t.text)
}

type filterParser struct {
	src string
	pos int
	tok filterTok
	// inArgs is set inside an argument list, where unquoted words are
	// arguments rather than names.
	inArgs bool
}

func (p *filterParser) errorf(off int, format string, args ...any) error {
	return errors.Mark(&ParseError{Offset: off, Msg: fmt.Sprintf(format, args...)}, ErrBadFilter)
}

func isNameByte(c byte) bool {
	return c == '_' || c == '.' || c == '$' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// next reads the next token into p.tok.
func (p *filterParser) next() {
	for p.pos < len(p.src) && (p.src[p.pos] == ' ' || p.src[p.pos] == '\t' || p.src[p.pos] == '\n' || p.src[p.pos] == '\r') {
		p.pos++
	}
	start := p.pos
	if p.pos >= len(p.src) {
		p.tok = filterTok{kind: tokEOF, off: start}
		return
	}
	switch c := p.src[p.pos]; {
	case c == '(':
		p.pos++
		p.tok = filterTok{kind: tokLParen, off: start}
	case c == ')':
		p.pos++
		p.tok = filterTok{kind: tokRParen, off: start}
	case c == ',':
		p.pos++
		p.tok = filterTok{kind: tokComma, off: start}
	case c == '\'':
		// A quote inside is written twice ('it''s').
		var b []byte
		i := p.pos + 1
		for {
			if i >= len(p.src) {
				p.pos = len(p.src)
				p.tok = filterTok{kind: tokQuoted, off: start, err: "unterminated quoted argument"}
				return
			}
			if p.src[i] == '\'' {
				if i+1 < len(p.src) && p.src[i+1] == '\'' {
					b = append(b, '\'')
					i += 2
					continue
				}
				break
			}
			b = append(b, p.src[i])
			i++
		}
		p.pos = i + 1
		p.tok = filterTok{kind: tokQuoted, off: start, text: string(b)}
	case !p.inArgs && isNameByte(c):
		for p.pos < len(p.src) && isNameByte(p.src[p.pos]) {
			p.pos++
		}
		p.tok = filterTok{kind: tokName, off: start, text: p.src[start:p.pos]}
	default:
		// An unquoted argument runs to a space, a comma or a parenthesis,
		// as in HBase.
		for p.pos < len(p.src) {
			c := p.src[p.pos]
			if c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == ',' || c == '(' || c == ')' || c == '\'' {
				break
			}
			p.pos++
		}
		p.tok = filterTok{kind: tokWord, off: start, text: p.src[start:p.pos]}
	}
}

func (p *filterParser) isKeyword(kw string) bool {
	return p.tok.kind == tokName && p.tok.text == kw
}

// orExpr parses expressions joined by OR into one MUST_PASS_ONE list.
func (p *filterParser) orExpr() (Filter, error) { return p.joined("OR", MustPassOne, p.andExpr) }

// andExpr parses expressions joined by AND into one MUST_PASS_ALL list.
func (p *filterParser) andExpr() (Filter, error) { return p.joined("AND", MustPassAll, p.unary) }

// joined parses operands joined by the keyword kw into one list with op; a
// single operand is itself.
func (p *filterParser) joined(kw string, op FilterListOperator, operand func() (Filter, error)) (Filter, error) {
	first, err := operand()
	if err != nil {
		return nil, err
	}
	fs := []Filter{first}
	for p.isKeyword(kw) {
		p.next()
		f, err := operand()
		if err != nil {
			return nil, err
		}
		fs = append(fs, f)
	}
	if len(fs) == 1 {
		return first, nil
	}
	return NewFilterList(op, fs...), nil
}

func (p *filterParser) unary() (Filter, error) {
	switch {
	case p.isKeyword("SKIP"):
		p.next()
		f, err := p.unary()
		if err != nil {
			return nil, err
		}
		return NewSkipFilter(f), nil
	case p.isKeyword("WHILE"):
		p.next()
		f, err := p.unary()
		if err != nil {
			return nil, err
		}
		return NewWhileMatchFilter(f), nil
	case p.tok.kind == tokLParen:
		open := p.tok.off
		p.next()
		f, err := p.orExpr()
		if err != nil {
			return nil, err
		}
		if p.tok.kind != tokRParen {
			return nil, p.errorf(p.tok.off, "expected ')' to close the '(' at offset %d, found %s", open, p.tok.describe())
		}
		p.next()
		return f, nil
	case p.tok.kind == tokName:
		return p.simple()
	case p.tok.kind == tokEOF:
		return nil, p.errorf(p.tok.off, "expected a filter, found end of string")
	}
	return nil, p.errorf(p.tok.off, "expected a filter, found %s", p.tok.describe())
}

// filterArg is one argument of a simple expression.
type filterArg struct {
	quoted bool
	text   string
	off    int
}

// simple parses Name(arg, ...) and builds the filter.
func (p *filterParser) simple() (Filter, error) {
	name, nameOff := p.tok.text, p.tok.off
	switch name {
	case "AND", "OR":
		return nil, p.errorf(nameOff, "%s needs a filter on each side", name)
	}
	build, ok := filterBuilders[name]
	if !ok {
		return nil, p.errorf(nameOff, "Filter Name %s not supported", name)
	}
	p.inArgs = true
	p.next()
	if p.tok.kind != tokLParen {
		p.inArgs = false
		return nil, p.errorf(p.tok.off, "expected '(' after %s, found %s", name, p.tok.describe())
	}
	open := p.tok.off
	p.next()
	var args []filterArg
	for p.tok.kind != tokRParen {
		switch p.tok.kind {
		case tokEOF:
			p.inArgs = false
			return nil, p.errorf(p.tok.off, "%s: the argument list opened at offset %d is not closed", name, open)
		case tokComma:
			// HBase separates arguments by commas or spaces alike.
		case tokQuoted:
			if p.tok.err != "" {
				p.inArgs = false
				return nil, p.errorf(p.tok.off, "%s: %s", name, p.tok.err)
			}
			args = append(args, filterArg{quoted: true, text: p.tok.text, off: p.tok.off})
		case tokWord:
			args = append(args, filterArg{text: p.tok.text, off: p.tok.off})
		default:
			p.inArgs = false
			return nil, p.errorf(p.tok.off, "%s: unexpected %s in the argument list", name, p.tok.describe())
		}
		p.next()
	}
	p.inArgs = false
	p.next()
	b := &argReader{p: p, name: name, off: nameOff, args: args}
	return build(b)
}

// argReader hands a filter builder its arguments with their checks.
type argReader struct {
	p    *filterParser
	name string
	off  int
	args []filterArg
}

func (a *argReader) errorf(off int, format string, args ...any) error {
	return a.p.errorf(off, "%s: %s", a.name, fmt.Sprintf(format, args...))
}

// count checks the number of arguments against the allowed counts.
func (a *argReader) count(allowed ...int) error {
	for _, n := range allowed {
		if len(a.args) == n {
			return nil
		}
	}
	want := ""
	for i, n := range allowed {
		if i > 0 {
			if i == len(allowed)-1 {
				want += " or "
			} else {
				want += ", "
			}
		}
		want += strconv.Itoa(n)
	}
	return a.errorf(a.off, "expected %s arguments, got %d", want, len(a.args))
}

func (a *argReader) bytes(i int) ([]byte, error) {
	arg := a.args[i]
	if !arg.quoted {
		return nil, a.errorf(arg.off, "argument %d must be a quoted string, got %s", i+1, arg.text)
	}
	return []byte(arg.text), nil
}

func (a *argReader) long(i int) (int64, error) {
	arg := a.args[i]
	if arg.quoted {
		return 0, a.errorf(arg.off, "argument %d must be an integer, got a quoted string", i+1)
	}
	// HBase's convertByteArrayToLong: an optional minus, then digits.
	s := arg.text
	digits := s
	if len(digits) > 0 && digits[0] == '-' {
		digits = digits[1:]
	}
	if digits == "" {
		return 0, a.errorf(arg.off, "argument %d must be an integer, got %q", i+1, s)
	}
	for j := 0; j < len(digits); j++ {
		if digits[j] < '0' || digits[j] > '9' {
			return 0, a.errorf(arg.off, "argument %d must be an integer, got %q", i+1, s)
		}
	}
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, a.errorf(arg.off, "argument %d: integer %s is out of range", i+1, s)
	}
	return v, nil
}

func (a *argReader) int(i int) (int32, error) {
	v, err := a.long(i)
	if err != nil {
		return 0, err
	}
	if v > 1<<31-1 || v < -1<<31 {
		return 0, a.errorf(a.args[i].off, "argument %d: integer %d does not fit in an int", i+1, v)
	}
	return int32(v), nil
}

func (a *argReader) bool(i int) (bool, error) {
	arg := a.args[i]
	if !arg.quoted {
		switch lowerASCII(arg.text) {
		case "true":
			return true, nil
		case "false":
			return false, nil
		}
	}
	return false, a.errorf(arg.off, "argument %d must be true or false, got %s", i+1, argText(arg))
}

func argText(arg filterArg) string {
	if arg.quoted {
		return "'" + arg.text + "'"
	}
	return arg.text
}

func lowerASCII(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c >= 'A' && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

func (a *argReader) op(i int) (CompareOp, error) {
	arg := a.args[i]
	if !arg.quoted {
		switch arg.text {
		case "<":
			return CompareLess, nil
		case "<=":
			return CompareLessOrEqual, nil
		case ">":
			return CompareGreater, nil
		case ">=":
			return CompareGreaterOrEqual, nil
		case "!=":
			return CompareNotEqual, nil
		case "=":
			return CompareEqual, nil
		}
	}
	return 0, a.errorf(arg.off, "argument %d must be a compare operator (<, <=, =, !=, >=, >), got %s", i+1, argText(arg))
}

// comparator parses 'type:value'. With op, it refuses regexstring and
// substring with operators other than = and !=, as HBase does.
func (a *argReader) comparator(i int, op CompareOp) (ByteArrayComparable, error) {
	arg := a.args[i]
	if !arg.quoted {
		return nil, a.errorf(arg.off, "argument %d must be a quoted comparator 'type:value', got %s", i+1, arg.text)
	}
	typ, value, ok := cutByte(arg.text, ':')
	if !ok {
		return nil, a.errorf(arg.off, "comparator %q has no type (binary:, binaryprefix:, regexstring: or substring:)", arg.text)
	}
	var c ByteArrayComparable
	switch typ {
	case "binary":
		c = NewBinaryComparator([]byte(value))
	case "binaryprefix":
		c = NewBinaryPrefixComparator([]byte(value))
	case "regexstring", "substring":
		if op != CompareEqual && op != CompareNotEqual {
			return nil, a.errorf(arg.off, "a regexstring comparator and substring comparator can only be used with EQUAL and NOT_EQUAL")
		}
		if typ == "substring" {
			c = NewSubstringComparator(value)
			break
		}
		rc, err := NewRegexStringComparator(value, DefaultRegexFlags, "", "")
		if err != nil {
			return nil, a.errorf(arg.off, "%v", err)
		}
		c = rc
	default:
		return nil, a.errorf(arg.off, "unknown comparator type %q (binary, binaryprefix, regexstring or substring)", typ)
	}
	return c, nil
}

func cutByte(s string, sep byte) (before, after string, ok bool) {
	for i := 0; i < len(s); i++ {
		if s[i] == sep {
			return s[:i], s[i+1:], true
		}
	}
	return s, "", false
}

// wrapErr turns a constructor's error into a parse error at the filter.
func (a *argReader) wrapErr(err error) error {
	if err == nil {
		return nil
	}
	return a.errorf(a.off, "%v", err)
}

// compareArgs reads (op, 'comparator') at i.
func (a *argReader) compareArgs(i int) (CompareOp, ByteArrayComparable, error) {
	op, err := a.op(i)
	if err != nil {
		return 0, nil, err
	}
	c, err := a.comparator(i+1, op)
	return op, c, err
}

var filterBuilders map[string]func(*argReader) (Filter, error)

func init() {
	compare := func(mk func(CompareOp, ByteArrayComparable) Filter) func(*argReader) (Filter, error) {
		return func(a *argReader) (Filter, error) {
			if err := a.count(2); err != nil {
				return nil, err
			}
			op, c, err := a.compareArgs(0)
			if err != nil {
				return nil, err
			}
			return mk(op, c), nil
		}
	}
	oneBytes := func(mk func([]byte) Filter) func(*argReader) (Filter, error) {
		return func(a *argReader) (Filter, error) {
			if err := a.count(1); err != nil {
				return nil, err
			}
			b, err := a.bytes(0)
			if err != nil {
				return nil, err
			}
			return mk(b), nil
		}
	}
	// columnValue reads SingleColumnValueFilter's forms: family,
	// qualifier, op, comparator, and optionally filterIfMissing and
	// latestVersionOnly.
	// columnValue builds a SingleColumnValueFilter from (family, qualifier,
	// op, comparator[, filterIfMissing, latestVersionOnly]); the Exclude
	// variant wraps it.
	columnValue := func(a *argReader) (*SingleColumnValueFilter, error) {
		if err := a.count(4, 6); err != nil {
			return nil, err
		}
		fam, err := a.bytes(0)
		if err != nil {
			return nil, err
		}
		qual, err := a.bytes(1)
		if err != nil {
			return nil, err
		}
		op, c, err := a.compareArgs(2)
		if err != nil {
			return nil, err
		}
		f := NewSingleColumnValueFilter(fam, qual, op, c)
		if len(a.args) == 6 {
			ifMissing, err := a.bool(4)
			if err != nil {
				return nil, err
			}
			latest, err := a.bool(5)
			if err != nil {
				return nil, err
			}
			f.SetFilterIfMissing(ifMissing)
			f.SetLatestVersionOnly(latest)
		}
		return f, nil
	}
	filterBuilders = map[string]func(*argReader) (Filter, error){
		"KeyOnlyFilter": func(a *argReader) (Filter, error) {
			if err := a.count(0, 1); err != nil {
				return nil, err
			}
			lenAsVal := false
			if len(a.args) == 1 {
				var err error
				if lenAsVal, err = a.bool(0); err != nil {
					return nil, err
				}
			}
			return NewKeyOnlyFilter(lenAsVal), nil
		},
		"FirstKeyOnlyFilter": func(a *argReader) (Filter, error) {
			if err := a.count(0); err != nil {
				return nil, err
			}
			return NewFirstKeyOnlyFilter(), nil
		},
		"PrefixFilter":        oneBytes(func(b []byte) Filter { return NewPrefixFilter(b) }),
		"ColumnPrefixFilter":  oneBytes(func(b []byte) Filter { return NewColumnPrefixFilter(b) }),
		"InclusiveStopFilter": oneBytes(func(b []byte) Filter { return NewInclusiveStopFilter(b) }),
		"MultipleColumnPrefixFilter": func(a *argReader) (Filter, error) {
			var prefixes [][]byte
			for i := range a.args {
				b, err := a.bytes(i)
				if err != nil {
					return nil, err
				}
				prefixes = append(prefixes, b)
			}
			f, err := NewMultipleColumnPrefixFilter(prefixes)
			return f, a.wrapErr(err)
		},
		"ColumnCountGetFilter": func(a *argReader) (Filter, error) {
			if err := a.count(1); err != nil {
				return nil, err
			}
			n, err := a.int(0)
			if err != nil {
				return nil, err
			}
			f, err := NewColumnCountGetFilter(n)
			return f, a.wrapErr(err)
		},
		"PageFilter": func(a *argReader) (Filter, error) {
			if err := a.count(1); err != nil {
				return nil, err
			}
			n, err := a.long(0)
			if err != nil {
				return nil, err
			}
			if n < 0 {
				return nil, a.errorf(a.args[0].off, "page size must be >= 0, got %d", n)
			}
			return NewPageFilter(n), nil
		},
		"ColumnPaginationFilter": func(a *argReader) (Filter, error) {
			if err := a.count(2); err != nil {
				return nil, err
			}
			limit, err := a.int(0)
			if err != nil {
				return nil, err
			}
			offset, err := a.int(1)
			if err != nil {
				return nil, err
			}
			f, err := NewColumnPaginationFilter(limit, offset)
			return f, a.wrapErr(err)
		},
		"TimestampsFilter": func(a *argReader) (Filter, error) {
			var ts []int64
			for i := range a.args {
				v, err := a.long(i)
				if err != nil {
					return nil, err
				}
				ts = append(ts, v)
			}
			f, err := NewTimestampsFilter(ts, false)
			return f, a.wrapErr(err)
		},
		"RowFilter":       compare(func(op CompareOp, c ByteArrayComparable) Filter { return NewRowFilter(op, c) }),
		"FamilyFilter":    compare(func(op CompareOp, c ByteArrayComparable) Filter { return NewFamilyFilter(op, c) }),
		"QualifierFilter": compare(func(op CompareOp, c ByteArrayComparable) Filter { return NewQualifierFilter(op, c) }),
		"ValueFilter":     compare(func(op CompareOp, c ByteArrayComparable) Filter { return NewValueFilter(op, c) }),
		"ColumnRangeFilter": func(a *argReader) (Filter, error) {
			if err := a.count(4); err != nil {
				return nil, err
			}
			lo, err := a.bytes(0)
			if err != nil {
				return nil, err
			}
			loIncl, err := a.bool(1)
			if err != nil {
				return nil, err
			}
			hi, err := a.bytes(2)
			if err != nil {
				return nil, err
			}
			hiIncl, err := a.bool(3)
			if err != nil {
				return nil, err
			}
			// An empty bound is no bound, as in HBase.
			if len(lo) == 0 {
				lo = nil
			}
			if len(hi) == 0 {
				hi = nil
			}
			return NewColumnRangeFilter(lo, loIncl, hi, hiIncl), nil
		},
		"SingleColumnValueFilter": func(a *argReader) (Filter, error) {
			f, err := columnValue(a)
			if err != nil {
				return nil, err // not a typed nil in the interface
			}
			return f, nil
		},
		"SingleColumnValueExcludeFilter": func(a *argReader) (Filter, error) {
			f, err := columnValue(a)
			if err != nil {
				return nil, err
			}
			return &SingleColumnValueExcludeFilter{*f}, nil
		},
		"DependentColumnFilter": func(a *argReader) (Filter, error) {
			if err := a.count(2, 3, 5); err != nil {
				return nil, err
			}
			fam, err := a.bytes(0)
			if err != nil {
				return nil, err
			}
			qual, err := a.bytes(1)
			if err != nil {
				return nil, err
			}
			drop := false
			if len(a.args) >= 3 {
				if drop, err = a.bool(2); err != nil {
					return nil, err
				}
			}
			op, c := CompareNoOp, ByteArrayComparable(nil)
			if len(a.args) == 5 {
				if op, c, err = a.compareArgs(3); err != nil {
					return nil, err
				}
			}
			return NewDependentColumnFilter(fam, qual, drop, op, c), nil
		},
		"ColumnValueFilter": func(a *argReader) (Filter, error) {
			if err := a.count(4); err != nil {
				return nil, err
			}
			fam, err := a.bytes(0)
			if err != nil {
				return nil, err
			}
			qual, err := a.bytes(1)
			if err != nil {
				return nil, err
			}
			op, c, err := a.compareArgs(2)
			if err != nil {
				return nil, err
			}
			f, err := NewColumnValueFilter(fam, qual, op, c)
			return f, a.wrapErr(err)
		},
	}
}

// ParseFilterNames returns the names of the filters ParseFilter knows.
func ParseFilterNames() []string {
	names := make([]string, 0, len(filterBuilders))
	for n := range filterBuilders {
		names = append(names, n)
	}
	return names
}
