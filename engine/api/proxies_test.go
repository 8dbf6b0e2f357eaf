package api

import (
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"testing"
)

func TestClientAddr(t *testing.T) {
	t.Parallel()
	proxies := Proxies{netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("fd00::/64")}
	cases := []struct {
		name, remote string
		xff          []string
		want         string
	}{
		{"no proxy", "203.0.113.5:4000", nil, "203.0.113.5"},
		{"untrusted peer's header ignored", "203.0.113.5:4000", []string{"198.51.100.1"}, "203.0.113.5"},
		{"trusted peer without header", "10.1.2.3:4000", nil, "10.1.2.3"},
		{"one proxy", "10.1.2.3:4000", []string{"198.51.100.1"}, "198.51.100.1"},
		{"spoofed entry left of the real client", "10.1.2.3:4000", []string{"192.0.2.66, 198.51.100.1"}, "198.51.100.1"},
		{"two proxies", "10.1.2.3:4000", []string{"198.51.100.1, 10.9.9.9"}, "198.51.100.1"},
		{"two proxies, two headers", "10.1.2.3:4000", []string{"198.51.100.1", "10.9.9.9"}, "198.51.100.1"},
		{"every hop trusted", "10.1.2.3:4000", []string{"10.7.7.7, 10.9.9.9"}, "10.7.7.7"},
		{"garbage stops the walk", "10.1.2.3:4000", []string{"198.51.100.1, unknown"}, "10.1.2.3"},
		{"entry with a port", "10.1.2.3:4000", []string{"198.51.100.1:5555"}, "198.51.100.1"},
		{"IPv6 proxy and client", "[fd00::7]:4000", []string{"2001:db8::1"}, "2001:db8::1"},
		{"IPv4-mapped peer", "[::ffff:10.1.2.3]:4000", []string{"198.51.100.1"}, "198.51.100.1"},
	}
	for _, c := range cases {
		r := httptest.NewRequest(http.MethodGet, "/", nil)
		r.RemoteAddr = c.remote
		for _, v := range c.xff {
			r.Header.Add("X-Forwarded-For", v)
		}
		if got := proxies.ClientAddr(r); got != c.want {
			t.Errorf("%s: ClientAddr = %s, want %s", c.name, got, c.want)
		}
		if got := Proxies(nil).ClientAddr(r); got != netip.MustParseAddrPort(c.remote).Addr().Unmap().String() {
			t.Errorf("%s: without trusted proxies ClientAddr = %s, want the peer", c.name, got)
		}
	}
}

// TestCrossSiteBehindProxy: a reverse proxy that rewrites Host (nginx's default proxy_pass)
// must not make the console's own requests cross-site when publicUrl names the origin, and
// forwarded hosts count only from trusted proxies.
func TestCrossSiteBehindProxy(t *testing.T) {
	t.Parallel()
	pub, _ := url.Parse("https://switchboard.example.com/")
	s := New(Config{Logger: slog.New(slog.DiscardHandler), PublicURL: pub,
		TrustedProxies: Proxies{netip.MustParsePrefix("127.0.0.1/32")}})
	plain := New(Config{Logger: slog.New(slog.DiscardHandler)})
	cases := []struct {
		name        string
		srv         *Server
		remote      string
		host        string
		header      map[string]string
		wantRefused bool
	}{
		{"publicUrl's origin, Host rewritten", s, "192.0.2.1:1", "127.0.0.1:8107", map[string]string{"Origin": "https://switchboard.example.com"}, false},
		{"publicUrl's origin with its default port", s, "192.0.2.1:1", "127.0.0.1:8107", map[string]string{"Origin": "https://switchboard.example.com:443"}, false},
		{"publicUrl's host over another scheme", s, "192.0.2.1:1", "127.0.0.1:8107", map[string]string{"Origin": "http://switchboard.example.com"}, true},
		{"another site", s, "192.0.2.1:1", "127.0.0.1:8107", map[string]string{"Origin": "https://evil.example"}, true},
		{"the request's own Host still counts", s, "192.0.2.1:1", "127.0.0.1:8107", map[string]string{"Origin": "http://127.0.0.1:8107"}, false},
		{"forwarded host from a trusted proxy", s, "127.0.0.1:1", "127.0.0.1:8107",
			map[string]string{"Origin": "https://console.example.net", "X-Forwarded-Host": "console.example.net", "X-Forwarded-Proto": "https"}, false},
		{"forwarded host, other scheme", s, "127.0.0.1:1", "127.0.0.1:8107",
			map[string]string{"Origin": "http://console.example.net", "X-Forwarded-Host": "console.example.net", "X-Forwarded-Proto": "https"}, true},
		{"forwarded host from an untrusted peer", s, "192.0.2.1:1", "127.0.0.1:8107",
			map[string]string{"Origin": "https://evil.example", "X-Forwarded-Host": "evil.example", "X-Forwarded-Proto": "https"}, true},
		{"without publicUrl, Host rewritten", plain, "192.0.2.1:1", "127.0.0.1:8107", map[string]string{"Origin": "https://switchboard.example.com"}, true},
		{"Sec-Fetch-Site cross-site", s, "192.0.2.1:1", "127.0.0.1:8107",
			map[string]string{"Origin": "https://switchboard.example.com", "Sec-Fetch-Site": "cross-site"}, true},
	}
	for _, c := range cases {
		r := httptest.NewRequest(http.MethodPost, "/v1/messages/x/retry", nil)
		r.RemoteAddr, r.Host = c.remote, c.host
		for k, v := range c.header {
			r.Header.Set(k, v)
		}
		if got := c.srv.crossSite(r); got != c.wantRefused {
			t.Errorf("%s: crossSite = %v, want %v", c.name, got, c.wantRefused)
		}
	}
}
