package scripting

import (
	"encoding"
	"encoding/json"
	"reflect"
	"strings"
	"sync"
	"unicode"
)

// Decode plans: what the fast path of CallInto's decode (json_decode.go) needs to know about
// a Go type, worked out once per type and Program instead of on every call. A type gets a
// plan only when every part of it is one that the fast path decodes exactly as encoding/json
// does: strings, booleans, integers, floats, pointers, slices (not of bytes), maps with
// plain string keys, json.RawMessage, and structs without embedded fields, ",string"
// options or two fields of the same JSON name. Any type with an UnmarshalJSON or
// UnmarshalText method (other than json.RawMessage), json.Number, interfaces and arrays get
// none, and such results always go through encoding/json.

// planKind is what a plan decodes into.
type planKind uint8

const (
	planString planKind = iota
	planBool
	planInt
	planUint
	planFloat
	planPointer
	planSlice
	planMap
	planStruct
	planRaw // json.RawMessage: the value's bytes, copied
)

// maxPlanFields bounds the fields of a planned struct (the decoder tracks them in a uint64).
const maxPlanFields = 64

// decodePlan describes one type for the fast decoder.
type decodePlan struct {
	kind planKind
	typ  reflect.Type
	// elem is the plan of a pointer's, slice's or map's element.
	elem *decodePlan
	// stringMap is set for exactly map[string]string, decoded without reflection.
	stringMap bool
	// fields and byName describe a struct: byName maps a member name to its index in fields.
	fields []planField
	byName map[string]int
}

// planField is one decoded field of a struct.
type planField struct {
	index int // in the struct
	plan  *decodePlan
}

var (
	rawMessageType      = reflect.TypeFor[json.RawMessage]()
	numberType          = reflect.TypeFor[json.Number]()
	stringMapType       = reflect.TypeFor[map[string]string]()
	unmarshalerType     = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshalerType = reflect.TypeFor[encoding.TextUnmarshaler]()
)

// planCache holds a Program's decode plans, by type; a nil plan marks a type the fast path
// does not handle. The types are those of the callers' code, so the cache stays small. docs
// pools the indexes the fast path reads results into.
type planCache struct {
	plans sync.Map // reflect.Type → *decodePlan
	docs  sync.Pool
}

// get returns the plan of t, building it on first use; nil when t has none.
func (c *planCache) get(t reflect.Type) *decodePlan {
	if p, ok := c.plans.Load(t); ok {
		return p.(*decodePlan)
	}
	p := buildPlan(t, make(map[reflect.Type]*decodePlan))
	c.plans.Store(t, p)
	return p
}

// buildPlan builds the plan of t; building holds the plans under construction, so that
// recursive types refer to themselves. Any part without a plan leaves the whole type
// without one.
func buildPlan(t reflect.Type, building map[reflect.Type]*decodePlan) *decodePlan {
	if p, ok := building[t]; ok {
		return p
	}
	if t == rawMessageType {
		return &decodePlan{kind: planRaw, typ: t}
	}
	if t == numberType || hasUnmarshaler(t) {
		return nil
	}
	p := &decodePlan{typ: t}
	building[t] = p
	ok := true
	switch t.Kind() {
	case reflect.String:
		p.kind = planString
	case reflect.Bool:
		p.kind = planBool
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		p.kind = planInt
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		p.kind = planUint
	case reflect.Float32, reflect.Float64:
		p.kind = planFloat
	case reflect.Pointer:
		p.kind, p.elem = planPointer, buildPlan(t.Elem(), building)
		ok = p.elem != nil
	case reflect.Slice:
		// A []byte is base64 text for encoding/json.
		p.kind = planSlice
		ok = t.Elem().Kind() != reflect.Uint8
		if ok {
			p.elem = buildPlan(t.Elem(), building)
			ok = p.elem != nil
		}
	case reflect.Map:
		p.kind, p.stringMap = planMap, t == stringMapType
		ok = t.Key().Kind() == reflect.String && !hasUnmarshaler(t.Key())
		if ok {
			p.elem = buildPlan(t.Elem(), building)
			ok = p.elem != nil
		}
	case reflect.Struct:
		p.kind = planStruct
		ok = planStructFields(p, building)
	default:
		ok = false
	}
	if !ok {
		delete(building, t)
		return nil
	}
	return p
}

// planStructFields fills in the fields of a struct's plan as encoding/json names them, and
// reports false for a struct the fast path leaves to encoding/json.
func planStructFields(p *decodePlan, building map[reflect.Type]*decodePlan) bool {
	t := p.typ
	p.byName = make(map[string]int, t.NumField())
	for i := range t.NumField() {
		sf := t.Field(i)
		if sf.Anonymous {
			return false // embedded fields: encoding/json's promotion rules
		}
		if !sf.IsExported() {
			continue
		}
		tag := sf.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if !isValidTag(name) {
			name = ""
		}
		if name == "" {
			name = sf.Name
		}
		if hasTagOption(opts, "string") {
			return false
		}
		if _, dup := p.byName[name]; dup {
			return false // encoding/json's dominance rules
		}
		fp := buildPlan(sf.Type, building)
		if fp == nil {
			return false
		}
		p.byName[name] = len(p.fields)
		p.fields = append(p.fields, planField{index: i, plan: fp})
	}
	return len(p.fields) <= maxPlanFields
}

// hasUnmarshaler reports whether t or *t decodes itself, as encoding/json would ask it to.
func hasUnmarshaler(t reflect.Type) bool {
	pt := reflect.PointerTo(t)
	return t.Implements(unmarshalerType) || t.Implements(textUnmarshalerType) ||
		pt.Implements(unmarshalerType) || pt.Implements(textUnmarshalerType)
}

// hasTagOption reports whether a comma-separated tag option list contains option.
func hasTagOption(opts, option string) bool {
	for opts != "" {
		var o string
		o, opts, _ = strings.Cut(opts, ",")
		if o == option {
			return true
		}
	}
	return false
}

// isValidTag is encoding/json's rule for a usable name in a json tag.
func isValidTag(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		switch {
		case strings.ContainsRune("!#$%&()*+-./:;<=>?@[]^_{|}~ ", c):
		case !unicode.IsLetter(c) && !unicode.IsDigit(c):
			return false
		}
	}
	return true
}
