package storetest

import (
	"io"
	"net"
	"net/url"
	"sync"
	"testing"
)

// Proxy is a TCP proxy in front of a database server that a test controls:
// it forwards until Stall, then holds every byte (open connections stop
// answering, new ones are accepted and never answered) until Recover.
type Proxy struct {
	ln     net.Listener
	target string

	mu        sync.Mutex
	stalled   bool
	conns     map[net.Conn]bool
	recovered chan struct{} // closed by Recover
}

// NewProxy listens on a free local port and forwards to target (host:port);
// it is closed when the test ends.
func NewProxy(tb testing.TB, target string) *Proxy {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatalf("proxy: listen: %v", err)
	}
	p := &Proxy{ln: ln, target: target, conns: map[net.Conn]bool{}, recovered: make(chan struct{})}
	go p.serve()
	tb.Cleanup(p.close)
	return p
}

// URL returns the postgres:// URL dsn with its host and port replaced by the
// proxy's.
func (p *Proxy) URL(tb testing.TB, dsn string) string {
	tb.Helper()
	u, err := url.Parse(dsn)
	if err != nil {
		tb.Fatalf("proxy: parse %q: %v", dsn, err)
	}
	u.Host = p.ln.Addr().String()
	return u.String()
}

// Stall stops forwarding: what either side sends from now on is held.
func (p *Proxy) Stall() {
	p.mu.Lock()
	p.stalled = true
	p.mu.Unlock()
}

// Recover drops every connection open during the stall (as a restarted
// server or network would) and forwards new connections again.
func (p *Proxy) Recover() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.stalled = false
	for c := range p.conns {
		c.Close()
	}
	clear(p.conns)
	close(p.recovered)
	p.recovered = make(chan struct{})
}

func (p *Proxy) close() {
	p.ln.Close()
	p.Recover()
}

// state says whether the proxy is stalled, and the channel Recover closes.
func (p *Proxy) state() (bool, chan struct{}) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.stalled, p.recovered
}

func (p *Proxy) track(cs ...net.Conn) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range cs {
		p.conns[c] = true
	}
}

func (p *Proxy) serve() {
	for {
		client, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.track(client)
		if stalled, _ := p.state(); stalled {
			continue // accepted, never answered
		}
		server, err := net.Dial("tcp", p.target)
		if err != nil {
			client.Close()
			continue
		}
		p.track(server)
		go p.pipe(server, client)
		go p.pipe(client, server)
	}
}

// pipe copies src to dst until either closes; once the proxy is stalled, it
// holds what it read and waits for Recover, which closes both.
func (p *Proxy) pipe(dst, src net.Conn) {
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			if stalled, recovered := p.state(); stalled {
				<-recovered
				return
			}
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			if err != io.EOF {
				src.Close()
			}
			dst.Close()
			return
		}
	}
}
