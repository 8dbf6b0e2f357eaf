package jsonread

import (
	"unicode/utf16"
	"unicode/utf8"
)

// str skips the string token at r.pos: no control characters, valid escapes only, and unless
// the mode allows invalid Unicode, valid UTF-8 and no lone surrogate escape. plain reports
// that the text is the bytes between the quotes (no escape, valid UTF-8).
func (r *reader) str() (plain, ok bool) {
	src := r.src
	lenient := r.mode&AllowInvalidUnicode != 0
	plain = true
	p := r.pos + 1
	for p < len(src) {
		for p < len(src) && src[p] >= 0x20 && src[p] < utf8.RuneSelf && src[p] != '"' && src[p] != '\\' {
			p++
		}
		if p == len(src) {
			break
		}
		c := src[p]
		switch {
		case c == '"':
			r.pos = p + 1
			return plain, true
		case c < 0x20:
			return false, r.fail(Syntax, p)
		case c == '\\':
			plain = false
			n := r.escape(p, lenient)
			if n == 0 {
				return false, false
			}
			p += n
		case c < utf8.RuneSelf:
			p++
		default:
			rr, size := utf8.DecodeRune(src[p:])
			if rr == utf8.RuneError && size == 1 {
				if !lenient {
					return false, r.fail(InvalidUTF8, p)
				}
				plain = false
			}
			p += size
		}
	}
	return false, r.fail(Syntax, p)
}

// escape checks the escape at src[p] (a backslash) and returns its length, or 0 after
// recording a refusal. A high surrogate escape must be followed by a low one unless lenient.
func (r *reader) escape(p int, lenient bool) int {
	src := r.src
	if p+1 >= len(src) {
		r.fail(Syntax, len(src))
		return 0
	}
	switch src[p+1] {
	case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		return 2
	case 'u':
	default:
		r.fail(Syntax, p)
		return 0
	}
	u := hex4(src[p:])
	if u < 0 {
		r.fail(Syntax, p)
		return 0
	}
	if lenient || !utf16.IsSurrogate(u) {
		return 6
	}
	if u < 0xdc00 { // a high surrogate: a low one must follow
		if low := hex4(src[p+6:]); low >= 0xdc00 && low <= 0xdfff {
			return 12
		}
	}
	r.fail(LoneSurrogate, p)
	return 0
}

// hex4 reads \uXXXX at the start of s; -1 when it is not there.
func hex4(s []byte) rune {
	if len(s) < 6 || s[0] != '\\' || s[1] != 'u' {
		return -1
	}
	var v rune
	for _, c := range s[2:6] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c -= 'a' - 10
		case 'A' <= c && c <= 'F':
			c -= 'A' - 10
		default:
			return -1
		}
		v = v<<4 | rune(c)
	}
	return v
}

// appendText appends the text of the string token raw (quotes included), which Read checked:
// escapes resolved, and as encoding/json decodes them, each byte of invalid UTF-8 and each lone
// surrogate as U+FFFD.
func appendText(dst, raw []byte) []byte {
	s := raw[1 : len(raw)-1]
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == '\\':
			i++
			switch s[i] {
			case 'b':
				dst = append(dst, '\b')
			case 'f':
				dst = append(dst, '\f')
			case 'n':
				dst = append(dst, '\n')
			case 'r':
				dst = append(dst, '\r')
			case 't':
				dst = append(dst, '\t')
			case 'u':
				u := hex4(s[i-1:])
				i += 5
				if utf16.IsSurrogate(u) {
					if dec := utf16.DecodeRune(u, hex4(s[i:])); dec != utf8.RuneError {
						dst = utf8.AppendRune(dst, dec)
						i += 6
						continue
					}
					u = utf8.RuneError
				}
				dst = utf8.AppendRune(dst, u)
				continue
			default: // '"', '\\', '/'
				dst = append(dst, s[i])
			}
			i++
		case c < utf8.RuneSelf:
			start := i
			for i < len(s) && s[i] != '\\' && s[i] < utf8.RuneSelf {
				i++
			}
			dst = append(dst, s[start:i]...)
		default:
			rr, size := utf8.DecodeRune(s[i:])
			if rr == utf8.RuneError && size == 1 {
				dst = utf8.AppendRune(dst, utf8.RuneError)
			} else {
				dst = append(dst, s[i:i+size]...)
			}
			i += size
		}
	}
	return dst
}
