package scripting

import (
	"bytes"
	"testing"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/dop251/goja"
)

// quoteByByte is appendQuotedString one byte at a time, as it was: the reference.
func quoteByByte(buf []byte, s string) []byte {
	buf = append(buf, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			buf = appendEscapedASCII(buf, c)
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		buf = utf8.AppendRune(buf, r)
		i += size
	}
	return append(buf, '"')
}

// quoteInputs hold every kind of character the quoting treats apart.
var quoteInputs = []string{
	"", "plain ascii", `quote " backslash \ slash /`, "\x00\x01\x1f\x7f \b\f\n\r\t", "é ü 日本 😀",
	"\ufffd real replacement char", "bad \xff\xfe bytes \xc3", "\xed\xa0\x80 utf-8 surrogate", "a\u2028b",
}

// quoteUnits are UTF-16 strings, lone surrogates included.
var quoteUnits = [][]uint16{
	{'a', 0xD800}, {0xDC00, 'b'}, {0xDC00, 0xD800}, {0xD83D, 0xDE00, '"'}, {0xFFFD, 0xD800, 0xDBFF, 0xDFFF},
	{0xE9, 0x65E5}, {0xD83D}, {'x', 0xFFFD},
}

// TestQuoteMatchesByteByByte: quoting by runs gives the bytes quoting by byte gave, and the
// quoting of a JavaScript string gives what reading it one code unit at a time gives.
func TestQuoteMatchesByteByByte(t *testing.T) {
	for _, s := range quoteInputs {
		checkQuote(t, s)
	}
	for _, units := range quoteUnits {
		checkQuoteUnits(t, units)
	}
	for _, s := range quoteInputs {
		checkQuoteUnits(t, utf16.Encode([]rune(s)))
	}
}

// FuzzQuote compares the quotings on arbitrary text and code units.
func FuzzQuote(f *testing.F) {
	for _, s := range quoteInputs {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		checkQuote(t, s)
		units := make([]uint16, 0, len(s)/2)
		for i := 0; i+1 < len(s); i += 2 {
			units = append(units, uint16(s[i])<<8|uint16(s[i+1]))
		}
		checkQuoteUnits(t, units)
	})
}

// checkQuote compares appendQuotedString with quoteByByte.
func checkQuote(t *testing.T, s string) {
	t.Helper()
	if got, want := appendQuotedString([]byte("x"), s), quoteByByte([]byte("x"), s); !bytes.Equal(got, want) {
		t.Fatalf("appendQuotedString(%q) = %q, want %q", s, got, want)
	}
}

// checkQuoteUnits compares appendQuotedValue with appendQuotedUTF16 on a JavaScript string.
func checkQuoteUnits(t *testing.T, units []uint16) {
	t.Helper()
	js := goja.StringFromUTF16(units)
	if got, want := appendQuotedValue(nil, js), appendQuotedUTF16(nil, js); !bytes.Equal(got, want) {
		t.Fatalf("appendQuotedValue(%x) = %q, want %q", units, got, want)
	}
}
