package bench

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"
)

// benchConnTimeout bounds one exchange on a caller's connection.
const benchConnTimeout = time.Minute

// benchConn is one bench caller's keep-alive connection to the API. It writes each request with
// net/http's Request.Write and reads the answer with http.ReadResponse, on the caller's own
// goroutine. The load generator shares the machine with the stack it measures, and an
// http.Transport spends two goroutines per connection and two channel handoffs per request;
// here a caller spends none, and leaves that CPU to the stack.
type benchConn struct {
	addr string // host:port of the API
	conn net.Conn
	br   *bufio.Reader
	bw   *bufio.Writer
}

// do sends req and returns its status code and body. A connection that fails is closed and the
// request is sent once more on a new one: the bench's submissions carry idempotency keys, so a
// second delivery of the same request answers the first one's result.
func (c *benchConn) do(ctx context.Context, req *http.Request, body []byte) (int, []byte, error) {
	var err error
	for range 2 {
		if ctx.Err() != nil {
			return 0, nil, ctx.Err()
		}
		var status int
		var raw []byte
		if status, raw, err = c.exchange(ctx, req, body); err == nil {
			return status, raw, nil
		}
		c.close()
	}
	return 0, nil, err
}

// exchange makes one request on the connection, dialling it first when needed. When ctx ends
// mid-exchange, the connection's deadline ends it.
func (c *benchConn) exchange(ctx context.Context, req *http.Request, body []byte) (int, []byte, error) {
	if c.conn == nil {
		conn, err := net.DialTimeout("tcp", c.addr, benchConnTimeout)
		if err != nil {
			return 0, nil, fmt.Errorf("dial %s: %w", c.addr, err)
		}
		c.conn, c.br, c.bw = conn, bufio.NewReaderSize(conn, 4096), bufio.NewWriterSize(conn, 4096)
	}
	if err := c.conn.SetDeadline(time.Now().Add(benchConnTimeout)); err != nil {
		return 0, nil, fmt.Errorf("set deadline: %w", err)
	}
	conn := c.conn
	defer context.AfterFunc(ctx, func() { _ = conn.SetDeadline(time.Now()) })()
	if body != nil {
		req.Body = io.NopCloser(bytes.NewReader(body))
	}
	if err := req.Write(c.bw); err != nil {
		return 0, nil, fmt.Errorf("write request: %w", err)
	}
	if err := c.bw.Flush(); err != nil {
		return 0, nil, fmt.Errorf("write request: %w", err)
	}
	resp, err := http.ReadResponse(c.br, req)
	if err != nil {
		return 0, nil, fmt.Errorf("read response: %w", err)
	}
	raw, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return 0, nil, fmt.Errorf("read response body: %w", err)
	}
	if resp.Close {
		c.close()
	}
	return resp.StatusCode, raw, nil
}

// close drops the connection; the next request dials a new one.
func (c *benchConn) close() {
	if c.conn != nil {
		_ = c.conn.Close()
		c.conn = nil
	}
}
