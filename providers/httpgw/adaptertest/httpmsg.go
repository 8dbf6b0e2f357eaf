package adaptertest

import (
	"errors"
	"fmt"
	"mime"
	"net/http"
	"strconv"
	"strings"

	"switchboard/providers/httpgw"
)

// httpMessage is an HTTP request or answer as a case file writes it: a start line, header
// lines "Name: value", a blank line, the body. A form-encoded body may be written one field per
// line (the lines are joined with "&"); any other body is taken as written, without the
// section's final newline.
type httpMessage struct {
	start  string
	header http.Header
	body   []byte
}

// signDirective is the pseudo-header of a callback that asks the runner to sign it with the
// case's test secret; it is removed before the request reaches the verifier.
const signDirective = "Adaptertest-Sign"

// closeDirective as the whole answer makes the gateway drop the connection after reading the
// request, without answering (a maybe-sent failure).
const closeDirective = "!close"

// parseHTTPMessage reads one message; an empty section gives an empty message.
func parseHTTPMessage(data []byte) (*httpMessage, error) {
	text := strings.TrimSuffix(strings.ReplaceAll(string(data), "\r\n", "\n"), "\n")
	lines := strings.Split(text, "\n")
	m := &httpMessage{header: http.Header{}}
	i := 0
	for i < len(lines) && strings.TrimSpace(lines[i]) == "" {
		i++
	}
	if i == len(lines) {
		return m, nil
	}
	m.start = strings.TrimSpace(lines[i])
	for i++; i < len(lines) && strings.TrimSpace(lines[i]) != ""; i++ {
		name, value, ok := strings.Cut(lines[i], ":")
		name = strings.TrimSpace(name)
		if !ok || name == "" || strings.ContainsAny(name, " \t") {
			return nil, fmt.Errorf("line %q is not a header (Name: value); a blank line separates the body", lines[i])
		}
		m.header.Add(name, strings.TrimSpace(value))
	}
	if i < len(lines) {
		body := lines[i+1:]
		if isForm(m.header.Get("Content-Type")) {
			var fields []string
			for _, l := range body {
				if l = strings.TrimSpace(l); l != "" {
					fields = append(fields, l)
				}
			}
			m.body = []byte(strings.Join(fields, "&"))
		} else {
			m.body = []byte(strings.Join(body, "\n"))
		}
	}
	return m, nil
}

// status reads an answer's start line: "201", "201 Created" or "HTTP/1.1 201 Created".
func (m *httpMessage) status() (int, error) {
	fields := strings.Fields(m.start)
	if len(fields) > 0 && strings.HasPrefix(fields[0], "HTTP/") {
		fields = fields[1:]
	}
	if len(fields) == 0 {
		return 0, errors.New("the answer has no status line")
	}
	code, err := strconv.Atoi(fields[0])
	if err != nil || code < 100 || code > 599 {
		return 0, fmt.Errorf("status line %q does not start with a status code", m.start)
	}
	return code, nil
}

// requestLine reads a callback's start line: "POST /v1/provider-callbacks/id?query".
func (m *httpMessage) requestLine() (method, target string, err error) {
	fields := strings.Fields(m.start)
	if len(fields) < 2 || !strings.HasPrefix(fields[1], "/") {
		return "", "", fmt.Errorf("request line %q is not METHOD /path", m.start)
	}
	return strings.ToUpper(fields[0]), fields[1], nil
}

// isForm reports whether a content type is form-encoded.
func isForm(contentType string) bool {
	mt, _, _ := mime.ParseMediaType(contentType)
	return mt == "application/x-www-form-urlencoded"
}

// isJSON reports whether a content type is JSON.
func isJSON(contentType string) bool {
	mt, _, _ := mime.ParseMediaType(contentType)
	return httpgw.JSONMediaType(mt)
}
