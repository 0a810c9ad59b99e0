package filter

import (
	"regexp"
	"strings"
	"unicode/utf8"
)

// Java's java.util.regex.Pattern flags, as RegexStringComparator carries
// them in its pattern_flags field.
const (
	RegexUnixLines             int32 = 0x01
	RegexCaseInsensitive       int32 = 0x02
	RegexComments              int32 = 0x04
	RegexMultiline             int32 = 0x08
	RegexLiteral               int32 = 0x10
	RegexDotAll                int32 = 0x20
	RegexUnicodeCase           int32 = 0x40
	RegexCanonEq               int32 = 0x80
	RegexUnicodeCharacterClass int32 = 0x100

	// DefaultRegexFlags are the flags HBase's one-argument constructor uses.
	DefaultRegexFlags = RegexDotAll
)

// RegexEngine names the engine HBase would run a RegexStringComparator
// with. Both are served by Go's regexp here; the name only travels.
type RegexEngine string

// Engines, by HBase's EngineType names.
const (
	RegexEngineJava RegexEngine = "JAVA"
	RegexEngineJoni RegexEngine = "JONI"
)

// Charsets a RegexStringComparator can decode values with, by Java's
// canonical names.
const (
	CharsetUTF8   = "UTF-8"
	CharsetLatin1 = "ISO-8859-1"
	CharsetASCII  = "US-ASCII"
)

// RegexStringComparator tests whether a regular expression matches anywhere
// in a value (Java's Matcher.find): HBase's RegexStringComparator. CompareTo
// returns 0 on a match and 1 otherwise, so only EQUAL and NOT_EQUAL make
// sense with it. The value is decoded with the comparator's charset first:
// UTF-8 (the default), ISO-8859-1 (one character per byte, the charset
// HBase recommends for binary rows) or US-ASCII.
//
// The pattern runs on Go's regexp (RE2 syntax), not java.util.regex:
//   - Java-only syntax is rejected when the comparator is built: lookahead
//     and lookbehind, backreferences, possessive quantifiers, atomic groups,
//     \Z, \h, \R, \p{javaXxx} classes.
//   - Only '\n' ends a line. Java also treats \r, \u0085, \u2028 and \u2029
//     as line terminators (unless UNIX_LINES), and its '$' without MULTILINE
//     also matches before a final line terminator; Go's '$' matches only at
//     the very end.
//   - CASE_INSENSITIVE folds all of Unicode, as Java does only with
//     UNICODE_CASE as well.
//   - \w, \d, \s and \b are ASCII-only, as in Java without
//     UNICODE_CHARACTER_CLASS; that flag, COMMENTS and CANON_EQ are
//     rejected.
//   - Invalid UTF-8 matches as U+FFFD, byte by byte.
//
// With the JONI engine HBase honours only CASE_INSENSITIVE, DOTALL and
// MULTILINE and drops the other flags; so does this comparator.
type RegexStringComparator struct {
	pattern string
	flags   int32
	charset string
	engine  RegexEngine
	re      *regexp.Regexp
}

// NewRegexStringComparator compiles expr with Java's Pattern flags (HBase's
// default is DefaultRegexFlags). An empty charset means UTF-8, an empty
// engine JAVA. It fails, with an error marked ErrBadFilter, for syntax or
// flags Go's regexp cannot honour and for charsets it does not know.
func NewRegexStringComparator(expr string, flags int32, charset string, engine RegexEngine) (*RegexStringComparator, error) {
	switch engine {
	case "", RegexEngineJava:
		engine = RegexEngineJava
	case RegexEngineJoni:
		flags &= RegexCaseInsensitive | RegexDotAll | RegexMultiline
	default:
		return nil, badFilterf("RegexStringComparator: unknown engine %q (JAVA or JONI)", engine)
	}
	cs, ok := canonicalCharset(charset)
	if !ok {
		return nil, badFilterf("RegexStringComparator: charset %q is not supported (UTF-8, ISO-8859-1 and US-ASCII are)", charset)
	}
	if bad := flags & (RegexComments | RegexCanonEq | RegexUnicodeCharacterClass); bad != 0 {
		return nil, badFilterf("RegexStringComparator: pattern flags %#x are not supported (COMMENTS, CANON_EQ and UNICODE_CHARACTER_CLASS are not)", bad)
	}
	src := expr
	if flags&RegexLiteral != 0 {
		src = regexp.QuoteMeta(expr)
	}
	var inline string
	if flags&RegexCaseInsensitive != 0 {
		inline += "i"
	}
	if flags&RegexMultiline != 0 {
		inline += "m"
	}
	if flags&RegexDotAll != 0 {
		inline += "s"
	}
	if inline != "" {
		src = "(?" + inline + ")" + src
	}
	re, err := regexp.Compile(src)
	if err != nil {
		return nil, badFilterf("RegexStringComparator: pattern %q: %v", expr, err)
	}
	return &RegexStringComparator{pattern: expr, flags: flags, charset: cs, engine: engine, re: re}, nil
}

// Pattern returns the regular expression as given.
func (c *RegexStringComparator) Pattern() string { return c.pattern }

// Flags returns the Java Pattern flags.
func (c *RegexStringComparator) Flags() int32 { return c.flags }

// Charset returns the canonical name of the charset values are decoded with.
func (c *RegexStringComparator) Charset() string { return c.charset }

// Engine returns the engine name.
func (c *RegexStringComparator) Engine() RegexEngine { return c.engine }

// CompareTo returns 0 if the pattern matches somewhere in value, 1 if not.
func (c *RegexStringComparator) CompareTo(value []byte) int {
	var ok bool
	if c.charset == CharsetUTF8 || isASCII(value) {
		ok = c.re.Match(value)
	} else {
		ok = c.re.MatchString(decodeSingleByte(value, c.charset == CharsetLatin1))
	}
	if ok {
		return 0
	}
	return 1
}

func isASCII(b []byte) bool {
	for _, c := range b {
		if c >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// decodeSingleByte decodes ISO-8859-1 (every byte is the code point of the
// same number) or US-ASCII (bytes above 0x7F are malformed: U+FFFD).
func decodeSingleByte(b []byte, latin1 bool) string {
	var sb strings.Builder
	sb.Grow(len(b) + len(b)/2)
	for _, c := range b {
		switch {
		case c < utf8.RuneSelf:
			sb.WriteByte(c)
		case latin1:
			sb.WriteRune(rune(c))
		default:
			sb.WriteRune(utf8.RuneError)
		}
	}
	return sb.String()
}

// canonicalCharset maps a Java charset name or alias to its canonical name.
func canonicalCharset(name string) (string, bool) {
	switch strings.ToLower(name) {
	case "", "utf-8", "utf8", "unicode-1-1-utf-8":
		return CharsetUTF8, true
	case "iso-8859-1", "iso8859-1", "iso8859_1", "iso_8859_1", "iso_8859-1", "8859_1", "latin1", "l1",
		"iso-latin-1", "cp819", "ibm819", "ibm-819", "csisolatin1", "iso-ir-100", "819":
		return CharsetLatin1, true
	case "us-ascii", "ascii", "us", "iso646-us", "ascii7", "646", "csascii", "cp367", "ibm367",
		"ansi_x3.4-1968", "ansi_x3.4-1986", "iso-ir-6", "default":
		return CharsetASCII, true
	}
	return "", false
}
