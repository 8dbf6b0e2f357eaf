package packages

import (
	"bytes"
	"encoding/json"
	"math"
	"math/big"
	"reflect"
	"strconv"
	"strings"
	"time"
)

// Template functions (docs/package.md, "Templates"). They see only their arguments: no files, network, clock or
// environment. Their errors never quote a value, so they are safe to show the caller.
//
//	date V          V is an ISO date (2026-10-01) or an RFC 3339 timestamp; the calendar date as
//	                written (no time zone conversion), formatted for the locale (see dateLayout).
//	number V D      V (a JSON number, int or float) with exactly D decimals (0-20), rounded half
//	                away from zero on the exact decimal value; "." is the decimal separator. V comes
//	                first: {{number .amount 2}} (not usable at the end of a pipe).
//	upper V, lower V  V in upper or lower case (Unicode simple case mapping, locale-independent).
//	default F V     V, or F when V is null, absent or "". {{default "x" .maybe}} and
//	                {{.maybe | default "x"}} both work when the key .maybe is absent: see tree.go.
//	json V          V encoded as compact JSON (for JSON peer bodies: {"note": {{json .note}}}).
//
// Two internal functions are inserted by tree.go: _emit (prints a value, refusing null, absent,
// objects and lists) and _optional (reads a field chain, giving null for an absent key).

const (
	emitFunc     = "_emit"
	optionalFunc = "_optional"
	maxDecimals  = 20
	// maxExponent bounds the exponent of a JSON number given to number, so that an input such
	// as 1e999999999 cannot make the exact decimal arithmetic explode.
	maxExponent = 400
)

// funcError is an error raised by a template function; its message is caller-safe.
type funcError struct{ msg string }

func (e *funcError) Error() string { return e.msg }

func funcErr(msg string) error { return &funcError{msg: msg} }

// funcMap returns the functions of templates in one locale.
func funcMap(locale string) map[string]any {
	layout := dateLayout(locale)
	return map[string]any{
		"date":       func(v any) (string, error) { return formatDate(v, layout) },
		"number":     formatNumber,
		"upper":      func(v any) (string, error) { return changeCase(v, "upper", strings.ToUpper) },
		"lower":      func(v any) (string, error) { return changeCase(v, "lower", strings.ToLower) },
		"default":    defaultValue,
		"json":       toJSON,
		emitFunc:     emit,
		optionalFunc: optional,
	}
}

// dateLayout is the small table of date formats by locale: the full tag is tried first, then
// its language. Unknown locales get ISO 8601 (2026-10-01).
func dateLayout(locale string) string {
	switch locale {
	case "en-GB", "en-AU", "en-IE", "en-IN", "en-NZ", "en-ZA":
		return "2 January 2006" // 1 October 2026
	}
	lang, _, _ := strings.Cut(locale, "-")
	switch lang {
	case "en":
		return "January 2, 2006" // October 1, 2026
	case "fr", "es", "it", "pt", "el", "ca":
		return "02/01/2006" // 01/10/2026
	case "de", "ru", "pl", "cs", "sk", "fi", "nb", "nn", "no", "da", "tr", "ro", "uk":
		return "02.01.2006" // 01.10.2026
	case "nl":
		return "02-01-2006" // 01-10-2026
	case "ja", "zh":
		return "2006/01/02" // 2026/10/01
	}
	return "2006-01-02"
}

func nullOrType(name string, v any, want string) error {
	if v == nil {
		return funcErr(name + ": the value is null or missing")
	}
	return funcErr(name + ": the value is not " + want)
}

func formatDate(v any, layout string) (string, error) {
	s, ok := v.(string)
	if !ok {
		return "", nullOrType("date", v, "a string")
	}
	// The error is made only when needed: every rendered date passes here.
	bad := func() error {
		return funcErr("date: the value is not an ISO date (YYYY-MM-DD) or an RFC 3339 timestamp")
	}
	if len(s) < len(time.DateOnly) {
		return "", bad()
	}
	day, err := time.Parse(time.DateOnly, s[:len(time.DateOnly)])
	if err != nil {
		return "", bad()
	}
	if len(s) > len(time.DateOnly) {
		// The whole timestamp must be valid, as the date-time format of JSON Schema reads it:
		// RFC 3339 allows lowercase t and z and a leap second (:60), which time.Parse does not.
		ts := strings.ToUpper(s)
		if len(ts) > 19 && ts[16] == ':' && ts[17:19] == "60" {
			ts = ts[:17] + "59" + ts[19:]
		}
		if _, err := time.Parse(time.RFC3339, ts); err != nil {
			return "", bad()
		}
	}
	return day.Format(layout), nil
}

func formatNumber(v any, decimals any) (string, error) {
	d, ok := toInt(decimals)
	if !ok || d < 0 || d > maxDecimals {
		return "", funcErr("number: the number of decimals must be an integer from 0 to 20")
	}
	r := new(big.Rat)
	switch x := v.(type) {
	case json.Number:
		s := string(x)
		if len(s) > maxNumberChars {
			return "", funcErr("number: the value is out of range")
		}
		if i := strings.IndexAny(s, "eE"); i >= 0 {
			exp, err := strconv.Atoi(s[i+1:])
			if err != nil || exp > maxExponent || exp < -maxExponent {
				return "", funcErr("number: the value is out of range")
			}
		}
		if _, ok := r.SetString(s); !ok {
			return "", funcErr("number: the value is not a number")
		}
	case float64, float32:
		f := reflect.ValueOf(x).Float()
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return "", funcErr("number: the value is not a finite number")
		}
		r.SetFloat64(f)
	default:
		i, ok := toInt(v)
		if !ok {
			return "", nullOrType("number", v, "a number")
		}
		r.SetInt64(i)
	}
	out := r.FloatString(int(d))
	if strings.HasPrefix(out, "-") && strings.Trim(out, "-0.") == "" {
		out = out[1:] // no negative zero
	}
	return out, nil
}

// toInt accepts Go integers and integral JSON numbers.
func toInt(v any) (int64, bool) {
	switch x := v.(type) {
	case json.Number:
		i, err := x.Int64()
		return i, err == nil
	case int, int8, int16, int32, int64:
		return reflect.ValueOf(x).Int(), true
	case uint, uint8, uint16, uint32, uint64:
		u := reflect.ValueOf(x).Uint()
		return int64(u), u <= math.MaxInt64
	}
	return 0, false
}

func changeCase(v any, name string, f func(string) string) (string, error) {
	switch x := v.(type) {
	case string:
		return f(x), nil
	case json.Number:
		return f(string(x)), nil
	}
	return "", nullOrType(name, v, "a string")
}

func defaultValue(fallback, v any) any {
	if v == nil || v == "" {
		return fallback
	}
	return v
}

func toJSON(v any) (string, error) {
	if v == nil {
		return "", funcErr("json: the value is null or missing")
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return "", funcErr("json: the value cannot be encoded")
	}
	return strings.TrimSuffix(b.String(), "\n"), nil
}

// emit turns the value of a printing action into text. A missing key is refused by the
// template engine (missingkey=error); emit refuses what would otherwise print as "<no value>"
// or as Go syntax: null, objects and lists.
func emit(v any) (string, error) {
	switch x := v.(type) {
	case string:
		return x, nil
	case json.Number:
		return string(x), nil
	case nil:
		return "", funcErr("a value to print is null or missing")
	case bool:
		return strconv.FormatBool(x), nil
	case map[string]any, []any:
		return "", funcErr("an object or a list cannot be printed (use json, range or a field)")
	}
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return strconv.FormatInt(rv.Int(), 10), nil
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return strconv.FormatUint(rv.Uint(), 10), nil
	case reflect.Float32, reflect.Float64:
		return strconv.FormatFloat(rv.Float(), 'f', -1, 64), nil
	case reflect.String:
		return rv.String(), nil
	}
	return "", funcErr("a value of this kind cannot be printed")
}

// optional reads keys from recv through JSON objects, yielding nil (not an error) when a key
// is absent or an intermediate value is null.
func optional(recv any, keys ...string) (any, error) {
	cur := recv
	for _, k := range keys {
		switch m := cur.(type) {
		case nil:
			return nil, nil
		case map[string]any:
			v, ok := m[k]
			if !ok {
				return nil, nil
			}
			cur = v
		default:
			return nil, funcErr("cannot read field " + strconv.Quote(k) + " of a value that is not an object")
		}
	}
	return cur, nil
}
