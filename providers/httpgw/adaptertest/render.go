package adaptertest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"switchboard/engine"
)

// noRequest is the request.http of a send that never reached the gateway.
const noRequest = "(no request)\n"

// renderRequest writes what the gateway received: the request line, the headers the adapter
// may set and content-type (lower case, sorted), a blank line and the body (JSON indented,
// form fields one per line).
func renderRequest(req *recorded, declared map[string]bool) string {
	if req == nil {
		return noRequest
	}
	var b strings.Builder
	b.WriteString(req.method + " " + req.target + "\n")
	var names []string
	for name := range req.header {
		if lower := strings.ToLower(name); declared[lower] {
			names = append(names, lower)
		}
	}
	sort.Strings(names)
	for _, name := range names {
		for _, v := range req.header.Values(name) {
			b.WriteString(name + ": " + v + "\n")
		}
	}
	if len(req.body) > 0 {
		b.WriteString("\n" + renderBody(req.header.Get("Content-Type"), req.body) + "\n")
	}
	return b.String()
}

// RenderBody shows a request body as golden cases do (JSON indented, form fields one per
// line); `switchboard adapter run` prints it.
func RenderBody(contentType string, body []byte) string { return renderBody(contentType, body) }

// renderBody shows a body readably: JSON indented by two spaces, a form one field per line
// (joined with "&" on the wire), anything else as it is.
func renderBody(contentType string, body []byte) string {
	switch {
	case isJSON(contentType):
		var out bytes.Buffer
		if json.Indent(&out, body, "", "  ") == nil {
			return out.String()
		}
	case isForm(contentType):
		return strings.Join(strings.Split(string(body), "&"), "\n")
	}
	return strings.TrimSuffix(string(body), "\n")
}

// renderOutcome writes a send's outcome (its internal reason is left out: it is logged, not shown).
func renderOutcome(o engine.Outcome) string {
	var b strings.Builder
	b.WriteString("class: " + string(o.Class) + "\n")
	if o.ProviderReference != "" {
		b.WriteString("providerReference: " + yamlString(o.ProviderReference) + "\n")
	}
	if o.Code != "" {
		b.WriteString("code: " + yamlString(o.Code) + "\n")
	}
	if o.RetryAfter > 0 {
		b.WriteString("retryAfter: " + o.RetryAfter.String() + "\n")
	}
	if o.DeviceUnregistered {
		b.WriteString("deviceUnregistered: true\n")
	}
	b.WriteString("report: " + string(o.Report) + "\n")
	return b.String()
}

// callbackResult is what became of one callback.
type callbackResult struct {
	verified bool
	errCode  string // set when ParseReceipts failed
	receipts []engine.Receipt
	inbound  []engine.InboundItem
	ignored  bool // receipt or callback returned null (or nothing)
	tally    tally
}

// renderCallback writes a callback's result.
func renderCallback(res callbackResult) string {
	var b strings.Builder
	fmt.Fprintf(&b, "verified: %t\n", res.verified)
	switch {
	case !res.verified:
	case res.errCode != "":
		b.WriteString("error: " + res.errCode + "\n")
	case res.ignored:
		b.WriteString("receipts: null\n")
	default:
		if len(res.receipts) > 0 {
			b.WriteString("receipts:\n")
			for _, r := range res.receipts {
				fmt.Fprintf(&b, "  - {providerReference: %s, report: %s", yamlString(r.ProviderReference), r.Report)
				if r.Code != "" {
					b.WriteString(", code: " + yamlString(r.Code))
				}
				b.WriteString("}\n")
			}
			fmt.Fprintf(&b, "ledger: {applied: %d, stale: %d, unmatched: %d}\n", res.tally.applied, res.tally.stale, res.tally.unmatched)
		}
		if len(res.inbound) > 0 {
			b.WriteString("inbound:\n")
			for _, it := range res.inbound {
				fmt.Fprintf(&b, "  - {providerReference: %s, from: %s, to: %s, text: %s", yamlString(it.ProviderReference),
					yamlString(it.From), yamlString(it.To), yamlString(it.Text))
				if !it.ReceivedAt.IsZero() {
					b.WriteString(", receivedAt: " + it.ReceivedAt.UTC().Format(time.RFC3339Nano))
				}
				b.WriteString("}\n")
			}
		}
	}
	return b.String()
}

// renderReport writes the ledger after the last event.
func renderReport(l *ledger) string {
	var b strings.Builder
	b.WriteString("providerReference: " + yamlString(l.reference) + "\n")
	b.WriteString("report: " + string(l.report) + "\n")
	if l.code != "" {
		b.WriteString("code: " + yamlString(l.code) + "\n")
	}
	fmt.Fprintf(&b, "kept: %d\n", len(l.kept))
	return b.String()
}

var plainYAML = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9._+/@-]*$`)

// yamlString writes s plain when that reads back as the same string, else double-quoted.
func yamlString(s string) string {
	switch strings.ToLower(s) {
	case "true", "false", "null", "yes", "no", "on", "off", "y", "n":
		return strconv.Quote(s)
	}
	if plainYAML.MatchString(s) {
		return s
	}
	return strconv.Quote(s)
}

// sameSection compares an expected section with the rendered one: exactly, line by line without
// trailing white space, except that a request's JSON body is compared without insignificant
// white space.
func sameSection(name, want, got string) bool {
	if normalize(want) == normalize(got) {
		return true
	}
	if !strings.HasSuffix(name, "request.http") {
		return false
	}
	wHead, wBody, _ := strings.Cut(normalize(want), "\n\n")
	gHead, gBody, _ := strings.Cut(normalize(got), "\n\n")
	if wHead != gHead || !strings.Contains(strings.ToLower(gHead), "json") {
		return false
	}
	var wc, gc bytes.Buffer
	return json.Compact(&wc, []byte(wBody)) == nil && json.Compact(&gc, []byte(gBody)) == nil && wc.String() == gc.String()
}

// normalize drops carriage returns, trailing white space on each line and trailing blank lines.
func normalize(s string) string {
	lines := strings.Split(strings.ReplaceAll(s, "\r\n", "\n"), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " \t")
	}
	return strings.TrimRight(strings.Join(lines, "\n"), "\n")
}
