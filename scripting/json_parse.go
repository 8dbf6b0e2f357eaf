package scripting

import "switchboard/packages/jsonread"

// ParseJSON decodes data when it holds exactly one JSON value (white space around it is
// allowed) into the plain values Call takes, as encoding/json's Decoder with UseNumber
// decodes it: map[string]any, []any (empty, not nil, for []), string, json.Number, bool and
// nil. ok is false for anything else. It suits JSON from outside, such as an HTTP answer
// about to be passed to Call.
//
// It reads with the one JSON reader (a leaf package every package may import), leniently: a
// gateway's answer is not a request Switchboard may refuse, and refusing one for a repeated
// member or a stray byte would turn an answer the script can read into one it cannot. The
// script sees what JSON.parse would give it: the last of repeated members, U+FFFD for invalid
// Unicode.
func ParseJSON(data []byte) (v any, ok bool) {
	doc, err := jsonread.Read(data, jsonread.Lenient)
	if err != nil {
		return nil, false
	}
	return doc.Root().Decode(), true
}
