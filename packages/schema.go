package packages

import (
	"bytes"
	"errors"
	"fmt"
	"net/url"
	"sort"
	"strconv"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
)

// Schemas are JSON Schema 2020-12 documents that stand alone: the compiler gets a loader that
// refuses every URL, so a $ref that leaves schema.json fails to compile. The 2020-12
// meta-schemas are built into the library (no network) and only serve to check the schema
// itself; a $ref to them is refused too. Formats (date, date-time, email, …) are asserted.

const draft2020 = "https://json-schema.org/draft/2020-12/schema"

// maxDataProblems bounds the paths a DataError lists.
const maxDataProblems = 20

// refuseLoader is the compiler's URL loader: nothing outside the document may be loaded.
type refuseLoader struct{}

func (refuseLoader) Load(u string) (any, error) {
	return nil, errors.New("references outside schema.json are not allowed")
}

// compileSchema compiles one template's schema.json. rel is the file's path in the package;
// the returned message is empty on success.
func compileSchema(rel string, data []byte) (*jsonschema.Schema, string) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Sprintf("schema.json is not valid JSON: %v", err)
	}
	if obj, ok := doc.(map[string]any); ok {
		if s, has := obj["$schema"]; has && s != draft2020 && s != draft2020+"#" {
			return nil, fmt.Sprintf("$schema must be %q (JSON Schema 2020-12)", draft2020)
		}
	}
	if ref := metaReference(doc); ref != "" {
		return nil, fmt.Sprintf("a $ref leaves the document: %q", ref)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.AssertFormat()
	c.UseLoader(refuseLoader{})
	loc := "file:///" + rel
	if err := c.AddResource(loc, doc); err != nil {
		return nil, fmt.Sprintf("cannot use schema.json: %v", err)
	}
	sch, err := c.Compile(loc)
	if err != nil {
		var le *jsonschema.LoadURLError
		if errors.As(err, &le) {
			return nil, fmt.Sprintf("a $ref leaves the document: %q", le.URL)
		}
		return nil, "schema.json does not compile: " + oneLine(err.Error())
	}
	return sch, ""
}

// metaReference finds a $ref or $dynamicRef to the built-in meta-schemas, which the library
// would resolve without asking the loader.
func metaReference(v any) string {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if s, ok := e.(string); ok && (k == "$ref" || k == "$dynamicRef") {
				if u, err := url.Parse(s); err == nil && strings.EqualFold(u.Host, "json-schema.org") {
					return s
				}
			}
			if r := metaReference(e); r != "" {
				return r
			}
		}
	case []any:
		for _, e := range x {
			if r := metaReference(e); r != "" {
				return r
			}
		}
	}
	return ""
}

func oneLine(s string) string {
	s = strings.TrimSpace(s)
	s = strings.ReplaceAll(s, "\n", "; ")
	return strings.Join(strings.Fields(s), " ")
}

// ValidateData checks data (as decoded by DecodeData) against the template's schema. It
// returns nil or a *DataError whose message lists the failing JSON pointers and keywords
// without echoing any value. It is safe for concurrent use.
func (t *Template) ValidateData(data any) error {
	if t.schema == nil {
		return &DataError{Message: "the template has no schema"}
	}
	err := t.schema.Validate(data)
	if err == nil {
		return nil
	}
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return &DataError{Message: "data does not match the template schema"}
	}
	var problems []string
	var paths []string
	seen := map[string]bool{}
	collectProblems(ve, data, func(ptr, shown, keyword string) {
		p := shown + " (" + keyword + ")"
		if seen[p] || len(problems) >= maxDataProblems {
			return
		}
		seen[p] = true
		problems = append(problems, p)
		if !contains(paths, ptr) {
			paths = append(paths, ptr)
		}
	})
	sort.Strings(problems)
	for i, p := range problems {
		if strings.HasPrefix(p, " (") {
			problems[i] = "(root)" + p
		}
	}
	return &DataError{Paths: paths, Message: "data does not match the template schema at " + strings.Join(problems, ", ")}
}

// collectProblems reports each leaf failure of a validation error as a JSON pointer (exact, and
// as a caller may see it: shownPointer) and the schema keyword that failed. The library's
// messages, which may quote values, are never used; the property names of required and
// dependentRequired come from the schema, those of additionalProperties from the data.
func collectProblems(ve *jsonschema.ValidationError, data any, report func(ptr, shown, keyword string)) {
	if len(ve.Causes) > 0 {
		for _, c := range ve.Causes {
			collectProblems(c, data, report)
		}
		return
	}
	ptr, shown := pointer(ve.InstanceLocation), shownPointer(data, ve.InstanceLocation)
	switch k := ve.ErrorKind.(type) {
	case *kind.Required:
		for _, name := range k.Missing {
			report(ptr+"/"+escapePointer(name), shown+"/"+escapePointer(name), "required")
		}
		return
	case *kind.AdditionalProperties:
		for _, name := range k.Properties {
			report(ptr+"/"+escapePointer(name), shown+"/"+shownName(name), "additionalProperties")
		}
		return
	case *kind.DependentRequired:
		for _, name := range k.Missing {
			report(ptr+"/"+escapePointer(name), shown+"/"+escapePointer(name), "dependentRequired")
		}
		return
	}
	keyword := "schema"
	if ve.ErrorKind != nil {
		if kp := ve.ErrorKind.KeywordPath(); len(kp) > 0 {
			keyword = kp[len(kp)-1]
		}
	}
	report(ptr, shown, keyword)
}

func pointer(tokens []string) string {
	var b strings.Builder
	for _, t := range tokens {
		b.WriteByte('/')
		b.WriteString(escapePointer(t))
	}
	return b.String()
}

// shownPointer is the pointer of tokens into data as a caller may see it: array indexes as they
// are, member names through shownName.
func shownPointer(data any, tokens []string) string {
	var b strings.Builder
	for _, t := range tokens {
		b.WriteByte('/')
		switch c := data.(type) {
		case []any:
			b.WriteString(t)
			data = nil
			if i, err := strconv.Atoi(t); err == nil && i >= 0 && i < len(c) {
				data = c[i]
			}
		case map[string]any:
			b.WriteString(shownName(t))
			data = c[t]
		default:
			b.WriteString(hiddenName)
			data = nil
		}
	}
	return b.String()
}

func escapePointer(s string) string {
	if !strings.ContainsAny(s, "~/") {
		return s
	}
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}
