package httpgw

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"switchboard/engine"
	"switchboard/scripting"
)

// Codes of a prepare output the runtime refuses. They are permanent: the same adapter given
// the same message will build the same request again.
const (
	CodeTargetRefused = "adapter.target-refused"
	CodeHeaderRefused = "adapter.header-refused"
	CodeBodyInvalid   = "adapter.body-invalid"
)

// userAgent is sent unless the adapter sets (and the package declares) user-agent.
const userAgent = "switchboard-httpgw/1"

// prepareOutput is what prepare returns (SPEC 3.3), decoded strictly.
type prepareOutput struct {
	Target     string            `json:"target"`
	Headers    map[string]string `json:"headers"`
	BodyFormat string            `json:"bodyFormat"`
	Body       json.RawMessage   `json:"body"`
}

// outgoing is a validated request, ready for the credential and the wire.
type outgoing struct {
	url    string
	header http.Header
	body   []byte
}

// refusal is a prepare output the runtime will not send; code is one of the adapter.* codes.
type refusal struct {
	code, reason string
}

func (r *refusal) Error() string { return r.code + ": " + r.reason }

// messageInput is the plain `message` argument of prepare, its members in sorted order.
func messageInput(out *engine.Outbound, idempotent bool) scripting.Object {
	var key any
	if idempotent && out.IdempotencyKey != "" {
		key = out.IdempotencyKey
	}
	return scripting.Object{
		{Name: "attempt", Value: out.Attempt},
		{Name: "channel", Value: string(out.Channel)},
		{Name: "generation", Value: out.Generation},
		{Name: "idempotencyKey", Value: key},
		{Name: "messageId", Value: out.MessageID},
		{Name: "parts", Value: partsInput(out.Parts)},
		{Name: "recipient", Value: out.Recipient},
	}
}

// partsInput is the `parts` member of the message: each part's text under its name, sorted.
func partsInput(parts map[string]string) scripting.Object {
	obj := make(scripting.Object, 0, len(parts))
	for name, text := range parts {
		obj = append(obj, scripting.Member{Name: name, Value: text})
	}
	slices.SortFunc(obj, func(a, b scripting.Member) int { return strings.Compare(a.Name, b.Name) })
	return obj
}

// profileInput is the plain `profile` argument of prepare; maximumSegments is null when unset,
// callbackUrl null without one. parameters is the provider's (an object, empty when none).
func profileInput(sp engine.SenderProfileView, callbackURL string, parameters map[string]any) scripting.Object {
	var segments, callback any
	if sp.MaximumSegments > 0 {
		segments = sp.MaximumSegments
	}
	if callbackURL != "" {
		callback = callbackURL
	}
	if parameters == nil {
		parameters = map[string]any{}
	}
	return scripting.Object{
		{Name: "callbackUrl", Value: callback},
		{Name: "channel", Value: string(sp.Channel)},
		{Name: "id", Value: sp.ID},
		{Name: "maximumSegments", Value: segments},
		{Name: "parameters", Value: parameters},
		{Name: "sender", Value: sp.Sender},
	}
}

// build validates prepare's output and turns it into a request under base.
func (p *Provider) build(out *prepareOutput) (*outgoing, error) {
	target, err := p.resolve(out.Target)
	if err != nil {
		return nil, &refusal{CodeTargetRefused, err.Error()}
	}
	header := make(http.Header, len(out.Headers)+1)
	for name, value := range out.Headers {
		lower := strings.ToLower(name)
		key, declared := p.requestKeys[lower]
		if !declared || !validHeaderName(lower) {
			return nil, &refusal{CodeHeaderRefused, fmt.Sprintf("header %q is not declared in provider.yaml request.headers", name)}
		}
		if !validHeaderValue(value) {
			return nil, &refusal{CodeHeaderRefused, fmt.Sprintf("header %q has a value with control characters or over 8 KiB", name)}
		}
		header[key] = []string{value} // header.Set(lower, value), canonicalized once in New
	}
	body, contentType, err := encodeBody(out.BodyFormat, out.Body)
	if err != nil {
		return nil, &refusal{CodeBodyInvalid, err.Error()}
	}
	if contentType != "" && header.Get("Content-Type") == "" {
		header.Set("Content-Type", contentType)
	}
	if header.Get("User-Agent") == "" {
		header.Set("User-Agent", userAgent)
	}
	return &outgoing{url: target, header: header, body: body}, nil
}

// resolvedTarget is a target and the URL it resolved to.
type resolvedTarget struct{ target, url string }

// resolve is resolveTarget under the provider's base URL, as a string. It remembers the
// last target it resolved, since an adapter nearly always sends to the same one: the answer
// depends on nothing else.
func (p *Provider) resolve(target string) (string, error) {
	if last := p.lastTarget.Load(); last != nil && last.target == target {
		return last.url, nil
	}
	u, err := resolveTarget(p.cfg.BaseURL, target)
	if err != nil {
		return "", err
	}
	resolved := &resolvedTarget{target: target, url: u.String()}
	p.lastTarget.Store(resolved)
	return resolved.url, nil
}

// resolveTarget resolves a relative target against base and refuses anything that would leave
// it: absolute URLs, "//host", schemes, backslashes, control characters, fragments and every
// dot segment, raw or percent-encoded. The resolved URL must keep base's scheme and host and
// have base's path as a prefix (checked on both the decoded and the escaped path).
//
// The one dot form allowed is a leading "./" followed by nothing or by a query: "./" is the
// baseUrl itself (APIs such as AWS's Query protocol are posted to their root), "./?a=1" the
// same as "?a=1". An empty target is refused (an adapter that forgot it).
func resolveTarget(base *url.URL, target string) (*url.URL, error) {
	if target == "" || len(target) > 2048 {
		return nil, errors.New("target is empty or longer than 2048 bytes")
	}
	if target == "./" {
		b := *base
		return &b, nil
	}
	if rest, ok := strings.CutPrefix(target, "./?"); ok {
		target = "?" + rest
	}
	for i := 0; i < len(target); i++ {
		if c := target[i]; c <= ' ' || c == 0x7f || c == '\\' || c == '#' {
			return nil, errors.New("target holds a space, control character, backslash or fragment")
		}
	}
	if strings.HasPrefix(target, "//") || strings.Contains(target, "://") {
		return nil, errors.New("target is not a relative path")
	}
	ref, err := url.Parse(target)
	if err != nil {
		return nil, errors.New("target does not parse as a URL reference")
	}
	if ref.Scheme != "" || ref.Host != "" || ref.User != nil || ref.Opaque != "" {
		return nil, errors.New("target is not a relative path")
	}
	for _, path := range []string{ref.Path, ref.EscapedPath()} {
		for _, seg := range strings.Split(path, "/") {
			if seg == "." || seg == ".." || strings.EqualFold(seg, "%2e") || strings.EqualFold(seg, "%2e%2e") ||
				strings.EqualFold(seg, ".%2e") || strings.EqualFold(seg, "%2e.") {
				return nil, errors.New("target holds a dot segment")
			}
		}
	}
	resolved := base.ResolveReference(ref)
	if resolved.Scheme != base.Scheme || resolved.Host != base.Host || resolved.User != nil ||
		!strings.HasPrefix(resolved.Path, base.Path) || !strings.HasPrefix(resolved.EscapedPath(), base.EscapedPath()) {
		return nil, errors.New("target leaves the provider's baseUrl")
	}
	return resolved, nil
}

// encodeBody turns prepare's body into bytes and a default content type. Without bodyFormat a
// string body is text and any other JSON value is json; a null or absent body sends no body.
func encodeBody(format string, raw json.RawMessage) ([]byte, string, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil, "", nil
	}
	if format == "" {
		format = "json"
		if raw[0] == '"' {
			format = "text"
		}
	}
	switch format {
	case "json":
		return []byte(raw), "application/json", nil
	case "text":
		var text string
		if err := json.Unmarshal(raw, &text); err != nil {
			return nil, "", errors.New("bodyFormat text needs a string body")
		}
		return []byte(text), "text/plain; charset=utf-8", nil
	case "form":
		var fields map[string]string
		if raw[0] != '{' || json.Unmarshal(raw, &fields) != nil {
			return nil, "", errors.New("bodyFormat form needs an object of strings")
		}
		form := make(url.Values, len(fields))
		for name, value := range fields {
			form.Set(name, value)
		}
		return []byte(form.Encode()), "application/x-www-form-urlencoded", nil
	}
	return nil, "", fmt.Errorf("bodyFormat %q is not json, form or text", format)
}

// validHeaderName reports whether name is an RFC 9110 token.
func validHeaderName(name string) bool {
	if name == "" {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0) {
			return false
		}
	}
	return true
}

// validHeaderValue refuses control characters (other than tab) and values over 8 KiB.
func validHeaderValue(v string) bool {
	if len(v) > 8<<10 {
		return false
	}
	for i := 0; i < len(v); i++ {
		if c := v[i]; c < ' ' && c != '\t' || c == 0x7f {
			return false
		}
	}
	return true
}
