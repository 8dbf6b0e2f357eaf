package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"
	"strings"

	"switchboard/engine"
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

// decodeStrict decodes one JSON value into v, refusing unknown members, trailing data and
// type mismatches. Its problems never echo the submitted values.
func decodeStrict(body []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return engine.NewProblem(engine.CodeRequestInvalid, describeDecodeError(err))
	}
	if dec.More() {
		return engine.NewProblem(engine.CodeRequestInvalid, "the body holds more than one JSON value")
	}
	var extra json.RawMessage
	if err := dec.Decode(&extra); err != io.EOF {
		return engine.NewProblem(engine.CodeRequestInvalid, "the body holds more than one JSON value")
	}
	return nil
}

// describeDecodeError names what is wrong (member names and positions) without values.
func describeDecodeError(err error) string {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn):
		return "the body is not valid JSON"
	case errors.As(err, &typ):
		if typ.Field != "" {
			return "member " + typ.Field + " has the wrong type"
		}
		return "the body has the wrong shape"
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return "the body is empty or cut short"
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		return "unknown member " + strings.TrimPrefix(err.Error(), "json: unknown field ")
	case strings.Contains(err.Error(), "parsing time"):
		return "a time member is not RFC 3339"
	}
	return "the body could not be decoded"
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
