package api

import (
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"

	"switchboard/engine"
	"switchboard/packages/jsonread"
)

// readBody reads the capped body of a JSON request.
func readBody(r *http.Request) ([]byte, error) {
	// The usual header is compared, not parsed: parsing allocates on every request.
	if ct := r.Header.Get("Content-Type"); ct != "application/json" && !jsonMediaType(ct) {
		return nil, engine.NewProblem(engine.CodeUnsupportedMediaType, "send application/json")
	}
	return readRaw(r)
}

// jsonMediaType reports whether a Content-Type value is application/json or a +json type.
func jsonMediaType(ct string) bool {
	if ct == "" {
		return false
	}
	mt, _, err := mime.ParseMediaType(ct)
	return err == nil && (mt == "application/json" || strings.HasSuffix(mt, "+json"))
}

// readRaw reads the capped body whatever its type.
func readRaw(r *http.Request) ([]byte, error) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			return nil, engine.NewProblem(engine.CodeBodyTooLarge, "the request body is over 1 MiB")
		}
		return nil, &engine.Problem{Code: engine.CodeRequestInvalid, Detail: "the request body could not be read", Err: err}
	}
	return body, nil
}

// readJSON reads the body of a JSON request and indexes it strictly (docs/api.md): one JSON
// value, no member name repeated in any object, valid UTF-8.
func readJSON(r *http.Request) (*jsonread.Doc, error) {
	body, err := readBody(r)
	if err != nil {
		return nil, err
	}
	return readDoc(body)
}

// readDoc indexes a request body strictly. A refusal is a request.invalid problem that says
// what is wrong and at which byte, never what the body holds.
func readDoc(body []byte) (*jsonread.Doc, error) {
	doc, err := jsonread.Read(body, jsonread.Strict)
	if err != nil {
		return nil, &engine.Problem{Code: engine.CodeRequestInvalid, Detail: bodyDetail(err), Err: err}
	}
	return doc, nil
}

// bodyDetail describes a refusal of the reader.
func bodyDetail(err error) string {
	var e *jsonread.Error
	if !errors.As(err, &e) {
		return "the body is not valid JSON"
	}
	at := " (at byte " + strconv.Itoa(e.Offset) + ")"
	switch e.Reason {
	case jsonread.Empty:
		return "the body is empty"
	case jsonread.Trailing:
		return "the body holds more than one JSON value" + at
	case jsonread.Duplicate:
		return "an object of the body repeats a member name" + at
	case jsonread.InvalidUTF8:
		return "a string of the body is not valid UTF-8" + at
	case jsonread.LoneSurrogate:
		return "a string of the body escapes a lone UTF-16 surrogate" + at
	case jsonread.TooDeep:
		return "the body nests deeper than " + strconv.Itoa(jsonread.MaxDepth) + " levels"
	}
	return "the body is not valid JSON" + at
}

// writeJSON answers a JSON body with a status.
func writeJSON(w http.ResponseWriter, status int, v any) {
	body, err := json.Marshal(v)
	if err != nil {
		http.Error(w, "encode", http.StatusInternalServerError)
		return
	}
	writeRawJSON(w, status, body)
}

func writeRawJSON(w http.ResponseWriter, status int, body []byte) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(body)
}
