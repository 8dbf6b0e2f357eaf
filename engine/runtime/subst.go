package runtime

import "strings"

// substError explains why a value could not be substituted. Its text never contains the
// value: at most the name of a variable, which is part of the file, not of the environment.
type substError struct{ msg string }

func (e *substError) Error() string { return e.msg }

var (
	errUnterminated = &substError{"unterminated ${ expression"}
	errBadName      = &substError{"${…} holds an invalid variable name (letters, digits and _, not starting with a digit)"}
	errBadOperator  = &substError{"${NAME…} must close with } or hold :-default"}
)

// expand substitutes ${NAME} and ${NAME:-default} in s and turns $$ into $ (see the package
// documentation). used reports whether s held at least one ${…} expression.
func expand(s string, getenv func(string) string) (out string, used bool, err error) {
	if !strings.Contains(s, "$") {
		return s, false, nil
	}
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); {
		c := s[i]
		if c != '$' || i+1 >= len(s) {
			b.WriteByte(c)
			i++
			continue
		}
		switch s[i+1] {
		case '$':
			b.WriteByte('$')
			i += 2
			continue
		case '{':
		default:
			b.WriteByte('$')
			i++
			continue
		}
		used = true
		end := strings.IndexByte(s[i+2:], '}')
		if end < 0 {
			return "", used, errUnterminated
		}
		expr := s[i+2 : i+2+end]
		i += 2 + end + 1
		name, def, hasDefault := strings.Cut(expr, ":-")
		if !isVarName(name) {
			if op := strings.IndexAny(expr, ":?-+="); op > 0 && isVarName(expr[:op]) {
				return "", used, errBadOperator
			}
			return "", used, errBadName
		}
		v := getenv(name)
		if v == "" {
			if !hasDefault {
				return "", used, &substError{"${" + name + "} is not set (or empty) and has no :-default"}
			}
			v = def
		}
		b.WriteString(v)
	}
	return b.String(), used, nil
}

// isVarName reports whether s is a portable environment variable name.
func isVarName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '_', c >= 'A' && c <= 'Z', c >= 'a' && c <= 'z':
		case c >= '0' && c <= '9' && i > 0:
		default:
			return false
		}
	}
	return true
}
