package adaptertest

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// testAdapter is a small adapter: JSON to <base>messages, the default answer table, receipts
// {id, status}. prepare throws for the text "boom".
const testAdapter = `
function prepare(message, profile) {
  if (message.parts.text === "boom") { throw new Error("boom"); }
  return {target: "messages",
    headers: {"content-type": "application/json", "x-request-id": message.messageId},
    bodyFormat: "json",
    body: {to: message.recipient, from: profile.sender, text: message.parts.text}};
}
function receipt(request) {
  var b = request.json;
  if (b === null || typeof b !== "object") { return null; }
  return {providerReference: b.id, report: b.status};
}
`

const testProviderYAML = `script: adapter.js
request: {method: post, headers: [content-type, x-request-id]}
capabilities: {receipts: callback, concurrencyLimit: 4}
`

const testMessage = `-- message.yaml --
messageId: m-1
recipient: "+15550123"
parts: {text: "hello"}
profile: {id: p, channel: sms, sender: "+15550100"}
-- setup.yaml --
now: 2026-03-02T09:00:00Z
baseUrl: "https://gw.example/api/"
verifier: {kind: hmac-sha256-body, header: x-signature}
secret: test-secret
`

// inputsOnly is a case with every input and no expectation: update writes them.
const inputsOnly = `A delivered message.
` + testMessage + `-- send1/answer.http --
201 Created
Content-Type: application/json

{"id": "gw-1"}
-- callback1/request.http --
POST /v1/provider-callbacks/gw
Content-Type: application/json
Adaptertest-Sign: yes

{"id": "gw-1", "status": "delivered"}
`

// adapterDir writes an adapter folder with the given cases and returns its path.
func adapterDir(t *testing.T, cases map[string]string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "gw")
	mustWrite(t, filepath.Join(dir, "provider.yaml"), testProviderYAML)
	mustWrite(t, filepath.Join(dir, "adapter.js"), testAdapter)
	for name, text := range cases {
		mustWrite(t, filepath.Join(dir, "testdata", name), text)
	}
	return dir
}

func mustWrite(t *testing.T, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

func runDir(t *testing.T, dir string, update bool) (passed, failed int, out string) {
	t.Helper()
	var b bytes.Buffer
	passed, failed, err := RunDir(dir, update, &b)
	if err != nil {
		t.Fatalf("RunDir: %v", err)
	}
	return passed, failed, b.String()
}

func TestUpdateWritesExpectationsThatThenPass(t *testing.T) {
	t.Parallel()
	dir := adapterDir(t, map[string]string{"delivered.txtar": inputsOnly})
	passed, failed, out := runDir(t, dir, false)
	if passed != 0 || failed != 1 || !strings.Contains(out, "send1/request.http: missing (run with --update") {
		t.Fatalf("before update: passed %d failed %d\n%s", passed, failed, out)
	}
	if passed, failed, out = runDir(t, dir, true); passed != 1 || failed != 0 || !strings.Contains(out, "updated ") {
		t.Fatalf("update: passed %d failed %d\n%s", passed, failed, out)
	}
	data, err := os.ReadFile(filepath.Join(dir, "testdata", "delivered.txtar"))
	if err != nil {
		t.Fatal(err)
	}
	want := `A delivered message.
` + testMessage + `-- send1/request.http --
POST /api/messages
content-type: application/json
x-request-id: m-1

{
  "to": "+15550123",
  "from": "+15550100",
  "text": "hello"
}
-- send1/answer.http --
201 Created
Content-Type: application/json

{"id": "gw-1"}
-- send1/outcome.yaml --
class: accepted
report: none
-- callback1/request.http --
POST /v1/provider-callbacks/gw
Content-Type: application/json
Adaptertest-Sign: yes

{"id": "gw-1", "status": "delivered"}
-- callback1/receipts.yaml --
verified: true
receipts:
  - {providerReference: gw-1, report: delivered}
ledger: {applied: 0, stale: 0, unmatched: 1}
-- report.yaml --
providerReference: ""
report: none
kept: 1
`
	if string(data) != want {
		t.Fatalf("updated file:\n%s\nwant:\n%s", data, want)
	}
	if passed, failed, out = runDir(t, dir, false); passed != 1 || failed != 0 || !strings.Contains(out, "ok      ") {
		t.Fatalf("after update: passed %d failed %d\n%s", passed, failed, out)
	}
	if _, _, out = runDir(t, dir, true); strings.Contains(out, "updated") {
		t.Fatalf("an up-to-date file was rewritten:\n%s", out)
	}
}

func TestDifferencesFail(t *testing.T) {
	t.Parallel()
	dir := adapterDir(t, map[string]string{"delivered.txtar": inputsOnly})
	runDir(t, dir, true)
	path := filepath.Join(dir, "testdata", "delivered.txtar")
	good, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for name, edit := range map[string][2]string{
		"outcome":        {"class: accepted\nreport: none", "class: transient\nreport: none"},
		"request header": {"x-request-id: m-1", "x-request-id: m-2"},
		"request body":   {`"text": "hello"`, `"text": "hullo"`},
		"receipts":       {"report: delivered}", "report: sent}"},
		"report":         {"kept: 1", "kept: 0"},
	} {
		bad := strings.Replace(string(good), edit[0], edit[1], 1)
		if bad == string(good) {
			t.Fatalf("%s: edit not applied", name)
		}
		mustWrite(t, path, bad)
		if passed, failed, out := runDir(t, dir, false); passed != 0 || failed != 1 || !strings.Contains(out, "differs") {
			t.Errorf("%s: passed %d failed %d\n%s", name, passed, failed, out)
		}
	}
	// A JSON body written with other white space is the same body.
	reflowed := strings.Replace(string(good), "{\n  \"to\": \"+15550123\",\n  \"from\": \"+15550100\",\n  \"text\": \"hello\"\n}",
		`{"to": "+15550123", "from": "+15550100", "text": "hello"}`, 1)
	mustWrite(t, path, reflowed)
	if passed, _, out := runDir(t, dir, false); passed != 1 {
		t.Errorf("reflowed JSON body failed:\n%s", out)
	}
}

func TestSendsThatFailAndCallbacksThatAreRefused(t *testing.T) {
	t.Parallel()
	text := testMessage + `-- send1/answer.http --
503 Service Unavailable
Retry-After: 7
-- send2/answer.http --
!close
-- send3/answer.http --
-- callback1/request.http --
POST /v1/provider-callbacks/gw
Content-Type: application/json
X-Signature: 00

{"id": "gw-1", "status": "delivered"}
-- callback2/request.http --
POST /v1/provider-callbacks/gw
Content-Type: application/json
Adaptertest-Sign: yes

{"id": "gw-1", "status": "lost"}
`
	text = strings.Replace(text, `parts: {text: "hello"}`, `parts: {text: "hello"}`, 1)
	dir := adapterDir(t, map[string]string{"failures.txtar": text})
	runDir(t, dir, true)
	data, err := os.ReadFile(filepath.Join(dir, "testdata", "failures.txtar"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"-- send1/outcome.yaml --\nclass: transient\ncode: http.503\nretryAfter: 7s\nreport: none\n",
		"-- send2/outcome.yaml --\nclass: maybe-sent\ncode: http.connection-lost\nreport: none\n",
		// No answer given: the gateway's 599 shows the request was not expected.
		"-- send3/outcome.yaml --\nclass: permanent\ncode: http.599\nreport: none\n",
		"-- callback1/receipts.yaml --\nverified: false\n",
		"-- callback2/receipts.yaml --\nverified: true\nerror: callback.unreadable\n",
	} {
		if !strings.Contains(string(data), want) {
			t.Errorf("missing %q in:\n%s", want, data)
		}
	}
}

func TestPrepareFailureSendsNoRequest(t *testing.T) {
	t.Parallel()
	text := strings.Replace(testMessage, `parts: {text: "hello"}`, `parts: {text: "boom"}`, 1) + "-- send1/answer.http --\n201 Created\n"
	dir := adapterDir(t, map[string]string{"boom.txtar": text})
	runDir(t, dir, true)
	data, err := os.ReadFile(filepath.Join(dir, "testdata", "boom.txtar"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), "-- send1/request.http --\n(no request)\n") ||
		!strings.Contains(string(data), "class: permanent\ncode: script.failed\n") {
		t.Fatalf("prepare failure:\n%s", data)
	}
}

func TestMalformedCasesFail(t *testing.T) {
	t.Parallel()
	answer := "-- send1/answer.http --\n201 Created\n"
	for name, text := range map[string]string{
		"unknown section":         testMessage + answer + "-- send1/notes.txt --\nx\n",
		"sends numbered wrongly":  testMessage + "-- send2/answer.http --\n201 Created\n",
		"expectation of no event": testMessage + answer + "-- send2/outcome.yaml --\nclass: accepted\n",
		"no event":                testMessage,
		"unknown message key":     strings.Replace(testMessage, "recipient:", "recipients:", 1) + answer,
		"send without message":    "-- send1/answer.http --\n201 Created\n",
		"bad status line":         testMessage + "-- send1/answer.http --\nCreated\n",
		"twice the same section":  testMessage + answer + answer,
		"callback to sign without secret": strings.Replace(testMessage, "secret: test-secret\n", "", 1) +
			"-- callback1/request.http --\nPOST /cb\nAdaptertest-Sign: yes\n\n{}\n",
	} {
		dir := adapterDir(t, map[string]string{"bad.txtar": text})
		if passed, failed, out := runDir(t, dir, true); passed != 0 || failed != 1 || !strings.Contains(out, "FAIL") {
			t.Errorf("%s: passed %d failed %d\n%s", name, passed, failed, out)
		}
	}
}

func TestRunDirFolders(t *testing.T) {
	t.Parallel()
	dir := adapterDir(t, map[string]string{"a.txtar": inputsOnly, "b.txtar": inputsOnly})
	parent := filepath.Dir(dir)
	if passed, failed, out := runDir(t, parent, true); passed != 2 || failed != 0 || !strings.Contains(out, "2 passed, 0 failed") {
		t.Fatalf("parent folder: passed %d failed %d\n%s", passed, failed, out)
	}
	var b bytes.Buffer
	if _, _, err := RunDir(filepath.Join(parent, "missing"), false, &b); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing folder: err = %v, want fs.ErrNotExist", err)
	}
	empty := t.TempDir()
	if _, _, err := RunDir(empty, false, &b); err == nil {
		t.Error("a folder without adapters ran")
	}
	noCases := adapterDir(t, nil)
	b.Reset()
	if passed, failed, err := RunDir(noCases, false, &b); err != nil || passed+failed != 0 ||
		!strings.Contains(b.String(), "skip    "+noCases+" (no testdata/ folder)") || !strings.Contains(b.String(), "0 passed, 0 failed, 1 skipped") {
		t.Errorf("adapter without testdata/: err = %v\n%s", err, b.String())
	}
	if err := os.MkdirAll(filepath.Join(noCases, "testdata"), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, _, err := RunDir(noCases, false, &b); err == nil || !strings.Contains(err.Error(), "no golden cases") {
		t.Errorf("adapter with an empty testdata/: err = %v", err)
	}
	mustWrite(t, filepath.Join(noCases, "provider.yaml"), "script: adapter.js\nretries: 3\n")
	if _, _, err := RunDir(noCases, false, &b); err == nil || !strings.Contains(err.Error(), "provider.yaml") {
		t.Errorf("invalid provider.yaml: err = %v", err)
	}
}

// TestSnippetParametersAreSubstituted: ${NAME} in the snippet's parameters is substituted from
// setup.yaml env in a case, and from the environment by Prepare (adapter run), as the runtime
// loader substitutes it; an unset variable is named.
func TestSnippetParametersAreSubstituted(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "gw")
	mustWrite(t, filepath.Join(dir, "provider.yaml"), "script: adapter.js\nrequest: {method: post, headers: [content-type]}\n")
	mustWrite(t, filepath.Join(dir, "adapter.js"), `function prepare(message, profile) {
  return {target: "accounts/" + profile.parameters.account + "/messages", body: {text: message.parts.text}};
}`)
	mustWrite(t, filepath.Join(dir, "runtime-snippet.yaml"), `providers:
  gw:
    kind: http
    baseUrl: "https://gw.example/api/"
    parameters: {account: "${GW_ACCOUNT}"}
    authentication: {kind: static-authorization, scheme: Bearer, tokenRef: "secret:file/gw-token"}
`)
	message := "messageId: m-1\nrecipient: \"+15550123\"\nparts: {text: hello}\nprofile: {id: p, channel: sms, sender: \"+15550100\"}\n"
	mustWrite(t, filepath.Join(dir, "testdata", "sent.txtar"), "-- message.yaml --\n"+message+
		"-- setup.yaml --\nenv: {GW_ACCOUNT: AC42}\n-- send1/answer.http --\n202\n")
	if passed, failed, out := runDir(t, dir, true); passed != 1 || failed != 0 {
		t.Fatalf("update: passed %d failed %d\n%s", passed, failed, out)
	}
	data, err := os.ReadFile(filepath.Join(dir, "testdata", "sent.txtar"))
	if err != nil || !strings.Contains(string(data), "POST /api/accounts/AC42/messages") {
		t.Fatalf("the request does not use the substituted parameter (%v):\n%s", err, data)
	}

	mustWrite(t, filepath.Join(dir, "message.yaml"), message)
	getenv := func(name string) string {
		if name == "GW_ACCOUNT" {
			return "AC43"
		}
		return ""
	}
	res, err := Prepare(dir, filepath.Join(dir, "message.yaml"), getenv)
	if err != nil || res.Request == nil || !strings.HasSuffix(res.Request.URL, "/api/accounts/AC43/messages") {
		t.Fatalf("Prepare: %+v, %v", res, err)
	}
	if _, err := Prepare(dir, filepath.Join(dir, "message.yaml"), func(string) string { return "" }); err == nil ||
		!strings.Contains(err.Error(), "GW_ACCOUNT") {
		t.Fatalf("Prepare without the variable: %v, want an error naming GW_ACCOUNT", err)
	}
}

// TestPrepareWithAVerifierAndAnUnsetBase: adapter run needs neither the verifier's test secret
// nor the variables of the baseUrl: an unset variable gives the placeholder, a set one its value.
func TestPrepareWithAVerifierAndAnUnsetBase(t *testing.T) {
	t.Parallel()
	dir := adapterDir(t, nil)
	mustWrite(t, filepath.Join(dir, "runtime-snippet.yaml"), `providers:
  gw:
    kind: http
    baseUrl: "https://gw.example/accounts/${GW_ACCOUNT}/"
    authentication: {kind: basic, usernameRef: "secret:env/GW_ACCOUNT", passwordRef: "secret:file/gw-password"}
    callbackVerifier: {kind: hmac-sha256-body, header: x-signature, encoding: hex, secretRef: "secret:file/gw-callback"}
`)
	mustWrite(t, filepath.Join(dir, "message.yaml"), "messageId: m-1\nrecipient: \"+15550123\"\nparts: {text: hello}\nprofile: {id: p, channel: sms, sender: \"+15550100\"}\n")
	for env, want := range map[string]string{"": placeholderBase + "messages", "AC42": "https://gw.example/accounts/AC42/messages"} {
		res, err := Prepare(dir, filepath.Join(dir, "message.yaml"), func(string) string { return env })
		if err != nil || res.Request == nil || res.Request.URL != want {
			t.Errorf("GW_ACCOUNT=%q: Prepare %+v, %v; want the request to %s", env, res, err, want)
		}
	}
}

// TestCaseWithoutCallbacksNeedsNoSecret: a case that only sends runs without the verifier's
// test secret, even when the snippet has a verifier; a case with a callback still needs it.
func TestCaseWithoutCallbacksNeedsNoSecret(t *testing.T) {
	t.Parallel()
	sendOnly := "-- message.yaml --\nmessageId: m-1\nrecipient: \"+15550123\"\nparts: {text: hello}\nprofile: {id: p, channel: sms, sender: \"+15550100\"}\n" +
		"-- send1/answer.http --\n422\n"
	dir := adapterDir(t, map[string]string{"refused.txtar": sendOnly, "callback.txtar": "-- callback1/request.http --\nPOST /v1/provider-callbacks/gw\nContent-Type: application/json\nAdaptertest-Sign: yes\n\n{}\n"})
	mustWrite(t, filepath.Join(dir, "runtime-snippet.yaml"), `providers:
  gw:
    kind: http
    baseUrl: "https://gw.example/api/"
    authentication: {kind: static-authorization, scheme: Bearer, tokenRef: "secret:file/gw-token"}
    callbackVerifier: {kind: hmac-sha256-body, header: x-signature, encoding: hex, secretRef: "secret:file/gw-callback"}
`)
	passed, failed, out := runDir(t, dir, true)
	if passed != 1 || failed != 1 || !strings.Contains(out, "FAIL    "+filepath.Join(dir, "testdata", "callback.txtar")) ||
		!strings.Contains(out, "needs setup.yaml secret") {
		t.Fatalf("passed %d failed %d\n%s", passed, failed, out)
	}
}

// TestCauseOfAnOutcomeWithoutCode: an outcome without a code (accepted) reads "accepted: …".
func TestCauseOfAnOutcomeWithoutCode(t *testing.T) {
	t.Parallel()
	dir := adapterDir(t, map[string]string{"delivered.txtar": inputsOnly})
	mustWrite(t, filepath.Join(dir, "adapter.js"), testAdapter+"\nfunction interpret(r) { return {outcome: \"accepted\", providerReference: \"gw-1\"}; }\n")
	_, _, out := runDir(t, dir, false)
	if !strings.Contains(out, "cause: send1: accepted: ") {
		t.Fatalf("no cause line for the accepted send:\n%s", out)
	}
}
