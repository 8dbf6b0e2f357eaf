package api

import (
	"bytes"
	"net"
	"net/http"
	"strconv"

	"switchboard/engine"
)

// wallListener hands out connections whose every answer carries the common headers.
type wallListener struct {
	net.Listener
}

func (l *wallListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &wallConn{Conn: c}, nil
}

// wallConn rewrites the answers Go's HTTP server writes by itself, without a handler: a
// malformed request line or header (400), headers over the cap (431), an unknown transfer
// coding (501), an unsupported protocol version (505) and an Expect other than 100-continue
// (417). Those are the only answers whose head lacks Cache-Control, since a handler's answer
// gets it before the handler runs; each is written in one Write that starts with its status
// line. The 400 and the 431 become problem+json answers (Go's text for a 400 may quote the
// request line); the others keep their body and gain the common headers.
type wallConn struct {
	net.Conn
}

func (c *wallConn) Write(p []byte) (int, error) {
	out, ok := ownAnswer(p)
	if !ok {
		return c.Conn.Write(p)
	}
	if _, err := c.Conn.Write(out); err != nil {
		return 0, err
	}
	return len(p), nil
}

// CloseWrite half-closes the connection when it can, as Go's server does after a 431 so that
// the client reads the answer before the connection goes.
func (c *wallConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}

var (
	statusPrefix = []byte("HTTP/1.1 ")
	headEnd      = []byte("\r\n\r\n")
	crlf         = []byte("\r\n")
	cacheControl = []byte("\r\nCache-Control:")
	// goErrorHeaders is the whole header section of the answers Go writes for a request it
	// could not read.
	goErrorHeaders = []byte("\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close")
)

// ownAnswer is p rewritten when p is an answer Go's server wrote by itself, and false for
// everything else (a handler's answer, part of a body, an interim 1xx answer).
func ownAnswer(p []byte) ([]byte, bool) {
	if !bytes.HasPrefix(p, statusPrefix) {
		return nil, false
	}
	end := bytes.Index(p, headEnd)
	if end < 0 || bytes.Contains(p[:end], cacheControl) {
		return nil, false
	}
	line := bytes.Index(p, crlf) // ≤ end
	if line < len(statusPrefix)+3 {
		return nil, false
	}
	status, err := strconv.Atoi(string(p[len(statusPrefix) : len(statusPrefix)+3]))
	if err != nil || status < 200 {
		return nil, false
	}
	goError := bytes.Equal(p[line:end], goErrorHeaders)
	switch {
	case goError && status == http.StatusBadRequest:
		return problemAnswer(engine.CodeRequestInvalid, "the request line or its headers are malformed"), true
	case goError && status == http.StatusRequestHeaderFieldsTooLarge:
		return problemAnswer(engine.CodeHeadersTooLarge, "the request line and headers are over the size limit"), true
	}
	out := make([]byte, 0, len(p)+64)
	out = append(out, p[:line]...)
	out = append(out, "\r\nCache-Control: no-store\r\nX-Content-Type-Options: nosniff"...)
	out = append(out, p[line:]...)
	return out, true
}

// problemAnswer is a whole HTTP answer carrying the problem code, closing the connection as
// Go's own answer did.
func problemAnswer(code, detail string) []byte {
	info := problems[code]
	body := encodeProblem(code, info, detail, newTraceID())
	h := http.Header{}
	setCommonHeaders(h)
	h.Set("Connection", "close")
	h.Set("Content-Type", "application/problem+json")
	h.Set("Content-Length", strconv.Itoa(len(body)))
	var b bytes.Buffer
	b.WriteString("HTTP/1.1 " + strconv.Itoa(info.status) + " " + http.StatusText(info.status) + "\r\n")
	_ = h.Write(&b)
	b.WriteString("\r\n")
	b.Write(body)
	return b.Bytes()
}
