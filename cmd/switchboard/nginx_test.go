package main

import (
	"bytes"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"switchboard/engine/enginetest"
)

// nginxTemplate is the committed site configuration the test runs.
var nginxTemplate = filepath.Join("..", "..", "deploy", "nginx", "switchboard.conf")

// TestBehindNginx runs deploy/nginx/switchboard.conf, as committed but for its addresses and
// paths, in front of a real serve whose publicUrl is nginx's address: a submission passes, the
// client address serve logs is the one nginx saw (X-Forwarded-For from a trusted proxy), a
// console action whose Origin is publicUrl is not refused although nginx rewrote Host, a body
// over serve's cap gets serve's own answer, and SIGHUP without TLS leaves serve running.
// It skips without nginx unless SWITCHBOARD_REQUIRE_NGINX=1 (.ci/run sets it).
func TestBehindNginx(t *testing.T) {
	t.Parallel()
	bin := nginxBinary(t)
	proxyAddr := loopbackAddr(t)
	publicURL := "https://" + proxyAddr
	s := newServedStack(t, func(doc map[string]any, addr string) {
		doc["listen"] = map[string]any{"api": addr, "metrics": "", "trustedProxies": []string{"127.0.0.1/32"}}
		doc["publicUrl"] = publicURL + "/"
	})
	s.start()
	s.waitReady(90 * time.Second)
	pair := startNginx(t, bin, proxyAddr, s.addr)

	// The client connects from another loopback address than nginx's, so that the two differ.
	client := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{
		DialContext:     (&net.Dialer{LocalAddr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, 3)}}).DialContext,
		TLSClientConfig: &tls.Config{RootCAs: pair.Pool(), ServerName: "127.0.0.1", MinVersion: tls.VersionTLS12}}}
	do := func(method, path, token string, header map[string]string, body []byte) (int, http.Header, []byte) {
		t.Helper()
		req, _ := http.NewRequest(method, publicURL+path, bytes.NewReader(body))
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		if body != nil {
			req.Header.Set("Content-Type", "application/json")
		}
		for k, v := range header {
			req.Header.Set(k, v)
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatalf("%s %s through nginx: %v", method, path, err)
		}
		defer resp.Body.Close()
		raw, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, resp.Header, raw
	}

	sub := smsBody(nil)
	sub["notBefore"] = time.Now().Add(time.Hour).UTC().Format(time.RFC3339) // stays queued: the cancel below applies
	b, _ := json.Marshal(sub)
	status, _, raw := do("POST", "/v1/messages", s.token(t, "case-system", "messaging:send"), map[string]string{"Idempotency-Key": "nginx-1"}, b)
	if status != http.StatusAccepted {
		t.Fatalf("submission through nginx: %d %s", status, raw)
	}
	var accepted struct{ ID string }
	if err := json.Unmarshal(raw, &accepted); err != nil || accepted.ID == "" {
		t.Fatalf("submission answer %s", raw)
	}

	operator := s.token(t, "operations-console", "messaging:operate")
	cancel := "/v1/messages/" + accepted.ID + "/cancel"
	if status, _, raw := do("POST", cancel, operator, map[string]string{"Origin": "https://evil.example"}, nil); status != http.StatusForbidden {
		t.Fatalf("a cross-site cancel through nginx: %d %s", status, raw)
	}
	if status, _, raw := do("POST", cancel, operator, map[string]string{"Origin": publicURL, "Sec-Fetch-Site": "same-origin"}, nil); status != http.StatusOK {
		t.Fatalf("the console's cancel (Origin = publicUrl) through nginx: %d %s", status, raw)
	}

	// serve logs the client nginx saw (127.0.0.3), not nginx (127.0.0.1); a forged
	// X-Forwarded-For sent to serve directly, from a peer that is no trusted proxy, is ignored.
	do("POST", "/v1/provider-callbacks/sms-gateway", "", map[string]string{"X-Signature": "forged"}, []byte(`{}`))
	waitFor(t, s, "the unverified callback's log line with the client through nginx", func() bool { return hasLogLine(s.logs.String(), "callback unverified", `"client":"127.0.0.3"`) })
	direct := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
		DialContext: (&net.Dialer{LocalAddr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, 4)}}).DialContext}}
	req, _ := http.NewRequest("POST", "http://"+s.addr+"/v1/provider-callbacks/sms-gateway", strings.NewReader(`{}`))
	req.Header.Set("X-Forwarded-For", "198.51.100.9")
	if resp, err := direct.Do(req); err == nil {
		resp.Body.Close()
	}
	waitFor(t, s, "the direct callback's log line", func() bool { return hasLogLine(s.logs.String(), "callback unverified", `"client":"127.0.0.4"`) })
	if strings.Contains(s.logs.String(), "198.51.100.9") {
		t.Fatal("a forged X-Forwarded-For from a peer that is no trusted proxy was believed")
	}

	// A body over 1 MiB reaches serve, which answers with its own problem.
	big := []byte(`{"x":"` + strings.Repeat("a", 3<<19) + `"}`)
	status, h, raw := do("POST", "/v1/messages", s.token(t, "case-system", "messaging:send"), map[string]string{"Idempotency-Key": "nginx-2"}, big)
	if status != http.StatusRequestEntityTooLarge || h.Get("Content-Type") != "application/problem+json" || !bytes.Contains(raw, []byte("request.body-too-large")) {
		t.Fatalf("a 1.5 MiB body through nginx: %d %s %.200s", status, h.Get("Content-Type"), raw)
	}

	s.signal(t, syscall.SIGHUP)
	waitFor(t, s, "the SIGHUP line", func() bool { return strings.Contains(s.logs.String(), "nothing to reload") })
	if status, _, _ := do("GET", "/ready", "", nil, nil); status != http.StatusOK {
		t.Fatalf("/ready through nginx after SIGHUP: %d", status)
	}
}

// nginxBinary is nginx's path, or skips (fails under SWITCHBOARD_REQUIRE_NGINX=1).
func nginxBinary(t *testing.T) string {
	t.Helper()
	for _, p := range []string{"nginx", "/usr/sbin/nginx"} {
		if path, err := exec.LookPath(p); err == nil {
			return path
		}
	}
	if os.Getenv("SWITCHBOARD_REQUIRE_NGINX") == "1" {
		t.Fatal("SWITCHBOARD_REQUIRE_NGINX=1 but nginx is not installed: apt-get install nginx")
	}
	t.Skip("needs nginx on PATH or in /usr/sbin: apt-get install nginx (.ci/run installs it)")
	return ""
}

// startNginx writes the committed site with the test's addresses and a fresh certificate,
// wraps it in a main configuration whose every path is in a temporary folder, and runs nginx
// in the foreground until the test ends. It returns the certificate nginx serves.
func startNginx(t *testing.T, bin, listen, upstream string) enginetest.CertPair {
	t.Helper()
	dir := t.TempDir()
	pair := enginetest.WriteCertPair(t, dir, "proxy", 1)
	raw, err := os.ReadFile(nginxTemplate)
	if err != nil {
		t.Fatal(err)
	}
	site := string(raw)
	for _, r := range [][2]string{
		{"server 127.0.0.1:8107;", "server " + upstream + ";"},
		{"listen 80;", "listen " + loopbackAddr(t) + ";"},
		{"listen 443 ssl;", "listen " + listen + " ssl;"},
		{"listen [::]:80;", ""},
		{"listen [::]:443 ssl;", ""},
		{"/etc/ssl/switchboard/fullchain.pem", pair.CertFile},
		{"/etc/ssl/switchboard/privkey.pem", pair.KeyFile},
	} {
		if !strings.Contains(site, r[0]) {
			t.Fatalf("%s no longer holds %q; the test must follow it", nginxTemplate, r[0])
		}
		site = strings.Replace(site, r[0], r[1], 1)
	}
	sitePath := filepath.Join(dir, "switchboard.conf")
	if err := os.WriteFile(sitePath, []byte(site), 0o644); err != nil {
		t.Fatal(err)
	}
	user := ""
	if os.Geteuid() == 0 {
		user = "user root;\n" // the workers write the temporary folders below, which are root's
	}
	main := fmt.Sprintf(`%[2]spid %[1]s/nginx.pid;
error_log %[1]s/error.log info;
worker_processes 1;
events { worker_connections 64; }
http {
    access_log %[1]s/access.log;
    client_body_temp_path %[1]s/client_body;
    proxy_temp_path %[1]s/proxy;
    fastcgi_temp_path %[1]s/fastcgi;
    uwsgi_temp_path %[1]s/uwsgi;
    scgi_temp_path %[1]s/scgi;
    include %[3]s;
}
`, dir, user, sitePath)
	mainPath := filepath.Join(dir, "nginx.conf")
	if err := os.WriteFile(mainPath, []byte(main), 0o644); err != nil {
		t.Fatal(err)
	}
	logs := &syncBuffer{}
	cmd := exec.Command(bin, "-p", dir, "-e", filepath.Join(dir, "error.log"), "-c", mainPath, "-g", "daemon off;")
	cmd.Stdout, cmd.Stderr = logs, logs
	if err := cmd.Start(); err != nil {
		t.Fatalf("start nginx: %v", err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGQUIT)
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
		if t.Failed() {
			errLog, _ := os.ReadFile(filepath.Join(dir, "error.log"))
			t.Logf("nginx output:\n%s\nerror.log (tail):\n%s", logs.String(), tail(string(errLog), 4000))
		}
	})
	deadline := time.Now().Add(30 * time.Second)
	for {
		select {
		case <-done:
			errLog, _ := os.ReadFile(filepath.Join(dir, "error.log"))
			t.Fatalf("nginx exited:\n%s\n%s", logs.String(), errLog)
		default:
		}
		if c, err := net.DialTimeout("tcp", listen, time.Second); err == nil {
			_ = c.Close()
			return pair
		}
		if time.Now().After(deadline) {
			t.Fatal("nginx does not listen")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// hasLogLine reports whether a line of logs has msg and holds field.
func hasLogLine(logs, msg, field string) bool {
	for _, line := range strings.Split(logs, "\n") {
		if strings.Contains(line, `"msg":"`+msg+`"`) && strings.Contains(line, field) {
			return true
		}
	}
	return false
}
