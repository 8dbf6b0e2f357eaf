// Package adapterparam holds the rule of an http provider's parameters, the non-secret values
// an adapter reads as profile.parameters (docs/runtime.md): at most MaxEntries, names
// identifiers, values short text. It is a leaf package (the standard library only) so that the
// runtime loader, which reports problems with lines, and the HTTP gateway provider, which
// validates its Config, apply one rule.
package adapterparam

import "unicode/utf8"

// Bounds of the parameters of one provider.
const (
	MaxEntries = 32
	MaxChars   = 256
)

// ValidName reports whether s names a parameter: an ASCII letter, then up to 63 letters,
// digits or underscores, so that an adapter reads it as profile.parameters.NAME.
func ValidName(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		letter := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
		if !letter && (i == 0 || !(c >= '0' && c <= '9' || c == '_')) {
			return false
		}
	}
	return true
}

// ValidValue reports whether s is a parameter value: UTF-8 text of at most MaxChars characters.
func ValidValue(s string) bool {
	return utf8.ValidString(s) && utf8.RuneCountInString(s) <= MaxChars
}
