package httpgw

import (
	"fmt"
	"unicode/utf8"
)

// Bounds of Config.Parameters (the runtime loader applies the same ones, with line numbers).
const (
	MaxParameters     = 32
	MaxParameterChars = 256
)

// parametersInput checks Config.Parameters and returns them as the profile argument carries
// them (an empty object when there are none).
func parametersInput(params map[string]string) (map[string]any, error) {
	if len(params) > MaxParameters {
		return nil, fmt.Errorf("%d entries, more than %d", len(params), MaxParameters)
	}
	out := make(map[string]any, len(params))
	for name, value := range params {
		if !ValidParameterName(name) {
			return nil, fmt.Errorf("name %q is not an identifier (a letter, then letters, digits or _, at most 64)", name)
		}
		if !utf8.ValidString(value) || utf8.RuneCountInString(value) > MaxParameterChars {
			return nil, fmt.Errorf("%s: the value is not UTF-8 text of at most %d characters", name, MaxParameterChars)
		}
		out[name] = value
	}
	return out, nil
}

// ValidParameterName reports whether s names a parameter: an ASCII letter, then up to 63
// letters, digits or underscores, so that an adapter reads it as profile.parameters.NAME.
func ValidParameterName(s string) bool {
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
