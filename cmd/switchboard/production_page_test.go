package main

import (
	"bytes"
	"cmp"
	"context"
	"crypto/tls"
	"crypto/x509"
	"database/sql"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"switchboard/engine/auth/authtest"
	"switchboard/providers/httpgw/mockgw"
)

// docs/production.md, the first production day, is executed here as an operator would type it:
// its ```sh blocks in order, in one bash shell (variables and the working folder carry from one
// block to the next), with the page's absolute paths under a temporary root and its host names
// on loopback (newPageMapping lists every substitution). The shell starts in a
// checkout: bin/switchboard is the binary under test (what `make build` makes) and deploy/ is
// the repository's, with the same substitutions.
//
// Each command of the page is one of three kinds, and the test fails on a command of none:
//   - run for real (pageRealCommands), with the real openssl, curl, jq, promtool and
//     systemd-analyze;
//   - played (pagePlayedCommands): systemctl and journalctl are bash functions that ask the test
//     to do what systemd would, for the unit the page installed (playedSystemd);
//   - not run (pageNotRunLines), listed by their exact text, each of which must still be on the
//     page.
//
// The identity provider is a TLS server of the test's with a real JWK Set and a client
// credentials token endpoint; the SMS gateway is the mock gateway, which records the
// Authorization header the page's static-authorization sends.

const productionDoc = "../../docs/production.md"

// pageRealCommands are the commands of the page that run as they are.
var pageRealCommands = []string{
	"install", "switchboard", "bin/switchboard", "/usr/local/sbin/switchboard-backup", "cat", "chmod",
	"head", "printf", "ls", "openssl", "sed", "systemd-analyze", "curl", "jq", "grep", "promtool",
	"echo", "date", "stat", "mv", "cd", "umask", "[",
}

// pagePlayedCommands are the commands of the page that bash functions play (playedSystemd).
var pagePlayedCommands = []string{"systemctl", "journalctl"}

// pageNotRunLines are the page's lines that the test does not run, by their exact text. The
// binary they would build is the one under test, already at bin/switchboard; the upgrade of
// step 9 therefore installs the same binary again.
var pageNotRunLines = []string{
	"make build",
	"git fetch --tags && git checkout v1.4.0",
}

// pageTools are the programs the page runs that a machine may lack, with their Debian packages.
var pageTools = map[string]string{
	"bash": "bash", "openssl": "openssl", "curl": "curl", "jq": "jq", "promtool": "prometheus",
	"systemd-analyze": "systemd",
}

// shellKeywords start no command of their own.
var shellKeywords = map[string]bool{"for": true, "do": true, "done": true, "if": true, "then": true,
	"else": true, "elif": true, "fi": true, "while": true, "until": true, "!": true}

// pageBlock is one shell block of the page: its text and the section it stands in.
type pageBlock struct {
	section string
	text    string
}

// shellBlocks returns the ```sh and ```bash blocks of a markdown page in order. Any other
// fenced block is an error: on a page that is executed, a block the test passes over would go
// stale unseen.
func shellBlocks(page string) ([]pageBlock, error) {
	var blocks []pageBlock
	var section string
	var body []string
	inBlock := false
	for n, line := range strings.Split(page, "\n") {
		switch {
		case !inBlock && strings.HasPrefix(line, "#"):
			section = strings.TrimSpace(strings.TrimLeft(line, "#"))
		case !inBlock && strings.HasPrefix(line, "```"):
			if info := strings.TrimPrefix(line, "```"); info != "sh" && info != "bash" {
				return nil, fmt.Errorf("line %d: a ```%s block: this page's blocks are executed, so each is ```sh", n+1, info)
			}
			inBlock, body = true, nil
		case inBlock && line == "```":
			blocks = append(blocks, pageBlock{section: section, text: strings.Join(body, "\n") + "\n"})
			inBlock = false
		case inBlock:
			body = append(body, line)
		}
	}
	if inBlock {
		return nil, errors.New("a fenced block is not closed")
	}
	return blocks, nil
}

var shellName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// shellCommands returns the command words of a shell text in order: the first word of each
// simple command, in pipelines, lists, subshells and command substitutions (inside double
// quotes too), after variable assignments and keywords. Quoted text, comments and here-document
// bodies are passed over.
func shellCommands(text string) []string {
	var out []string
	stack := []byte{0} // 0: unquoted, '"': double quotes; $( and ( push an unquoted context
	atStart := true
	assignDepth := 0 // the depth of an assignment's value, whose end starts a command; 0: none
	var heredocs []string
	isMeta := func(c byte) bool { return strings.IndexByte(" \t\n;|&()<>\"'`$", c) >= 0 }
	for i := 0; i < len(text); i++ {
		c := text[i]
		top := stack[len(stack)-1]
		if top == '"' {
			switch {
			case c == '\\':
				i++
			case c == '"':
				stack = stack[:len(stack)-1]
			case c == '$' && i+1 < len(text) && text[i+1] == '(':
				i++
				stack, atStart = append(stack, 0), true
			}
			continue
		}
		switch {
		case c == '\\':
			i++ // an escaped character, or a line continuation
		case c == '\'':
			if j := strings.IndexByte(text[i+1:], '\''); j >= 0 {
				i += j + 1
			} else {
				i = len(text)
			}
		case c == '"':
			stack = append(stack, '"')
		case c == '#' && (i == 0 || strings.IndexByte(" \t\n", text[i-1]) >= 0):
			for i < len(text) && text[i] != '\n' {
				i++
			}
			i--
		case c == '\n':
			atStart, assignDepth = true, 0
			for _, delim := range heredocs {
				for i < len(text) {
					end := strings.IndexByte(text[i+1:], '\n')
					if end < 0 {
						i = len(text)
						break
					}
					line := text[i+1 : i+1+end]
					i += end + 1
					if strings.TrimLeft(line, "\t") == delim {
						break
					}
				}
			}
			heredocs = nil
		case c == '<' && strings.HasPrefix(text[i:], "<<"):
			j := i + 2
			if j < len(text) && text[j] == '-' {
				j++
			}
			for j < len(text) && text[j] == ' ' {
				j++
			}
			k := j
			for k < len(text) && strings.IndexByte(" \t\n;|&()<>", text[k]) < 0 {
				k++
			}
			heredocs = append(heredocs, strings.Trim(text[j:k], `'"`))
			i = k - 1
		case c == '$' && i+1 < len(text) && text[i+1] == '(':
			i++
			stack, atStart = append(stack, 0), true
		case c == '(':
			stack, atStart = append(stack, 0), true
		case c == ')':
			if len(stack) > 1 {
				stack = stack[:len(stack)-1]
			}
			atStart = false
		case c == ';' || c == '|' || c == '&':
			atStart, assignDepth = true, 0
		case c == ' ' || c == '\t':
			if assignDepth == len(stack) {
				atStart, assignDepth = true, 0
			}
		case atStart:
			j := i
			for j < len(text) && !isMeta(text[j]) {
				j++
			}
			word := text[i:j]
			if eq := strings.IndexByte(word, '='); eq > 0 && shellName.MatchString(word[:eq]) {
				i, atStart, assignDepth = i+eq, false, len(stack) // the value follows; a command after it
				continue
			}
			i = j - 1
			if !shellKeywords[word] {
				out = append(out, word)
				atStart = false
			} else {
				atStart = word != "for" && word != "done" && word != "fi"
			}
		}
	}
	return out
}

// pageMapping is the substitution table from the page's machine to the test's: each of the
// page's absolute paths under the temporary root, each host name on loopback. It is the only
// change made to the page's text (and to the deploy/ files the page installs).
type pageMapping struct {
	pairs []string // old, new, … in the order they are tried
	r     *strings.Replacer
}

func newPageMapping(root, idp, gateway, api, metrics string) *pageMapping {
	_, apiPort, _ := net.SplitHostPort(api)
	m := &pageMapping{pairs: []string{
		// Host names and ports.
		"https://id.example.com/", idp, // the identity provider: the test's TLS server
		"https://sms.example.com/", gateway, // the SMS gateway: the mock gateway
		"smtp.example.com", "127.0.0.1", // the mail relay (no mail is sent)
		"switchboard.example.com:8443", "localhost:" + apiPort, // the API as callers reach it
		"switchboard.example.com", "localhost", // the certificate's name
		"0.0.0.0:8443", api, // the API listener
		"127.0.0.1:9107", metrics, // the metrics listener
		// Paths.
		"/etc/switchboard", root + "/etc/switchboard",
		"/etc/systemd/system", root + "/etc/systemd/system",
		"/etc/prometheus", root + "/etc/prometheus",
		"/etc/cron.d", root + "/etc/cron.d",
		"/var/lib/switchboard", root + "/var/lib/switchboard",
		"/var/backups/switchboard", root + "/var/backups/switchboard",
		"/usr/local/bin", root + "/usr/local/bin",
		"/usr/local/sbin", root + "/usr/local/sbin",
	}}
	m.r = strings.NewReplacer(m.pairs...)
	return m
}

func (m *pageMapping) apply(s string) string { return m.r.Replace(s) }

// pageRootFolders are the folders of the temporary root that a Debian machine has before the
// page starts.
var pageRootFolders = []string{"etc/cron.d", "etc/systemd/system", "usr/local/bin", "usr/local/sbin", "var/lib", "var/backups", "run", "root"}

func TestProductionPage(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile(productionDoc)
	if err != nil {
		t.Fatal(err)
	}
	page := string(raw)
	blocks, err := shellBlocks(page)
	if err != nil {
		t.Fatalf("%s: %v", productionDoc, err)
	}
	if len(blocks) == 0 {
		t.Fatalf("%s: no ```sh block", productionDoc)
	}
	checkPageCommands(t, page, blocks)
	if t.Failed() {
		t.FailNow() // nothing runs while the page has a command the test does not know
	}

	var missing []string
	for tool, pkg := range pageTools {
		if _, err := exec.LookPath(tool); err != nil {
			missing = append(missing, fmt.Sprintf("%s (Debian package %s)", tool, pkg))
		}
	}
	if len(missing) > 0 {
		slices.Sort(missing)
		if os.Getenv("SWITCHBOARD_REQUIRE_PRODUCTION_TOOLS") == "1" {
			t.Fatalf("SWITCHBOARD_REQUIRE_PRODUCTION_TOOLS=1 but not on PATH: %s", strings.Join(missing, ", "))
		}
		t.Skipf("docs/production.md runs tools not on PATH: %s", strings.Join(missing, ", "))
	}

	root, work := t.TempDir(), t.TempDir()
	for _, d := range pageRootFolders {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	secrets := map[string]string{
		"SMS_GATEWAY_TOKEN": "gateway-token-0123", "SMS_CALLBACK_SECRET": "callback-secret-4567",
		"SMTP_USER": "relay-user", "SMTP_PASSWORD": "relay-password-89", "SENDER_SECRET": "case-system-secret",
	}
	gw := newRecordingGateway(t)
	api, metrics := loopbackAddr(t), loopbackAddr(t)
	idp := newPageIdP(t, "case-system", secrets["SENDER_SECRET"])
	mapping := newPageMapping(root, idp.issuer, gw.url, api, metrics)
	for i := 0; i < len(mapping.pairs); i += 2 {
		t.Logf("the page's %s is the test's %s", mapping.pairs[i], mapping.pairs[i+1])
	}

	// The checkout the page runs from: bin/switchboard as `make build` leaves it, and deploy/.
	checkout := filepath.Join(root, "root", "switchboard")
	if err := os.MkdirAll(filepath.Join(checkout, "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(binary, filepath.Join(checkout, "bin", "switchboard")); err != nil {
		t.Fatal(err)
	}
	copyMapped(t, mapping, "../../deploy", filepath.Join(checkout, "deploy"))

	systemd := newPlayedSystemd(t, mapping, filepath.Join(root, "etc/systemd/system"), filepath.Join(root, "run"),
		[]string{"SSL_CERT_FILE=" + idp.caFile})
	played := httptest.NewServer(systemd)
	t.Cleanup(played.Close)

	env := append(os.Environ(), "HOME="+filepath.Join(root, "root"), "LC_ALL=C", "SWITCHBOARD_CONFIG=",
		"PATH="+filepath.Join(root, "usr/local/sbin")+":"+filepath.Join(root, "usr/local/bin")+":"+os.Getenv("PATH"),
		// The machine trusts the identity provider's certificate (curl and Go read these).
		"SSL_CERT_FILE="+idp.caFile, "CURL_CA_BUNDLE="+idp.caFile,
		"NO_PROXY=127.0.0.1,localhost", "no_proxy=127.0.0.1,localhost",
		"SB_PLAYED="+played.URL, "SB_WORK="+work)
	for k, v := range secrets {
		env = append(env, k+"="+v)
	}

	outputs := runPageBlocks(t, blocks, mapping, work, checkout, env)
	out := func(contains string) string {
		t.Helper()
		for i, b := range blocks {
			if strings.Contains(b.text, contains) {
				return outputs[i]
			}
		}
		t.Fatalf("no block of the page has %q", contains)
		return ""
	}
	at := func(p string) string { return mapping.apply(p) }

	// 1. The binary is installed and says what it is.
	if o := out("switchboard version"); !strings.HasPrefix(o, "switchboard ") {
		t.Errorf("switchboard version printed %q", o)
	}
	// 2 and 3. The package, the production runtime file and the secrets, root only.
	wantFileMode(t, at("/etc/switchboard/runtime.yaml"), 0o644)
	if _, err := os.Stat(at("/etc/switchboard/switchboard.yaml")); err != nil {
		t.Errorf("init wrote no package: %v", err)
	}
	wantFileMode(t, at("/etc/switchboard/credentials"), 0o700)
	for name, variable := range map[string]string{"sms-gateway-token": "SMS_GATEWAY_TOKEN", "sms-callback": "SMS_CALLBACK_SECRET",
		"smtp-user": "SMTP_USER", "smtp-password": "SMTP_PASSWORD"} {
		path := at("/etc/switchboard/credentials/" + name)
		wantFileMode(t, path, 0o600)
		if b, _ := os.ReadFile(path); string(b) != secrets[variable] {
			t.Errorf("%s holds %q, want $%s", name, b, variable)
		}
	}
	if info, err := os.Stat(at("/etc/switchboard/credentials/audit.key")); err != nil || info.Size() != 32 {
		t.Errorf("audit.key: %v, want 32 bytes", err)
	}
	// 4. check takes everything as serve will load it.
	if o := out("switchboard check"); !strings.Contains(o, "ok:") {
		t.Errorf("switchboard check printed no ok:\n%s", o)
	}
	// 5. systemd-analyze verify prints nothing for the unit and its drop-in, and the service started.
	if o := out("systemd-analyze verify"); o != "" {
		t.Errorf("the block with systemd-analyze verify printed, where the page says nothing:\n%s", o)
	}
	if o := out("journalctl -u switchboard"); !strings.Contains(o, "Started Switchboard") {
		t.Errorf("journalctl shows no start:\n%s", o)
	}
	// 6. A token from the provider, and the message's view: the id the page kept is the message's.
	if n := idp.issued(); n != 1 {
		t.Errorf("the identity provider issued %d tokens, want the page's 1", n)
	}
	view := jsonWith(t, out("/v1/messages/$ID"), "status")
	id, _ := view["id"].(string)
	if id == "" {
		t.Fatalf("no message view with an id in the output of step 6:\n%s", out("/v1/messages/$ID"))
	}
	// 7. The metrics listener answers on loopback, and promtool takes the rules and the job.
	if o := out("switchboard_build_info"); !strings.Contains(o, "switchboard_build_info{") {
		t.Errorf("no switchboard_build_info series:\n%s", o)
	}
	if o := out("promtool check"); strings.Count(o, "SUCCESS") < 2 {
		t.Errorf("promtool did not pass both checks:\n%s", o)
	}
	// 8 and 9. Every backup is a whole SQLite database holding the message; the nightly job is
	// in cron.d; the upgrade kept the previous binary.
	backups, _ := filepath.Glob(at("/var/backups/switchboard/*.db"))
	var nightly, before int
	for _, b := range backups {
		switch {
		case strings.Contains(filepath.Base(b), "switchboard-"):
			nightly++
		case strings.Contains(filepath.Base(b), "before-upgrade-"):
			before++
		}
		wantSQLiteIntact(t, b)
		if !messageIDs(t, b)[id] {
			t.Errorf("backup %s does not hold message %s", filepath.Base(b), id)
		}
	}
	if nightly != 1 || before != 1 {
		t.Errorf("backups %v: want one nightly and one before the upgrade", backups)
	}
	if b, err := os.ReadFile(at("/etc/cron.d/switchboard-backup")); err != nil || !strings.Contains(string(b), at("/usr/local/sbin/switchboard-backup")) {
		t.Errorf("cron.d/switchboard-backup: %q, %v", b, err)
	}
	if _, err := os.Stat(at("/usr/local/bin/switchboard.previous")); err != nil {
		t.Errorf("the upgrade kept no previous binary: %v", err)
	}
	if o := out("before-upgrade-$(date"); !strings.Contains(o, `"id":"`+id+`"`) {
		t.Errorf("after the upgrade, the view of message %s is not in the output:\n%s", id, o)
	}
	// The rollback: the database was set aside and the backup put in its place, served again.
	if _, err := os.Stat(at("/var/lib/switchboard/switchboard.db.before-restore")); err != nil {
		t.Errorf("the rollback set no database aside: %v", err)
	}
	if !messageIDs(t, at("/var/lib/switchboard/switchboard.db"))[id] {
		t.Errorf("the restored database does not hold message %s", id)
	}
	starts, stops := systemd.history()
	if starts != 3 || !slices.Equal(stops, []int{0, 0}) {
		t.Errorf("the service started %d times and stopped with %v: want 3 starts (enable, restart, the rollback's start) and two clean stops", starts, stops)
	}

	// The page's submission was answered 202: the same request again is answered with the
	// first 202 and the same id, by the server the rollback brought back.
	client := pageClient(t, at("/etc/switchboard/credentials/fullchain.pem"))
	base := "https://" + at("switchboard.example.com:8443")
	if resp, err := client.Get(base + "/ready"); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("/ready after the page: %v %v", resp, err)
	}
	submit := regexp.MustCompile(`(?s)-H "Idempotency-Key: ([^"]+)" \\\n\s*-d '([^']*)'`).FindStringSubmatch(page)
	if submit == nil {
		t.Fatalf("%s: no submission with an Idempotency-Key and a -d body", productionDoc)
	}
	token, err := idp.mint()
	if err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest(http.MethodPost, base+"/v1/messages", strings.NewReader(submit[2]))
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Idempotency-Key", submit[1])
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	var answer struct{ ID string }
	_ = json.Unmarshal(body, &answer)
	if resp.StatusCode != http.StatusAccepted || answer.ID != id {
		t.Errorf("the page's submission again: %d %s, want 202 with id %s", resp.StatusCode, body, id)
	}

	// The gateway got the message, with the page's static-authorization.
	waitUntil(t, "the gateway to take the message", func() bool { return gw.gw.Stats().Unique > 0 })
	for _, h := range gw.authorizations() {
		if h != "Bearer "+secrets["SMS_GATEWAY_TOKEN"] {
			t.Errorf("the gateway was sent Authorization %q, want Bearer $SMS_GATEWAY_TOKEN", h)
		}
	}
}

// checkPageCommands fails the test on a command of the page that is neither run, played nor
// listed as not run, and on an entry of those lists the page no longer has.
func checkPageCommands(t *testing.T, page string, blocks []pageBlock) {
	t.Helper()
	lines := map[string]bool{}
	for _, l := range strings.Split(page, "\n") {
		lines[strings.TrimSpace(l)] = true
	}
	for _, l := range pageNotRunLines {
		if !lines[l] {
			t.Errorf("%s no longer has the line %q that the test lists as not run: remove it from pageNotRunLines", productionDoc, l)
		}
	}
	used := map[string]bool{}
	for _, b := range blocks {
		for _, c := range shellCommands(withoutNotRun(b.text)) {
			used[c] = true
			if !slices.Contains(pageRealCommands, c) && !slices.Contains(pagePlayedCommands, c) {
				t.Errorf("%s (%s) runs %q, which the test neither runs (pageRealCommands), plays (pagePlayedCommands) nor lists as not run (pageNotRunLines)", productionDoc, b.section, c)
			}
		}
	}
	for _, c := range append(slices.Clone(pageRealCommands), pagePlayedCommands...) {
		if !used[c] {
			t.Errorf("the page no longer runs %q: remove it from the test's lists", c)
		}
	}
}

// withoutNotRun makes each line listed in pageNotRunLines a comment.
func withoutNotRun(block string) string {
	lines := strings.Split(block, "\n")
	for i, l := range lines {
		if slices.Contains(pageNotRunLines, strings.TrimSpace(l)) {
			lines[i] = "# not run: " + strings.TrimSpace(l)
		}
	}
	return strings.Join(lines, "\n")
}

// pagePlayedFunctions are the bash functions that play systemctl and journalctl: each sends its
// arguments to the test (playedSystemd) and prints the answer, with its exit status.
const pagePlayedFunctions = `__sb_play() {
  local a reply code
  local -a form=()
  for a in "$@"; do form+=(--data-urlencode "arg=$a"); done
  reply=$(curl -sS "${form[@]}" "$SB_PLAYED") || return 125
  code=${reply##*$'\n'}
  if [ "$code" != "$reply" ]; then printf '%s\n' "${reply%$'\n'*}"; fi
  return "$code"
}
systemctl() { __sb_play systemctl "$@"; }
journalctl() { __sb_play journalctl "$@"; }
`

// runPageBlocks runs the blocks in one bash shell, under errexit, nounset and pipefail, each
// with its output kept apart, and returns the outputs. A block that fails fails the test with
// its text and its output.
func runPageBlocks(t *testing.T, blocks []pageBlock, m *pageMapping, work, dir string, env []string) []string {
	t.Helper()
	var script strings.Builder
	script.WriteString("set -euo pipefail\n" + pagePlayedFunctions)
	script.WriteString(`trap '__sb_rc=$?; printf "%s %s\n" "$__sb_block" "$__sb_rc" > "$SB_WORK/status"' EXIT` + "\n")
	script.WriteString("__sb_block=start\n")
	for i, b := range blocks {
		name := filepath.Join(work, fmt.Sprintf("block-%d.sh", i+1))
		if err := os.WriteFile(name, []byte(m.apply(withoutNotRun(b.text))), 0o644); err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&script, "__sb_block=%d; source '%s' > '%s/out-%d.txt' 2>&1\n", i+1, name, work, i+1)
		fmt.Fprintf(&script, "echo \"$EPOCHREALTIME\" >> \"$SB_WORK/times\"\n")
	}
	script.WriteString("__sb_block=end\n")
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-c", script.String())
	cmd.Dir, cmd.Env = dir, env
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stderr, &stderr
	start := time.Now()
	runErr := cmd.Run()
	times, _ := os.ReadFile(filepath.Join(work, "times"))
	var took []string
	prev := float64(start.UnixMicro()) / 1e6
	for _, f := range strings.Fields(string(times)) {
		if v, err := strconv.ParseFloat(f, 64); err == nil {
			took, prev = append(took, fmt.Sprintf("%.1fs", v-prev)), v
		}
	}
	t.Logf("the page's %d blocks ran in %s (each: %s)", len(blocks), time.Since(start).Round(time.Millisecond), strings.Join(took, " "))
	outputs := make([]string, len(blocks))
	for i := range blocks {
		b, _ := os.ReadFile(filepath.Join(work, fmt.Sprintf("out-%d.txt", i+1)))
		outputs[i] = string(b)
	}
	status, _ := os.ReadFile(filepath.Join(work, "status"))
	if strings.TrimSpace(string(status)) == "end 0" && runErr == nil {
		return outputs
	}
	which, code, _ := strings.Cut(strings.TrimSpace(string(status)), " ")
	n, err := strconv.Atoi(which)
	if err != nil || n < 1 || n > len(blocks) {
		t.Fatalf("the page's shell ended at %q (%v, status %q):\n%s", which, runErr, status, stderr.String())
	}
	b := blocks[n-1]
	t.Fatalf("%s, section %q: block %d exited %s (%v)\n--- the block (as the page has it) ---\n%s--- its output ---\n%s",
		productionDoc, b.section, n, code, runErr, b.text, outputs[n-1])
	return nil
}

// copyMapped copies the files of src (not its folders) to dst with the mapping applied.
func copyMapped(t *testing.T, m *pageMapping, src, dst string) {
	t.Helper()
	entries, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(dst, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.IsDir() {
			continue
		}
		b, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dst, e.Name()), []byte(m.apply(string(b))), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// jsonWith finds, among the JSON objects printed in out, the last one with the member name.
func jsonWith(t *testing.T, out, name string) map[string]any {
	t.Helper()
	var found map[string]any
	dec := json.NewDecoder(strings.NewReader(out))
	for {
		var v any
		if err := dec.Decode(&v); err != nil {
			break
		}
		if o, ok := v.(map[string]any); ok && o[name] != nil {
			found = o
		}
	}
	return found
}

// wantSQLiteIntact fails the test unless path is an SQLite database that passes its integrity
// check.
func wantSQLiteIntact(t *testing.T, path string) {
	t.Helper()
	db, err := sql.Open("sqlite3", "file:"+path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var result string
	if err := db.QueryRow(`PRAGMA integrity_check`).Scan(&result); err != nil || result != "ok" {
		t.Errorf("%s: integrity_check %q, %v", filepath.Base(path), result, err)
	}
}

// pageClient trusts the certificate the page made.
func pageClient(t *testing.T, caFile string) *http.Client {
	t.Helper()
	b, err := os.ReadFile(caFile)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(b) {
		t.Fatalf("%s holds no certificate", caFile)
	}
	return &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}}}
}

// pageIdP is the identity provider of the page: a TLS server publishing a JWK Set at
// /.well-known/jwks.json and issuing access tokens for the client credentials grant at
// /oauth2/token (Ory Hydra's paths, as the page names them).
type pageIdP struct {
	srv            *httptest.Server
	key            *authtest.Key
	client, secret string
	issuer         string // https://127.0.0.1:PORT/
	caFile         string // the server's certificate, PEM
	mu             sync.Mutex
	tokens         int
}

func newPageIdP(t *testing.T, client, secret string) *pageIdP {
	t.Helper()
	p := &pageIdP{key: authtest.MustKey(t, authtest.ES256, "first-day"), client: client, secret: secret}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /.well-known/jwks.json", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/jwk-set+json")
		_, _ = w.Write(authtest.JWKS(p.key))
	})
	mux.HandleFunc("POST /oauth2/token", p.token)
	p.srv = httptest.NewTLSServer(mux)
	t.Cleanup(p.srv.Close)
	p.issuer = p.srv.URL + "/"
	p.caFile = filepath.Join(t.TempDir(), "idp.pem")
	cert := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: p.srv.Certificate().Raw})
	if err := os.WriteFile(p.caFile, cert, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// mint signs an access token for the client, scope messaging:send, audience switchboard.
func (p *pageIdP) mint() (string, error) {
	return p.key.MintWith(authtest.Claims(p.issuer, "switchboard", p.client, []string{"messaging:send"}, time.Now(), time.Hour), nil)
}

// token answers the client credentials grant of the client with its secret, for the scope
// messaging:send and the audience switchboard.
func (p *pageIdP) token(w http.ResponseWriter, r *http.Request) {
	f := func(k string) string { return r.PostFormValue(k) }
	if f("grant_type") != "client_credentials" || f("client_id") != p.client || f("client_secret") != p.secret ||
		f("scope") != "messaging:send" || f("audience") != "switchboard" {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		_, _ = w.Write([]byte(`{"error":"invalid_client"}`))
		return
	}
	tok, err := p.mint()
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	p.mu.Lock()
	p.tokens++
	p.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{"access_token": tok, "token_type": "bearer", "expires_in": 3600, "scope": "messaging:send"})
}

func (p *pageIdP) issued() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.tokens
}

// recordingGateway is the mock SMS gateway, recording the Authorization header of each request.
type recordingGateway struct {
	gw    *mockgw.Gateway
	url   string
	mu    sync.Mutex
	auths []string
}

func newRecordingGateway(t *testing.T) *recordingGateway {
	t.Helper()
	g := &recordingGateway{gw: mockgw.New(mockgw.Options{Logger: slog.New(slog.DiscardHandler)})}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		g.mu.Lock()
		g.auths = append(g.auths, r.Header.Get("Authorization"))
		g.mu.Unlock()
		g.gw.ServeHTTP(w, r)
	}))
	t.Cleanup(func() { srv.Close(); _ = g.gw.Close() })
	g.url = srv.URL + "/"
	return g
}

func (g *recordingGateway) authorizations() []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return slices.Clone(g.auths)
}

// playedSystemd does what systemd does for the page's commands, for the one unit
// switchboard.service as the page installed it under /etc/systemd/system (with its drop-ins):
//   - daemon-reload reads the unit and its drop-ins (an unloaded unit is read at its start);
//   - enable makes the WantedBy symlink, and with --now starts;
//   - start (Type=notify only) makes the StateDirectory with its mode, copies each
//     LoadCredential file into a credentials folder of its own (refusing to start when one is
//     missing), runs ExecStart under the unit's UMask with its Environment, STATE_DIRECTORY,
//     CREDENTIALS_DIRECTORY and NOTIFY_SOCKET, and returns at READY=1;
//   - stop sends SIGTERM and waits TimeoutStopSec, then SIGKILL; restart is stop and start;
//   - journalctl -u switchboard [-n N] [--no-pager] prints what the service wrote.
//
// It plays neither the sandbox nor DynamicUser: the service runs as the test's user.
type playedSystemd struct {
	t       *testing.T
	m       *pageMapping
	unitDir string
	runDir  string
	env     []string // the machine's environment the service also gets
	journal *syncBuffer

	mu       sync.Mutex
	unit     map[string][]string
	cmd      *exec.Cmd
	done     chan struct{}
	notify   *net.UnixConn
	sockDir  string
	starts   int
	stopped  []int
	stopWait time.Duration
}

const playedUnit = "switchboard.service"

func newPlayedSystemd(t *testing.T, m *pageMapping, unitDir, runDir string, env []string) *playedSystemd {
	s := &playedSystemd{t: t, m: m, unitDir: unitDir, runDir: runDir, env: env, journal: &syncBuffer{}}
	t.Cleanup(func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.running() {
			_ = s.cmd.Process.Signal(syscall.SIGKILL)
			<-s.done
		}
		s.closeNotify()
		if t.Failed() {
			t.Logf("the service's journal (tail):\n%s", tail(s.journal.String(), 8000))
		}
	})
	return s
}

func (s *playedSystemd) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	args := r.PostForm["arg"]
	s.mu.Lock()
	out, code := s.run(args)
	s.mu.Unlock()
	if out != "" && !strings.HasSuffix(out, "\n") {
		out += "\n"
	}
	fmt.Fprintf(w, "%s%d", out, code)
}

func (s *playedSystemd) run(args []string) (string, int) {
	if len(args) == 0 {
		return "no command", 2
	}
	var flags, words []string
	for _, a := range args[1:] {
		if strings.HasPrefix(a, "-") {
			flags = append(flags, a)
		} else {
			words = append(words, a)
		}
	}
	if args[0] == "journalctl" {
		return s.journalctl(args[1:])
	}
	if len(words) == 0 {
		return "systemctl: no verb", 1
	}
	verb, units := words[0], words[1:]
	for _, u := range units {
		if u != "switchboard" && u != playedUnit {
			return fmt.Sprintf("Unit %s not found (the test plays %s only).", u, playedUnit), 5
		}
	}
	if (len(units) == 0) != (verb == "daemon-reload") || (len(flags) > 0 && !(verb == "enable" && slices.Equal(flags, []string{"--now"}))) {
		return fmt.Sprintf("systemctl %s is not played by the test", strings.Join(args[1:], " ")), 1
	}
	switch verb {
	case "daemon-reload":
		unit, err := s.readUnit()
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			return err.Error(), 1
		}
		s.unit = unit
		return "", 0
	case "enable":
		out, code := s.enable()
		if code != 0 || len(flags) == 0 {
			return out, code
		}
		more, code := s.start()
		return out + more, code
	case "start":
		return s.start()
	case "stop":
		return s.stop()
	case "restart":
		if out, code := s.stop(); code != 0 {
			return out, code
		}
		return s.start()
	}
	return fmt.Sprintf("systemctl %s is not played by the test", verb), 1
}

// readUnit reads the unit file and then its drop-ins, in the order of their names.
func (s *playedSystemd) readUnit() (map[string][]string, error) {
	text, err := os.ReadFile(filepath.Join(s.unitDir, playedUnit))
	if err != nil {
		return nil, err
	}
	unit, err := parseUnit(string(text), nil)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", playedUnit, err)
	}
	dropIns, _ := filepath.Glob(filepath.Join(s.unitDir, playedUnit+".d", "*.conf"))
	slices.Sort(dropIns)
	for _, d := range dropIns {
		text, err := os.ReadFile(d)
		if err != nil {
			return nil, err
		}
		if unit, err = parseUnit(string(text), unit); err != nil {
			return nil, fmt.Errorf("%s: %w", d, err)
		}
	}
	return unit, nil
}

// last is the value a unit gives key last ("" when none).
func last(unit map[string][]string, key string) string {
	if v := unit[key]; len(v) > 0 {
		return v[len(v)-1]
	}
	return ""
}

func (s *playedSystemd) enable() (string, int) {
	if s.unit == nil {
		unit, err := s.readUnit()
		if err != nil {
			return err.Error(), 1
		}
		s.unit = unit
	}
	var out strings.Builder
	for _, target := range s.unit["WantedBy"] {
		dir := filepath.Join(s.unitDir, target+".wants")
		link := filepath.Join(dir, playedUnit)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err.Error(), 1
		}
		if _, err := os.Lstat(link); err == nil {
			continue
		}
		if err := os.Symlink(filepath.Join(s.unitDir, playedUnit), link); err != nil {
			return err.Error(), 1
		}
		fmt.Fprintf(&out, "Created symlink %s → %s.\n", link, filepath.Join(s.unitDir, playedUnit))
	}
	return out.String(), 0
}

func (s *playedSystemd) running() bool {
	if s.cmd == nil {
		return false
	}
	select {
	case <-s.done:
		return false
	default:
		return true
	}
}

func (s *playedSystemd) start() (string, int) {
	if s.running() {
		return "", 0
	}
	if s.unit == nil {
		unit, err := s.readUnit()
		if err != nil {
			return err.Error(), 1
		}
		s.unit = unit
	}
	u := s.unit
	failed := func(why string) (string, int) {
		s.logf("%s: %s\n", playedUnit, why)
		return fmt.Sprintf("Job for %s failed: %s.\nSee \"journalctl -u %s\" for details.", playedUnit, why, playedUnit), 1
	}
	if typ := last(u, "Type"); typ != "notify" {
		return failed("Type=" + typ + " is not played by the test (only notify)")
	}
	argv := strings.Fields(last(u, "ExecStart"))
	if len(argv) == 0 || !filepath.IsAbs(argv[0]) {
		return failed(fmt.Sprintf("ExecStart=%q is not an absolute command", last(u, "ExecStart")))
	}
	env := append([]string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"}, s.env...)
	for _, v := range u["Environment"] {
		env = append(env, strings.Fields(v)...)
	}
	if dirs := u["StateDirectory"]; len(dirs) > 0 {
		mode, err := strconv.ParseUint(cmp.Or(last(u, "StateDirectoryMode"), "0755"), 8, 32)
		if err != nil {
			return failed("StateDirectoryMode: " + err.Error())
		}
		var paths []string
		for _, d := range strings.Fields(strings.Join(dirs, " ")) {
			p := s.m.apply(filepath.Join("/var/lib", d))
			if err := os.MkdirAll(p, 0o755); err != nil {
				return failed(err.Error())
			}
			if err := os.Chmod(p, os.FileMode(mode)); err != nil {
				return failed(err.Error())
			}
			paths = append(paths, p)
		}
		env = append(env, "STATE_DIRECTORY="+strings.Join(paths, ":"))
	}
	if creds := u["LoadCredential"]; len(creds) > 0 {
		dir := filepath.Join(s.runDir, "credentials", playedUnit)
		if err := os.RemoveAll(dir); err != nil {
			return failed(err.Error())
		}
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return failed(err.Error())
		}
		for _, c := range creds {
			id, path, ok := strings.Cut(c, ":")
			if !ok {
				return failed("LoadCredential=" + c + " has no path")
			}
			b, err := os.ReadFile(path)
			if err != nil {
				return failed("Failed to set up credentials: " + err.Error())
			}
			if err := os.WriteFile(filepath.Join(dir, id), b, 0o400); err != nil {
				return failed(err.Error())
			}
		}
		env = append(env, "CREDENTIALS_DIRECTORY="+dir)
	}
	// A unix socket's path must stay under 108 bytes: t.TempDir's can be longer.
	sockDir, err := os.MkdirTemp("", "sbp")
	if err != nil {
		return failed(err.Error())
	}
	conn, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: filepath.Join(sockDir, "notify"), Net: "unixgram"})
	if err != nil {
		os.RemoveAll(sockDir)
		return failed(err.Error())
	}
	s.notify, s.sockDir = conn, sockDir
	env = append(env, "NOTIFY_SOCKET="+filepath.Join(sockDir, "notify"))
	notes := make(chan string, 16)
	go func() {
		buf := make([]byte, 4096)
		for {
			n, err := conn.Read(buf)
			if err != nil {
				return
			}
			select {
			case notes <- string(buf[:n]):
			default:
			}
		}
	}()
	// UMask, as systemd sets it before it executes the program.
	umask := cmp.Or(last(u, "UMask"), "0022")
	cmd := exec.Command("/bin/sh", append([]string{"-c", `umask "$0" && exec "$@"`, umask}, argv...)...)
	cmd.Dir, cmd.Env, cmd.Stdout, cmd.Stderr = "/", env, s.journal, s.journal
	if err := cmd.Start(); err != nil {
		s.closeNotify()
		return failed(err.Error())
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	s.cmd, s.done = cmd, done
	s.stopWait = 90 * time.Second
	if d, err := time.ParseDuration(last(u, "TimeoutStopSec")); err == nil {
		s.stopWait = d
	}
	timeout := time.After(2 * time.Minute)
	for {
		select {
		case n := <-notes:
			if !slices.Contains(strings.Split(n, "\n"), "READY=1") {
				continue
			}
			s.starts++
			s.logf("Started %s.\n", cmp.Or(last(u, "Description"), playedUnit))
			return "", 0
		case <-done:
			s.closeNotify()
			return failed(fmt.Sprintf("the main process exited, status %d, before READY=1", cmd.ProcessState.ExitCode()))
		case <-timeout:
			_ = cmd.Process.Signal(syscall.SIGKILL)
			<-done
			s.closeNotify()
			return failed("no READY=1 within the test's two minutes")
		}
	}
}

func (s *playedSystemd) stop() (string, int) {
	if !s.running() {
		return "", 0
	}
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.done:
	case <-time.After(s.stopWait):
		_ = s.cmd.Process.Signal(syscall.SIGKILL)
		<-s.done
		s.logf("%s: stop timed out, killed\n", playedUnit)
	}
	code := s.cmd.ProcessState.ExitCode()
	s.stopped = append(s.stopped, code)
	s.closeNotify()
	s.logf("%s: main process exited, status %d; stopped.\n", playedUnit, code)
	return "", 0
}

// logf writes a line of systemd's own to the journal, with its time.
func (s *playedSystemd) logf(format string, args ...any) {
	fmt.Fprintf(s.journal, "%s systemd: "+format, append([]any{time.Now().UTC().Format(time.RFC3339Nano)}, args...)...)
}

func (s *playedSystemd) closeNotify() {
	if s.notify != nil {
		s.notify.Close()
		os.RemoveAll(s.sockDir)
		s.notify = nil
	}
}

func (s *playedSystemd) journalctl(args []string) (string, int) {
	lines := -1
	for i := 0; i < len(args); i++ {
		switch a := args[i]; {
		case a == "--no-pager":
		case (a == "-u" || a == "--unit") && i+1 < len(args) && (args[i+1] == "switchboard" || args[i+1] == playedUnit):
			i++
		case (a == "-n" || a == "--lines") && i+1 < len(args):
			n, err := strconv.Atoi(args[i+1])
			if err != nil {
				return "journalctl: -n " + args[i+1] + ": not a number", 1
			}
			lines, i = n, i+1
		default:
			return fmt.Sprintf("journalctl %s is not played by the test", strings.Join(args, " ")), 1
		}
	}
	all := strings.Split(strings.TrimRight(s.journal.String(), "\n"), "\n")
	if lines >= 0 && len(all) > lines {
		all = all[len(all)-lines:]
	}
	return strings.Join(all, "\n"), 0
}

// history is how many times the service started and the exit status of each stop.
func (s *playedSystemd) history() (int, []int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.starts, slices.Clone(s.stopped)
}

// shellCommands finds the commands where the page has them, and none in quoted text,
// arguments or here-documents.
func TestShellCommands(t *testing.T) {
	t.Parallel()
	for text, want := range map[string][]string{
		"TOKEN=$(curl -fsS https://x -d a=b \\\n  -d c=d | jq -r .t)\n":               {"curl", "jq"},
		"install -o \"$(stat -c %u f)\" -g \"$(stat -c %g f)\" \\\n  a b\n":           {"install", "stat", "stat"},
		"for f in a b; do\n  if [ -e \"$f\" ]; then mv \"$f\" x; fi\ndone\n":          {"[", "mv"},
		"cat > f <<'EOF'\nrm -rf /\nEOF\necho '30 2 * * * root x' > y\n":              {"cat", "echo"},
		"(\n  umask 077\n  head -c 1 /dev/zero > k # a comment; ls\n)\na && b || c\n": {"umask", "head", "a", "b", "c"},
		"curl -d '{\"a\": 1,\n  \"b\": 2}' u; X=1 Y=2 env\n":                          {"curl", "env"},
	} {
		if got := shellCommands(text); !slices.Equal(got, want) {
			t.Errorf("shellCommands(%q) = %q, want %q", text, got, want)
		}
	}
}
