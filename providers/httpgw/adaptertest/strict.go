package adaptertest

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"reflect"
	"regexp"
	"sort"
	"strings"

	"go.yaml.in/yaml/v3"
)

// unknownField is how the YAML library reports a key that v's type does not have.
var unknownField = regexp.MustCompile(`line (\d+): field (\S+) not found in type (.+)$`)

// decodeStrict decodes YAML into v, refusing unknown keys. An empty document is allowed. An
// unknown key is reported as "line N: unknown key K (allowed: a, b, …)", one problem per line,
// naming the keys the section allows rather than a Go type.
func decodeStrict(data []byte, v any) error {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	err := dec.Decode(v)
	if err == nil || errors.Is(err, io.EOF) {
		return nil
	}
	var te *yaml.TypeError
	if !errors.As(err, &te) {
		return err
	}
	keys := allowedKeys(reflect.TypeOf(v))
	lines := make([]string, 0, len(te.Errors))
	for _, e := range te.Errors {
		m := unknownField.FindStringSubmatch(e)
		if m == nil {
			lines = append(lines, e)
			continue
		}
		allowed := keys[m[3]]
		lines = append(lines, fmt.Sprintf("line %s: unknown key %s (allowed: %s)", m[1], m[2], strings.Join(allowed, ", ")))
	}
	return errors.New(strings.Join(lines, "\n"))
}

// allowedKeys maps every struct type reachable from t (as reflect names it, which is how the
// YAML library names it) to its YAML keys, sorted.
func allowedKeys(t reflect.Type) map[string][]string {
	out := map[string][]string{}
	var walk func(reflect.Type)
	walk = func(t reflect.Type) {
		for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Map {
			t = t.Elem()
		}
		if t.Kind() != reflect.Struct || out[t.String()] != nil {
			return
		}
		keys := []string{}
		out[t.String()] = keys
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
			if name == "" || name == "-" || !f.IsExported() {
				continue
			}
			keys = append(keys, name)
			walk(f.Type)
		}
		sort.Strings(keys)
		out[t.String()] = keys
	}
	walk(t)
	return out
}
