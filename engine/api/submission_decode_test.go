package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"switchboard/engine"
	"switchboard/packages/jsonread"
	"switchboard/packages/jsonread/jsonreadtest"
)

// submissionCases are bodies with the cause of their refusal (nil: decoded).
var submissionCases = map[string]struct {
	body  string
	cause error
}{
	"template":          {`{"senderProfile":"reminders-sms","to":{"phone":"+15550100123"},"template":{"id":"t","version":"1"},"locale":"en","data":{"a":1,"b":[true,null]}}`, nil},
	"content and times": {" {\n \"senderProfile\" : \"x\", \"to\":{\"email\":\"a@b.c\"},\"content\":{\"text\":\"hi\",\"subject\":\"s\"},\"notBefore\":\"2026-11-30T10:00:00+01:00\",\"expiresAt\":\"2026-12-01T00:00:00Z\",\"correlationId\":\"c-1\"} ", nil},
	"escaped strings":   {`{"senderProfile":"a\u0062\n\"c\"","to":{"peer":"12D3KooW\/x"},"locale":"\u00e9"}`, nil},
	"escaped name":      {`{"\u0073enderProfile":"x"}`, nil},
	"chat address":      {`{"senderProfile":"team-chat","to":{"address":"C0123ABCD"},"content":{"text":"hi"}}`, nil},
	"repeated address":  {`{"to":{"address":"a","address":"b"}}`, &jsonread.Error{Reason: jsonread.Duplicate}},
	"push device":       {`{"senderProfile":"app-push","to":{"device":"fcm:tok-1"},"content":{"title":"Hi","body":"there","data":{"caseId":"C-1"}}}`, nil},
	"push data null":    {`{"content":{"title":"Hi","data":null}}`, nil},
	"push data string":  {`{"content":{"data":"caseId=C-1"}}`, errContentData},
	"push data array":   {`{"content":{"data":[]}}`, errContentData},
	"data of any kind":  {`{"data":"text"}`, nil},
	"data number":       {`{"data": 12.50 }`, nil},
	"data null":         {`{"data":null}`, nil},
	"nulls are absent":  {`{"senderProfile":null,"to":null,"template":null,"content":null,"expiresAt":null,"correlationId":null}`, nil},
	"empty object":      {`{}`, nil},
	"empty nested":      {`{"to":{},"template":{},"content":{}}`, nil},
	"null body":         {`null`, nil},
	"correlation 128":   {`{"correlationId":"` + strings.Repeat("é", 128) + `"}`, nil},
	"correlation 129":   {`{"correlationId":"` + strings.Repeat("é", 129) + `"}`, errCorrelationID},
	"correlation empty": {`{"correlationId":""}`, errCorrelationID},
	"correlation tab":   {`{"correlationId":"a\tb"}`, errCorrelationID},
	"correlation nbsp":  {`{"correlationId":"a\u00a0b"}`, errCorrelationID},
	"correlation bidi":  {`{"correlationId":"a\u202eb"}`, errCorrelationID},
	"folded name":       {`{"SenderProfile":"x"}`, errUnknownMember},
	"unknown member":    {`{"unknown":true}`, errUnknownMember},
	"unknown nested":    {`{"to":{"fax":"1"}}`, errUnknownMember},
	"wrong type":        {`{"senderProfile":1}`, errMemberType},
	"wrong nested type": {`{"to":{"phone":1}}`, errMemberType},
	"to not an object":  {`{"to":"+15550100123"}`, errMemberType},
	"bad time":          {`{"expiresAt":"tomorrow"}`, errMemberType},
	"time not a string": {`{"expiresAt":5}`, errMemberType},
	"not an object":     {`[]`, errMemberType},
	"repeated name":     {`{"locale":"en","locale":"fr"}`, &jsonread.Error{Reason: jsonread.Duplicate}},
	"repeated escaped":  {`{"to":{"phone":"1","\u0070hone":"2"}}`, &jsonread.Error{Reason: jsonread.Duplicate}},
	"repeated in data":  {`{"data":{"a":{"b":1,"b":2}}}`, &jsonread.Error{Reason: jsonread.Duplicate}},
	"invalid utf-8":     {"{\"senderProfile\":\"a\xffb\"}", &jsonread.Error{Reason: jsonread.InvalidUTF8}},
	"lone surrogate":    {`{"data":{"t":"\ud800"}}`, &jsonread.Error{Reason: jsonread.LoneSurrogate}},
	"two values":        {`{} {}`, &jsonread.Error{Reason: jsonread.Trailing}},
	"not json":          {`{"a":`, &jsonread.Error{Reason: jsonread.Syntax}},
	"empty":             {``, &jsonread.Error{Reason: jsonread.Empty}},
}

// decodeBody reads and decodes a submission body as the submit route does.
func decodeBody(body []byte) (*jsonread.Doc, engine.SubmitRequest, error) {
	doc, err := readDoc(body)
	if err != nil {
		return nil, engine.SubmitRequest{}, err
	}
	req, err := decodeSubmission(doc.Root())
	return doc, req, err
}

func TestDecodeSubmission(t *testing.T) {
	t.Parallel()
	for name, tc := range submissionCases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			_, got, err := decodeBody([]byte(tc.body))
			if tc.cause == nil {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				checkSameAsLibrary(t, []byte(tc.body), got)
				return
			}
			var p *engine.Problem
			if !errors.As(err, &p) || p.Code != engine.CodeRequestInvalid {
				t.Fatalf("err = %v, want request.invalid", err)
			}
			if want, ok := tc.cause.(*jsonread.Error); ok {
				var e *jsonread.Error
				if !errors.As(err, &e) || e.Reason != want.Reason {
					t.Fatalf("cause %v, want %v", p.Err, want.Reason)
				}
			} else if !errors.Is(err, tc.cause) {
				t.Fatalf("cause %v, want %v", p.Err, tc.cause)
			}
		})
	}
}

// libraryRequest mirrors engine.SubmitRequest for encoding/json, the reference decoder.
type libraryRequest struct {
	SenderProfile string                `json:"senderProfile"`
	To            engine.Recipient      `json:"to"`
	Template      *engine.TemplateRef   `json:"template"`
	Locale        string                `json:"locale"`
	Data          json.RawMessage       `json:"data"`
	Content       *engine.DirectContent `json:"content"`
	NotBefore     *time.Time            `json:"notBefore"`
	ExpiresAt     *time.Time            `json:"expiresAt"`
	CorrelationID string                `json:"correlationId"`
}

// libraryDecode decodes body with encoding/json, refusing unknown members and trailing data.
func libraryDecode(body []byte) (libraryRequest, error) {
	var want libraryRequest
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&want); err != nil {
		return want, err
	}
	if !json.Valid(body) {
		return want, errors.New("trailing data")
	}
	return want, nil
}

// checkSameAsLibrary fails unless encoding/json decodes body to the request got.
func checkSameAsLibrary(t *testing.T, body []byte, got engine.SubmitRequest) {
	t.Helper()
	want, err := libraryDecode(body)
	if err != nil {
		t.Fatalf("decodeSubmission took %q, which encoding/json refuses: %v", body, err)
	}
	if want.Content != nil && string(want.Content.Data) == "null" {
		want.Content.Data = nil // the API reads a null member as absent
	}
	if !bytes.Equal(got.Data.Raw(), want.Data) {
		t.Fatalf("data %s, encoding/json %s", got.Data.Raw(), want.Data)
	}
	wantReq := engine.SubmitRequest{SenderProfile: want.SenderProfile, To: want.To, Template: want.Template,
		Locale: want.Locale, Data: got.Data, Content: want.Content, NotBefore: want.NotBefore,
		ExpiresAt: want.ExpiresAt, CorrelationID: want.CorrelationID}
	if !reflect.DeepEqual(got, wantReq) {
		t.Fatalf("decodeSubmission gave %+v, encoding/json %+v", got, wantReq)
	}
}

// foldedName reports whether a member of the body, or of its to, template or content, matches
// a member name only without regard to case, which encoding/json takes and the API refuses.
func foldedName(body []byte) bool {
	doc, err := jsonread.Read(body, jsonread.Lenient)
	if err != nil {
		return false
	}
	known := memberNames()
	folded := false
	var walk func(v jsonread.Value, at string)
	walk = func(v jsonread.Value, at string) {
		v.Members(func(name, val jsonread.Value) bool {
			for _, k := range known[at] {
				n := name.Text()
				if n != k && strings.EqualFold(n, k) {
					folded = true
				}
				if at == "" && strings.EqualFold(n, k) && k != "data" {
					walk(val, k)
				}
			}
			return true
		})
	}
	walk(doc.Root(), "")
	return folded
}

// memberNames are the member names encoding/json decodes a request with: those of the body
// (key "") and of each member whose value is an object (to, template, content), read from the
// reference types' tags so that a member added to them is known here too.
func memberNames() map[string][]string {
	names := func(t reflect.Type) []string {
		var out []string
		for f := range t.Fields() {
			if name, _, _ := strings.Cut(f.Tag.Get("json"), ","); name != "" && name != "-" {
				out = append(out, name)
			}
		}
		return out
	}
	top := reflect.TypeFor[libraryRequest]()
	known := map[string][]string{"": names(top)}
	for f := range top.Fields() {
		t := f.Type
		if t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		if t.Kind() == reflect.Struct && t != reflect.TypeFor[time.Time]() {
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			known[name] = names(t)
		}
	}
	return known
}

// FuzzDecodeSubmitRequest is the submission decoder's differential fuzzer. What it takes,
// encoding/json takes and decodes the same way; what encoding/json takes and it refuses is
// refused for a reason encoding/json forgives: a repeated name, invalid Unicode, a member named
// only without regard to case, or a correlationId out of bounds.
func FuzzDecodeSubmitRequest(f *testing.F) {
	for _, tc := range submissionCases {
		f.Add([]byte(tc.body))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		_, got, err := decodeBody(body)
		if err == nil {
			checkSameAsLibrary(t, body, got)
			return
		}
		var p *engine.Problem
		if !errors.As(err, &p) || p.Code != engine.CodeRequestInvalid {
			t.Fatalf("refusal %v is not a request.invalid problem", err)
		}
		if _, libErr := libraryDecode(body); libErr != nil {
			return
		}
		ref := jsonreadtest.Of(body)
		var e *jsonread.Error
		switch {
		case errors.As(err, &e):
			if ref.StrictOK() {
				t.Fatalf("the reader refused %q (%v), which holds nothing encoding/json forgives", body, e)
			}
		case errors.Is(err, errCorrelationID), errors.Is(err, errContentData):
		case errors.Is(err, errUnknownMember):
			if !foldedName(body) {
				t.Fatalf("%q: unknown member, but encoding/json knows every member", body)
			}
		default:
			t.Fatalf("%q refused (%v), encoding/json takes it", body, err)
		}
	})
}
