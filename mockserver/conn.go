package mockserver

import (
	"bytes"
	"context"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"
)

// GuardListener wraps the mock's listener so that the answers of Go's HTTP
// server itself are problem+json like every other error of the mock. Some
// requests never reach a handler: the server refuses headers over
// MaxHeaderBytes (431), a request line or header it cannot parse (400), an
// HTTP version it does not speak (505) and a transfer coding it does not
// know (501), answering in text/plain. It also remembers each connection's
// read deadline, so the body deadline never outlives the server's
// --read-timeout.
//
// Serve with ConnContext as the http.Server's ConnContext (Serve does).
func GuardListener(ln net.Listener) net.Listener { return guardListener{ln} }

// ConnContext makes the guarded connection known to the requests it carries.
func ConnContext(ctx context.Context, c net.Conn) context.Context {
	if g, ok := c.(*guardedConn); ok {
		return context.WithValue(ctx, connKey{}, g)
	}
	return ctx
}

type connKey struct{}

type guardListener struct{ net.Listener }

func (l guardListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &guardedConn{Conn: c}, nil
}

type guardedConn struct {
	net.Conn
	mu           sync.Mutex
	readDeadline time.Time
	// inFlight is the in-flight slot of the request the connection
	// carries (LimitInFlight).
	inFlight slot
	// lastRead is what the latest Read returned, in the server's own read
	// buffer (no copy): when the server refuses a request's head, the head
	// is there, for the refusal to name what it refused. Read and the
	// server's refusal run on the connection's one goroutine.
	lastRead []byte
}

func (c *guardedConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	c.lastRead = p[:n]
	return n, err
}

func (c *guardedConn) SetReadDeadline(t time.Time) error {
	c.mu.Lock()
	c.readDeadline = t
	c.mu.Unlock()
	return c.Conn.SetReadDeadline(t)
}

func (c *guardedConn) SetDeadline(t time.Time) error {
	c.mu.Lock()
	c.readDeadline = t
	c.mu.Unlock()
	return c.Conn.SetDeadline(t)
}

// CloseWrite lets net/http half-close after a refusal, so the client reads
// the answer before the connection goes (as it does on a bare TCP conn).
func (c *guardedConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return c.Conn.Close()
}

// ReadDeadline is the deadline the server set for reading (zero: none).
func (c *guardedConn) ReadDeadline() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.readDeadline
}

// serverRejection is how net/http writes its own refusals: a status line,
// these exact headers, then a short text; never a Date header, which every
// answer written through a ResponseWriter carries.
const serverRejectionHeaders = "\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\n"

func (c *guardedConn) Write(p []byte) (int, error) {
	if out, ok := asProblem(p, c.lastRead); ok {
		if _, err := c.Conn.Write(out); err != nil {
			return 0, err
		}
		return len(p), nil
	}
	return c.Conn.Write(p)
}

// asProblem turns one of net/http's own plain-text refusals into the same
// answer as problem+json; ok is false for anything else. read is what the
// connection read last, where the refused request's head may be.
func asProblem(p, read []byte) (out []byte, ok bool) {
	const proto = "HTTP/1.1 "
	if !bytes.HasPrefix(p, []byte(proto)) || len(p) < len(proto)+3 {
		return nil, false
	}
	lineEnd := bytes.Index(p, []byte("\r\n"))
	if lineEnd < 0 || !bytes.HasPrefix(p[lineEnd:], []byte(serverRejectionHeaders)) {
		return nil, false
	}
	status, err := strconv.Atoi(string(p[len(proto) : len(proto)+3]))
	if err != nil || status < 400 || status > 599 {
		return nil, false
	}
	text := string(p[lineEnd+len(serverRejectionHeaders):])
	code := codeInvalidRequest
	var detail string
	switch status {
	case http.StatusRequestHeaderFieldsTooLarge:
		detail = "the request's headers are larger than the mock accepts (" + strconv.Itoa(maxHeaderBytes>>10) + " KiB)"
	case http.StatusHTTPVersionNotSupported:
		code, detail = codeNotSupported, "the mock speaks HTTP/1.0, HTTP/1.1 and HTTP/2 only ("+text+")"
	case http.StatusNotImplemented:
		// net/http says only "Unsupported transfer encoding"; the
		// request's head, when it is in the last read, names it.
		code, detail = codeNotSupported, "the request's Transfer-Encoding"+transferEncodingOf(read)+" is not one the mock reads: it reads chunked only, or a body of a given Content-Length"
	default:
		detail = "the request could not be read as HTTP (" + text + ")"
	}
	prob := (&apiError{code: code, status: status, final: true, detail: detail}).problem("")
	body, err := marshalUnescaped(prob)
	if err != nil {
		return nil, false
	}
	var b bytes.Buffer
	b.WriteString(proto + strconv.Itoa(status) + " " + http.StatusText(status) + "\r\n")
	b.WriteString("Content-Type: application/problem+json\r\nConnection: close\r\n")
	b.WriteString("Content-Length: " + strconv.Itoa(len(body)) + "\r\n\r\n")
	b.Write(body)
	return b.Bytes(), true
}

// maxHeaderBytes is what the mock's HTTP server accepts of a request's
// headers (http.Server.MaxHeaderBytes; net/http allows 4 KiB more).
const maxHeaderBytes = 64 << 10

// MaxHeaderBytes is the value for the mock's http.Server.
const MaxHeaderBytes = maxHeaderBytes

// bodyDeadline is when a request body must have arrived: bodyTimeout from
// now, or the server's own read deadline for the request if that is earlier.
func (s *Server) bodyDeadline(r *http.Request) (time.Time, time.Duration) {
	d := time.Now().Add(s.bodyTimeout)
	if g, ok := r.Context().Value(connKey{}).(*guardedConn); ok {
		if rd := g.ReadDeadline(); !rd.IsZero() && rd.Before(d) {
			return rd, time.Until(rd)
		}
	}
	return d, s.bodyTimeout
}

// transferEncodingOf is ` "gzip"` for a request head in read that sends
// Transfer-Encoding: gzip, "" when read holds no such header.
func transferEncodingOf(read []byte) string {
	head, _, _ := bytes.Cut(read, []byte("\r\n\r\n"))
	for _, line := range bytes.Split(head, []byte("\r\n")) {
		name, value, ok := bytes.Cut(line, []byte(":"))
		if ok && bytes.EqualFold(bytes.TrimSpace(name), []byte("Transfer-Encoding")) {
			v := bytes.TrimSpace(value)
			if len(v) > 64 {
				v = append(v[:64:64], "…"...)
			}
			return " " + strconv.Quote(string(v))
		}
	}
	return ""
}
