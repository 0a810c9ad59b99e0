package shell

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"
)

// The shell's language is the part of Ruby that HBase shell commands are
// written in: a statement is a command name and its arguments, with or
// without parentheses, separated by commas; statements end at a newline
// or a ';'. Arguments are Ruby literals: 'single' and "double" quoted
// strings (with Ruby's escapes in double quotes: \n, \t, \xNN, \NNN, \u{...},
// ...), integers (1_000, 0x1F, 0b101, 017), floats, true, false, nil,
// arrays [a, b], hashes {KEY => value}, and constants (NAME, VERSIONS, ...),
// which stand for their own names, as HBase's HBaseConstants define them.
// Trailing KEY => value arguments form one hash, as in Ruby. A # starts a
// comment. Anything else of Ruby (variables, blocks, method calls on
// objects, string interpolation) is a syntax error.

// Pos is a position in the input: 1-based line and column (in bytes).
type Pos struct{ Line, Col int }

func (p Pos) String() string { return fmt.Sprintf("line %d, column %d", p.Line, p.Col) }

// SyntaxError is input that does not parse.
type SyntaxError struct {
	Pos Pos
	Msg string
	// Incomplete is set when more input could complete the statement (an
	// open bracket or string, a trailing comma): the interactive shell
	// then reads another line.
	Incomplete bool
}

func (e *SyntaxError) Error() string { return fmt.Sprintf("SyntaxError: %s: %s", e.Pos, e.Msg) }

// Value is a Ruby value of the shell's language.
type Value interface{ pos() Pos }

type (
	// Str is a Ruby String: bytes, not necessarily UTF-8.
	Str struct {
		B []byte
		P Pos
		// Const is set when the string came from a constant (NAME).
		Const bool
	}
	// Int is a Ruby Integer that fits in 64 bits.
	Int struct {
		V int64
		P Pos
	}
	// Float is a Ruby Float.
	Float struct {
		V float64
		P Pos
	}
	// Bool is true or false.
	Bool struct {
		V bool
		P Pos
	}
	// Nil is nil.
	Nil struct{ P Pos }
	// Array is a Ruby Array.
	Array struct {
		Elems []Value
		P     Pos
	}
	// Hash is a Ruby Hash, in insertion order; a key given twice keeps its
	// first place and its last value, as in Ruby.
	Hash struct {
		Keys, Vals []Value
		P          Pos
	}
)

func (v *Str) pos() Pos   { return v.P }
func (v *Int) pos() Pos   { return v.P }
func (v *Float) pos() Pos { return v.P }
func (v *Bool) pos() Pos  { return v.P }
func (v *Nil) pos() Pos   { return v.P }
func (v *Array) pos() Pos { return v.P }
func (v *Hash) pos() Pos  { return v.P }

// Get returns the value of the string key k, if the hash has it.
func (h *Hash) Get(k string) (Value, bool) {
	for i, key := range h.Keys {
		if s, ok := key.(*Str); ok && string(s.B) == k {
			return h.Vals[i], true
		}
	}
	return nil, false
}

func (h *Hash) set(k, v Value) {
	for i, key := range h.Keys {
		if equalValues(key, k) {
			h.Vals[i] = v
			return
		}
	}
	h.Keys = append(h.Keys, k)
	h.Vals = append(h.Vals, v)
}

func equalValues(a, b Value) bool { return inspect(a) == inspect(b) }

// Statement is one command call.
type Statement struct {
	Name string
	Args []Value
	Pos  Pos
	// Text is the statement's source, for history and messages.
	Text string
}

// Parse parses a script into statements.
func Parse(src string) ([]Statement, error) {
	p := &parser{lx: lexer{src: src, line: 1, col: 1}}
	p.advance()
	var out []Statement
	for {
		for p.tok.kind == tNewline || p.tok.kind == tSemi {
			p.advance()
		}
		if p.tok.kind == tEOF {
			return out, nil
		}
		st, err := p.statement()
		if err != nil {
			return nil, err
		}
		out = append(out, st)
	}
}

type tokenKind int

const (
	tEOF tokenKind = iota
	tNewline
	tSemi
	tIdent  // lower-case name: a command, true, false, nil
	tConst  // upper-case name: a constant
	tString // a string literal
	tInt
	tFloat
	tComma
	tArrow // =>
	tLParen
	tRParen
	tLBrack
	tRBrack
	tLBrace
	tRBrace
	tMinus
	tOther // anything else: an error where it is used
)

type token struct {
	kind  tokenKind
	pos   Pos
	off   int    // byte offset
	text  string // identifier, number (as base:digits) or the character
	raw   string // the number as written
	bytes []byte // a string literal's value
	// spaceBefore is set when whitespace precedes the token on its line.
	spaceBefore bool
}

func (t token) describe() string {
	switch t.kind {
	case tEOF:
		return "end of input"
	case tNewline:
		return "end of line"
	case tString:
		return "string literal"
	case tInt, tFloat:
		return "number " + t.raw
	case tIdent, tConst:
		return "'" + t.text + "'"
	}
	return "'" + t.text + "'"
}

type lexer struct {
	src       string
	off       int
	line, col int
}

func (lx *lexer) pos() Pos { return Pos{lx.line, lx.col} }

func (lx *lexer) peekByte(k int) byte {
	if lx.off+k < len(lx.src) {
		return lx.src[lx.off+k]
	}
	return 0
}

func (lx *lexer) bump() byte {
	c := lx.src[lx.off]
	lx.off++
	if c == '\n' {
		lx.line++
		lx.col = 1
	} else {
		lx.col++
	}
	return c
}

func isIdentStart(c byte) bool { return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
func isIdentByte(c byte) bool  { return isIdentStart(c) || c >= '0' && c <= '9' }

// next returns the next token, or a syntax error.
func (lx *lexer) next() (token, error) {
	space := false
	for lx.off < len(lx.src) {
		c := lx.src[lx.off]
		if c == ' ' || c == '\t' || c == '\r' {
			lx.bump()
			space = true
			continue
		}
		if c == '\\' && lx.peekByte(1) == '\n' { // a line continued
			lx.bump()
			lx.bump()
			space = true
			continue
		}
		if c == '#' {
			for lx.off < len(lx.src) && lx.src[lx.off] != '\n' {
				lx.bump()
			}
			continue
		}
		break
	}
	t := token{pos: lx.pos(), off: lx.off, spaceBefore: space}
	if lx.off >= len(lx.src) {
		t.kind = tEOF
		return t, nil
	}
	c := lx.src[lx.off]
	single := map[byte]tokenKind{'\n': tNewline, ';': tSemi, ',': tComma, '(': tLParen, ')': tRParen,
		'[': tLBrack, ']': tRBrack, '{': tLBrace, '}': tRBrace}
	switch {
	case c == '=' && lx.peekByte(1) == '>':
		lx.bump()
		lx.bump()
		t.kind, t.text = tArrow, "=>"
	case single[c] != 0 || c == '\n':
		lx.bump()
		t.kind, t.text = single[c], string(c)
	case c == '-':
		lx.bump()
		t.kind, t.text = tMinus, "-"
	case c == '\'' || c == '"':
		b, err := lx.stringLit()
		if err != nil {
			return t, err
		}
		t.kind, t.bytes = tString, b
	case c >= '0' && c <= '9':
		return lx.number(t)
	case isIdentStart(c):
		for lx.off < len(lx.src) && isIdentByte(lx.src[lx.off]) {
			lx.bump()
		}
		// Ruby method names may end in ? or ! (is_enabled? is not a shell
		// command, but say so clearly rather than fail on the '?').
		if lx.off < len(lx.src) && (lx.src[lx.off] == '?' || lx.src[lx.off] == '!') {
			lx.bump()
		}
		t.text = lx.src[t.off:lx.off]
		t.kind = tIdent
		if t.text[0] >= 'A' && t.text[0] <= 'Z' {
			t.kind = tConst
		}
	default:
		r, n := utf8.DecodeRuneInString(lx.src[lx.off:])
		for i := 0; i < n; i++ {
			lx.bump()
		}
		t.kind, t.text = tOther, string(r)
	}
	return t, nil
}

func (lx *lexer) number(t token) (token, error) {
	start := lx.off
	for lx.off < len(lx.src) && (isIdentByte(lx.src[lx.off]) || lx.src[lx.off] == '.' && lx.peekByte(1) >= '0' && lx.peekByte(1) <= '9' ||
		(lx.src[lx.off] == '+' || lx.src[lx.off] == '-') && (lx.src[lx.off-1] == 'e' || lx.src[lx.off-1] == 'E') &&
			!strings.HasPrefix(strings.ToLower(lx.src[start:]), "0x")) {
		lx.bump()
	}
	text := lx.src[start:lx.off]
	t.text, t.raw = text, text
	clean := strings.ReplaceAll(text, "_", "")
	if strings.HasSuffix(text, "_") || strings.Contains(text, "__") {
		return t, &SyntaxError{Pos: t.pos, Msg: fmt.Sprintf("trailing '_' in number %s", text)}
	}
	lower := strings.ToLower(clean)
	if strings.ContainsAny(lower, ".") || !strings.HasPrefix(lower, "0x") && strings.ContainsAny(lower, "e") {
		f, err := strconv.ParseFloat(clean, 64)
		if err != nil || math.IsInf(f, 0) {
			return t, &SyntaxError{Pos: t.pos, Msg: fmt.Sprintf("bad number %s", text)}
		}
		t.kind = tFloat
		return t, nil
	}
	base, digits := 10, lower
	switch {
	case strings.HasPrefix(lower, "0x"):
		base, digits = 16, lower[2:]
	case strings.HasPrefix(lower, "0b"):
		base, digits = 2, lower[2:]
	case strings.HasPrefix(lower, "0o"):
		base, digits = 8, lower[2:]
	case strings.HasPrefix(lower, "0d"):
		base, digits = 10, lower[2:]
	case len(lower) > 1 && lower[0] == '0':
		base, digits = 8, lower[1:]
	}
	if _, err := strconv.ParseUint(digits, base, 64); err != nil {
		if ne, ok := err.(*strconv.NumError); ok && ne.Err == strconv.ErrRange {
			return t, &SyntaxError{Pos: t.pos, Msg: fmt.Sprintf("integer %s does not fit in 64 bits", text)}
		}
		return t, &SyntaxError{Pos: t.pos, Msg: fmt.Sprintf("bad number %s", text)}
	}
	t.kind, t.text = tInt, strconv.Itoa(base)+":"+digits
	return t, nil
}

// stringLit reads a quoted string with Ruby's rules: in single quotes only
// \\ and \' are escapes; double quotes have the full set.
func (lx *lexer) stringLit() ([]byte, error) {
	start := lx.pos()
	q := lx.bump()
	var b []byte
	for {
		if lx.off >= len(lx.src) {
			return nil, &SyntaxError{Pos: start, Msg: "unterminated string meets end of input", Incomplete: true}
		}
		c := lx.bump()
		if c == q {
			return b, nil
		}
		if q == '"' && c == '#' && lx.peekByte(0) == '{' {
			return nil, &SyntaxError{Pos: Pos{lx.line, lx.col - 1}, Msg: "string interpolation (#{...}) is not supported"}
		}
		if c != '\\' {
			b = append(b, c)
			continue
		}
		if lx.off >= len(lx.src) {
			return nil, &SyntaxError{Pos: start, Msg: "unterminated string meets end of input", Incomplete: true}
		}
		escPos := Pos{lx.line, lx.col - 1}
		e := lx.bump()
		if q == '\'' {
			if e != '\\' && e != '\'' {
				b = append(b, '\\')
			}
			b = append(b, e)
			continue
		}
		switch e {
		case 'n':
			b = append(b, '\n')
		case 't':
			b = append(b, '\t')
		case 'r':
			b = append(b, '\r')
		case 's':
			b = append(b, ' ')
		case 'a':
			b = append(b, 7)
		case 'b':
			b = append(b, 8)
		case 'e':
			b = append(b, 27)
		case 'f':
			b = append(b, 12)
		case 'v':
			b = append(b, 11)
		case '\n': // a continued line adds nothing
		case 'x':
			v, n := 0, 0
			for n < 2 && isHex(lx.peekByte(0)) {
				v = v*16 + hexVal(lx.bump())
				n++
			}
			if n == 0 {
				return nil, &SyntaxError{Pos: escPos, Msg: "invalid hex escape (\\x needs a hex digit)"}
			}
			b = append(b, byte(v))
		case '0', '1', '2', '3', '4', '5', '6', '7':
			v, n := int(e-'0'), 1
			for n < 3 && lx.peekByte(0) >= '0' && lx.peekByte(0) <= '7' {
				v = v*8 + int(lx.bump()-'0')
				n++
			}
			b = append(b, byte(v))
		case 'u':
			var runes []rune
			if lx.peekByte(0) == '{' {
				lx.bump()
				for {
					for lx.peekByte(0) == ' ' {
						lx.bump()
					}
					if lx.peekByte(0) == '}' {
						lx.bump()
						break
					}
					v, n := 0, 0
					for n < 6 && isHex(lx.peekByte(0)) {
						v = v*16 + hexVal(lx.bump())
						n++
					}
					if n == 0 {
						return nil, &SyntaxError{Pos: escPos, Msg: "invalid Unicode escape"}
					}
					runes = append(runes, rune(v))
				}
			} else {
				v := 0
				for n := 0; n < 4; n++ {
					if !isHex(lx.peekByte(0)) {
						return nil, &SyntaxError{Pos: escPos, Msg: "invalid Unicode escape (\\u needs 4 hex digits)"}
					}
					v = v*16 + hexVal(lx.bump())
				}
				runes = append(runes, rune(v))
			}
			for _, r := range runes {
				if r > utf8.MaxRune || r >= 0xD800 && r <= 0xDFFF {
					return nil, &SyntaxError{Pos: escPos, Msg: fmt.Sprintf("invalid Unicode code point %#x", r)}
				}
				b = utf8.AppendRune(b, r)
			}
		default:
			b = append(b, e) // \\, \", \# and any other character stand for themselves
		}
	}
}

func isHex(c byte) bool { return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F' }

func hexVal(c byte) int {
	switch {
	case c >= '0' && c <= '9':
		return int(c - '0')
	case c >= 'a' && c <= 'f':
		return int(c-'a') + 10
	}
	return int(c-'A') + 10
}

type parser struct {
	lx  lexer
	tok token
	err error // a lexing error, returned by the next expect
	// depth counts open brackets: newlines inside them are spaces.
	depth int
}

func (p *parser) advance() {
	if p.err != nil {
		return
	}
	for {
		t, err := p.lx.next()
		if err != nil {
			p.err = err
			p.tok = token{kind: tEOF, pos: t.pos}
			return
		}
		if t.kind == tNewline && p.depth > 0 {
			continue
		}
		p.tok = t
		return
	}
}

// errorf returns a syntax error at the current token (or the lexing error
// that stopped the input).
func (p *parser) errorf(format string, args ...any) error {
	if p.err != nil {
		return p.err
	}
	return &SyntaxError{Pos: p.tok.pos, Msg: fmt.Sprintf(format, args...), Incomplete: p.tok.kind == tEOF}
}

func (p *parser) unexpected(what string) error {
	return p.errorf("unexpected %s, expecting %s", p.tok.describe(), what)
}

// skipNewlines skips line ends where a statement cannot end (after a comma
// or an arrow).
func (p *parser) skipNewlines() {
	for p.tok.kind == tNewline {
		p.advance()
	}
}

func (p *parser) statement() (Statement, error) {
	if p.tok.kind != tIdent {
		if p.tok.kind == tConst {
			return Statement{}, p.errorf("%s is not a command (commands are lower case; try help)", p.tok.text)
		}
		return Statement{}, p.unexpected("a command")
	}
	st := Statement{Name: p.tok.text, Pos: p.tok.pos}
	start := p.tok.off
	p.advance()
	switch p.tok.kind {
	case tOther:
		switch p.tok.text {
		case "=":
			return st, p.errorf("assignment is not supported: commands' results cannot be kept in variables")
		case ".":
			return st, p.errorf("method calls (%s.) are not supported: write the command with the table as its first argument", st.Name)
		}
	}
	var err error
	if p.tok.kind == tLParen && !p.tok.spaceBefore {
		// name(args): the arguments end at the parenthesis.
		p.depth++
		p.advance()
		if p.tok.kind == tRParen {
			p.depth--
			p.advance()
		} else {
			if st.Args, err = p.args(); err != nil {
				return st, err
			}
			if p.tok.kind != tRParen {
				return st, p.unexpected("')'")
			}
			p.depth--
			p.advance()
		}
	} else if p.tok.kind != tNewline && p.tok.kind != tSemi && p.tok.kind != tEOF {
		if st.Args, err = p.args(); err != nil {
			return st, err
		}
	}
	if p.err != nil {
		return st, p.err
	}
	switch p.tok.kind {
	case tNewline, tSemi, tEOF:
	default:
		return st, p.unexpected("',' or the end of the statement")
	}
	st.Text = strings.TrimSpace(p.lx.src[start:p.tok.off])
	st.Text = strings.TrimSpace(st.Name + " " + strings.TrimPrefix(st.Text, st.Name))
	return st, nil
}

// args parses a comma-separated argument list; trailing key => value
// pairs become one hash.
func (p *parser) args() ([]Value, error) {
	var out []Value
	var trailing *Hash
	for {
		v, err := p.value()
		if err != nil {
			return nil, err
		}
		if p.tok.kind == tArrow {
			if trailing == nil {
				trailing = &Hash{P: v.pos()}
				out = append(out, trailing)
			}
			p.advance()
			p.skipNewlines()
			val, err := p.value()
			if err != nil {
				return nil, err
			}
			trailing.set(v, val)
		} else {
			if trailing != nil {
				return nil, &SyntaxError{Pos: v.pos(), Msg: "a positional argument cannot follow KEY => value arguments"}
			}
			out = append(out, v)
		}
		if p.tok.kind != tComma {
			return out, nil
		}
		p.advance()
		p.skipNewlines()
	}
}

func (p *parser) value() (Value, error) {
	t := p.tok
	switch t.kind {
	case tString:
		p.advance()
		return &Str{B: t.bytes, P: t.pos}, nil
	case tInt:
		p.advance()
		return intValue(t, false)
	case tFloat:
		p.advance()
		f, _ := strconv.ParseFloat(strings.ReplaceAll(t.text, "_", ""), 64)
		return &Float{V: f, P: t.pos}, nil
	case tMinus:
		p.advance()
		n := p.tok
		switch n.kind {
		case tInt:
			p.advance()
			return intValue(n, true)
		case tFloat:
			p.advance()
			f, _ := strconv.ParseFloat(strings.ReplaceAll(n.text, "_", ""), 64)
			return &Float{V: -f, P: t.pos}, nil
		}
		return nil, p.unexpected("a number after '-'")
	case tConst:
		p.advance()
		if p.tok.kind == tOther && (p.tok.text == "." || p.tok.text == ":") {
			return nil, p.errorf("Java and Ruby objects (%s%s...) are not supported: write a filter as a filter string, e.g. \"PrefixFilter('r')\"", t.text, p.tok.text)
		}
		return &Str{B: []byte(t.text), P: t.pos, Const: true}, nil
	case tIdent:
		p.advance()
		switch t.text {
		case "true", "false":
			return &Bool{V: t.text == "true", P: t.pos}, nil
		case "nil":
			return &Nil{P: t.pos}, nil
		}
		return nil, &SyntaxError{Pos: t.pos, Msg: fmt.Sprintf("undefined local variable or method '%s' (strings need quotes)", t.text)}
	case tLBrack:
		p.depth++
		p.advance()
		a := &Array{P: t.pos}
		for p.tok.kind != tRBrack {
			v, err := p.value()
			if err != nil {
				return nil, err
			}
			a.Elems = append(a.Elems, v)
			if p.tok.kind == tComma {
				p.advance()
				continue
			}
			if p.tok.kind != tRBrack {
				return nil, p.unexpected("',' or ']'")
			}
		}
		p.depth--
		p.advance()
		return a, nil
	case tLBrace:
		p.depth++
		p.advance()
		h := &Hash{P: t.pos}
		for p.tok.kind != tRBrace {
			k, err := p.value()
			if err != nil {
				return nil, err
			}
			if p.tok.kind != tArrow {
				return nil, p.unexpected("'=>'")
			}
			p.advance()
			v, err := p.value()
			if err != nil {
				return nil, err
			}
			h.set(k, v)
			if p.tok.kind == tComma {
				p.advance()
				continue
			}
			if p.tok.kind != tRBrace {
				return nil, p.unexpected("',' or '}'")
			}
		}
		p.depth--
		p.advance()
		return h, nil
	}
	return nil, p.unexpected("a value")
}

func intValue(t token, neg bool) (Value, error) {
	base, digits, _ := strings.Cut(t.text, ":")
	b, _ := strconv.Atoi(base)
	u, _ := strconv.ParseUint(digits, b, 64)
	if neg {
		if u > 1<<63 {
			return nil, &SyntaxError{Pos: t.pos, Msg: "integer does not fit in 64 bits"}
		}
		return &Int{V: -int64(u), P: t.pos}, nil
	}
	if u > math.MaxInt64 {
		return nil, &SyntaxError{Pos: t.pos, Msg: "integer does not fit in 64 bits"}
	}
	return &Int{V: int64(u), P: t.pos}, nil
}

// inspect returns Ruby's inspect of a value: what the shell prints after
// "=> ".
func inspect(v Value) string {
	switch v := v.(type) {
	case *Str:
		return rubyQuote(v.B)
	case *Int:
		return strconv.FormatInt(v.V, 10)
	case *Float:
		return rubyFloat(v.V)
	case *Bool:
		return strconv.FormatBool(v.V)
	case *Nil, nil:
		return "nil"
	case *Array:
		parts := make([]string, len(v.Elems))
		for i, e := range v.Elems {
			parts[i] = inspect(e)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case *Hash:
		parts := make([]string, len(v.Keys))
		for i := range v.Keys {
			parts[i] = inspect(v.Keys[i]) + "=>" + inspect(v.Vals[i])
		}
		return "{" + strings.Join(parts, ", ") + "}"
	}
	return fmt.Sprintf("%v", v)
}

func rubyFloat(f float64) string {
	s := strconv.FormatFloat(f, 'g', -1, 64)
	if !strings.ContainsAny(s, ".eIN") {
		s += ".0"
	}
	return s
}

// rubyQuote is Ruby's String#inspect for a binary string: printable ASCII
// as is, the usual escapes, other bytes as \xNN.
func rubyQuote(b []byte) string {
	var sb strings.Builder
	sb.WriteByte('"')
	for i := 0; i < len(b); i++ {
		c := b[i]
		switch c {
		case '"', '\\':
			sb.WriteByte('\\')
			sb.WriteByte(c)
		case '\n':
			sb.WriteString(`\n`)
		case '\t':
			sb.WriteString(`\t`)
		case '\r':
			sb.WriteString(`\r`)
		case 27:
			sb.WriteString(`\e`)
		case '#':
			if i+1 < len(b) && (b[i+1] == '{' || b[i+1] == '$' || b[i+1] == '@') {
				sb.WriteByte('\\')
			}
			sb.WriteByte(c)
		default:
			if c >= 0x20 && c < 0x7f {
				sb.WriteByte(c)
			} else {
				fmt.Fprintf(&sb, `\x%02X`, c)
			}
		}
	}
	sb.WriteByte('"')
	return sb.String()
}
