package runtime

import (
	"net/netip"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"switchboard/engine/enginetest"
)

func TestListenTLS(t *testing.T) {
	t.Parallel()
	b := setup(t)
	good := enginetest.WriteCertPair(t, b.dir, "good", 1)
	enginetest.WriteCertPair(t, b.dir, "other", 2)
	garbage := filepath.Join(b.dir, "garbage.pem")
	if err := os.WriteFile(garbage, []byte("not PEM at all\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	unreadable := filepath.Join(b.dir, "unreadable.key")
	if err := os.WriteFile(unreadable, []byte("x"), 0o000); err != nil {
		t.Fatal(err)
	}
	listen := func(tls string) string { return "listen: {api: 127.0.0.1:8443, tls: " + tls + "}" }

	rt := b.mustLoad(t, doc(map[string]string{"listen": listen("{certFile: ./good.crt, keyFile: ./good.key}")}))
	if want := (TLS{CertFile: good.CertFile, KeyFile: good.KeyFile}); rt.Listen.TLS == nil || *rt.Listen.TLS != want {
		t.Fatalf("Listen.TLS = %+v, want %+v", rt.Listen.TLS, want)
	}

	cases := []struct {
		name, tls        string
		code, member, in string
		exit             int
	}{
		{"missing cert", "{certFile: ./none.crt, keyFile: ./good.key}", CodeUnreadable, "listen.tls.certFile", "no such file", 3},
		{"missing key", "{certFile: ./good.crt, keyFile: ./none.key}", CodeUnreadable, "listen.tls.keyFile", "no such file", 3},
		{"mismatched pair", "{certFile: ./good.crt, keyFile: ./other.key}", CodeInvalid, "listen.tls.keyFile", "is not the private key of the certificate in certFile", 1},
		{"cert not PEM", "{certFile: ./garbage.pem, keyFile: ./good.key}", CodeInvalid, "listen.tls.certFile", "holds no PEM certificate", 1},
		{"key not PEM", "{certFile: ./good.crt, keyFile: ./garbage.pem}", CodeInvalid, "listen.tls.keyFile", "holds no PEM private key", 1},
		{"pair swapped", "{certFile: ./good.key, keyFile: ./good.crt}", CodeInvalid, "listen.tls.certFile", "holds no PEM certificate", 1},
		{"key not given", "{certFile: ./good.crt}", CodeInvalid, "listen.tls.keyFile", "is required", 1},
		{"folder", "{certFile: ./package, keyFile: ./good.key}", CodeInvalid, "listen.tls.certFile", "not a regular file", 1},
	}
	if os.Geteuid() != 0 { // root reads a file of mode 0000
		cases = append(cases, struct {
			name, tls        string
			code, member, in string
			exit             int
		}{"unreadable key", "{certFile: ./good.crt, keyFile: ./unreadable.key}", CodeUnreadable, "listen.tls.keyFile", "permission denied", 3})
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := b.load(t, doc(map[string]string{"listen": listen(c.tls)}))
			d := requireDiag(t, err, c.code, c.member)
			if !strings.Contains(d.Message, c.in) {
				t.Errorf("message %q does not say %q", d.Message, c.in)
			}
			if got := ExitCode(err); got != c.exit {
				t.Errorf("exit code %d, want %d", got, c.exit)
			}
		})
	}
}

func TestListenTrustedProxies(t *testing.T) {
	t.Parallel()
	b := setup(t)
	rt := b.mustLoad(t, doc(map[string]string{"listen": `listen: {trustedProxies: ["10.0.0.0/8", "192.168.1.7", "fd00::1/64", "127.0.0.1/32"]}`}))
	want := []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("192.168.1.7/32"),
		netip.MustParsePrefix("fd00::/64"), netip.MustParsePrefix("127.0.0.1/32")}
	if !reflect.DeepEqual(rt.Listen.TrustedProxies, want) {
		t.Fatalf("TrustedProxies = %v, want %v", rt.Listen.TrustedProxies, want)
	}
	for _, bad := range []string{`["10.0.0.0/33"]`, `["proxy.example"]`, `["fe80::1%eth0"]`, `"10.0.0.0/8"`} {
		_, err := b.load(t, doc(map[string]string{"listen": "listen: {trustedProxies: " + bad + "}"}))
		d := requireDiag(t, err, CodeInvalid, "listen.trustedProxies")
		if strings.Contains(d.Message, "proxy.example") {
			t.Errorf("%s: the message quotes the value: %s", bad, d.Message)
		}
	}
}
