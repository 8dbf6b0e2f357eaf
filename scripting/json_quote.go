package scripting

import (
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/dop251/goja"
)

// JSON string quoting as JSON.stringify does it: the two-character escapes, \u00XX for the
// other control characters, \uXXXX for lone surrogates, and everything else as UTF-8.

const hexDigits = "0123456789abcdef"

// appendQuotedValue appends the JSON form of the JavaScript string v, reading UTF-16 code
// units when the string may hold lone surrogates, so that they are escaped, not replaced.
func appendQuotedValue(buf []byte, v goja.Value) []byte {
	s := v.String()
	js, ok := v.(goja.String)
	if !ok || js.Length() == len(s) { // ASCII: one byte per code unit
		return appendQuotedString(buf, s)
	}
	if !strings.ContainsRune(s, utf8.RuneError) {
		// The UTF-8 form of a string has U+FFFD where the string has a lone surrogate (and
		// where it has U+FFFD itself): without any, it is exactly the string's text.
		return appendQuotedString(buf, s)
	}
	return appendQuotedUTF16(buf, js)
}

// appendQuotedUTF16 is appendQuotedValue reading the string one code unit at a time.
func appendQuotedUTF16(buf []byte, js goja.String) []byte {
	buf = append(buf, '"')
	n := js.Length()
	for i := 0; i < n; i++ {
		c := js.CharAt(i)
		switch {
		case c < utf8.RuneSelf:
			buf = appendEscapedASCII(buf, byte(c))
		case utf16.IsSurrogate(rune(c)):
			if c < 0xDC00 && i+1 < n {
				if d := js.CharAt(i + 1); d >= 0xDC00 && d <= 0xDFFF {
					buf = utf8.AppendRune(buf, utf16.DecodeRune(rune(c), rune(d)))
					i++
					continue
				}
			}
			buf = append(buf, '\\', 'u', hexDigits[c>>12], hexDigits[c>>8&0xF], hexDigits[c>>4&0xF], hexDigits[c&0xF])
		default:
			buf = utf8.AppendRune(buf, rune(c))
		}
	}
	return append(buf, '"')
}

// appendQuotedString appends the JSON form of the Go string s (invalid UTF-8 becomes U+FFFD).
// Runs of characters that need no escape are copied whole.
func appendQuotedString(buf []byte, s string) []byte {
	buf = append(buf, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c >= utf8.RuneSelf {
			if r, size := utf8.DecodeRuneInString(s[i:]); r != utf8.RuneError || size > 1 {
				i += size // valid UTF-8 stays as it is
				continue
			}
			buf = utf8.AppendRune(append(buf, s[start:i]...), utf8.RuneError)
		} else if c < 0x20 || c == '"' || c == '\\' {
			buf = appendEscapedASCII(append(buf, s[start:i]...), c)
		} else {
			i++
			continue
		}
		i++
		start = i
	}
	buf = append(buf, s[start:]...)
	return append(buf, '"')
}

// appendEscapedASCII appends one ASCII character, escaped as JSON requires.
func appendEscapedASCII(buf []byte, c byte) []byte {
	switch c {
	case '"', '\\':
		return append(buf, '\\', c)
	case '\b':
		return append(buf, '\\', 'b')
	case '\f':
		return append(buf, '\\', 'f')
	case '\n':
		return append(buf, '\\', 'n')
	case '\r':
		return append(buf, '\\', 'r')
	case '\t':
		return append(buf, '\\', 't')
	}
	if c < 0x20 {
		return append(buf, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
	}
	return append(buf, c)
}
