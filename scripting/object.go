package scripting

// Object is an argument that arrives as a plain JavaScript object with these members. It is
// what a map[string]any argument becomes, without the map: a caller that knows its members'
// names builds the list in sorted order and the object is made from it as it stands. The
// object is the same as the map's would be: members sorted by name (an Object that is not
// sorted is sorted first), a name given twice keeping its last value, a nil Object arriving
// as null.
type Object []Member

// Member is one member of an Object.
type Member struct {
	Name  string // the property's name
	Value any    // any value Call takes as an argument
}

// sorted reports whether the names are strictly increasing: sorted, each once.
func (o Object) sorted() bool {
	for i := 1; i < len(o); i++ {
		if o[i-1].Name >= o[i].Name {
			return false
		}
	}
	return true
}

// asMap is the map the members stand for.
func (o Object) asMap() map[string]any {
	m := make(map[string]any, len(o))
	for _, member := range o {
		m[member.Name] = member.Value
	}
	return m
}
