package engine_test

import (
	"testing"

	"switchboard/packages/jsonread"
)

// requestBody is a submission body read as the API reads it, for tests that call Submit.
func requestBody(t testing.TB, body string) *jsonread.Doc {
	t.Helper()
	doc, err := jsonread.Read([]byte(body), jsonread.Strict)
	if err != nil {
		t.Fatalf("request body %q: %v", body, err)
	}
	return doc
}
