package packages

import (
	"regexp"
	"strings"
	"unicode/utf8"
)

const (
	maxScriptBytes      = 64 << 10
	defaultScript       = "adapter.js"
	maxConcurrencyLimit = 1024
	maxRatePerSecond    = 100000
	receiptsCallback    = "callback"
	receiptsNone        = "none"
)

var (
	headerPattern = regexp.MustCompile("^[a-z0-9!#$%&'*+.^_`|~-]{1,64}$")
	scriptPattern = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_.-]*(/[A-Za-z0-9_][A-Za-z0-9_.-]*)*\.js$`)
)

// runtimeHeaders are request headers the runtime owns (credentials, framing, routing); a
// script may never set them, so provider.yaml may not declare them.
var runtimeHeaders = []string{"authorization", "proxy-authorization", "host", "content-length",
	"transfer-encoding", "connection", "keep-alive", "te", "trailer", "upgrade", "cookie", "expect"}

// loadProviderFolder checks providers/<id>/ against the provider's kind and loads its
// adapter: required for http, optional for peer, refused for smtp.
func (l *loader) loadProviderFolder(p *Provider) {
	dir := "providers/" + p.ID
	what := l.fs.entry(dir)
	if what == "link" {
		return
	}
	switch p.Kind {
	case kindSMTP:
		if what != "missing" {
			l.diags.add(CodeProviderInvalid, dir, 0, "", "smtp providers have no folder: remove %s", dir)
		}
		return
	case kindHTTP:
		if what != "dir" {
			l.diags.add(CodeProviderInvalid, dir+"/provider.yaml", 0, "", "http providers need %s/provider.yaml and its adapter script", dir)
			return
		}
		p.Adapter = l.providerYAML(p, dir)
	case kindP2P:
		if what != "dir" {
			return
		}
		switch {
		case l.fs.entry(dir+"/provider.yaml") != "missing":
			p.Adapter = l.providerYAML(p, dir)
		case l.fs.entry(dir+"/"+defaultScript) != "missing":
			p.Adapter = &Adapter{ScriptPath: dir + "/" + defaultScript, Receipts: receiptsNone}
			p.Adapter.Source, _ = l.script(p.Adapter.ScriptPath)
		}
	}
}

// providerYAML reads provider.yaml and its script (SPEC 3.3).
func (l *loader) providerYAML(p *Provider, dir string) *Adapter {
	rel := dir + "/provider.yaml"
	data, ok := l.fs.read(rel, maxFileBytes, CodeProviderInvalid)
	if !ok {
		return nil
	}
	mark := len(l.diags.List)
	y := &ydoc{path: rel, code: CodeProviderInvalid, diags: l.diags}
	root := y.parse(data)
	if root == nil {
		return nil
	}
	m := y.mapping(root, "", "script", "request", "responseHeaders", "capabilities")
	if m == nil {
		return nil
	}
	a := &Adapter{ScriptPath: dir + "/" + defaultScript, Receipts: receiptsNone}
	if p.Kind == kindHTTP {
		a.Method = "POST"
	}
	if s, ok := m.str("script"); ok {
		if !scriptPattern.MatchString(s) {
			m.errf("script", "%q is not a .js file path inside the provider folder", s)
		} else {
			a.ScriptPath = dir + "/" + s
		}
	}
	if p.Kind == kindP2P {
		for _, key := range []string{"request", "responseHeaders"} {
			if m.has(key) {
				m.errf(key, "is for http providers only")
			}
		}
	}
	if m.has("request") {
		if r := y.mapping(m.values["request"], m.sub("request"), "method", "headers"); r != nil {
			if s, ok := r.str("method"); ok {
				switch up := strings.ToUpper(s); up {
				case "GET", "POST", "PUT", "PATCH":
					a.Method = up
				default:
					r.errf("method", "%q is not one of get, post, put, patch", s)
				}
			}
			a.RequestHeaders = headerList(r, "headers", true)
		}
	}
	a.ResponseHeaders = headerList(m, "responseHeaders", false)
	if m.has("capabilities") {
		c := y.mapping(m.values["capabilities"], m.sub("capabilities"), "receipts", "concurrencyLimit", "ratePerSecond")
		if c != nil {
			a.Receipts, _ = oneOf(c, "receipts", receiptsNone, receiptsCallback, receiptsNone)
			if p.Kind == kindP2P && a.Receipts == receiptsCallback {
				c.errf("receipts", "peer providers take no callbacks (the acknowledgement is the receipt)")
			}
			a.ConcurrencyLimit, _ = intIn(c, "concurrencyLimit", 0, 1, maxConcurrencyLimit)
			if c.has("ratePerSecond") {
				if r, ok := c.number("ratePerSecond"); ok {
					if r <= 0 || r > maxRatePerSecond {
						c.errf("ratePerSecond", "must be above 0 and at most %d", maxRatePerSecond)
					}
					a.RatePerSecond = r
				}
			}
		}
	}
	if len(l.diags.List) != mark {
		return nil
	}
	src, ok := l.script(a.ScriptPath)
	if !ok {
		return nil
	}
	a.Source = src
	return a
}

// headerList reads lower-case header names; request headers may not be runtime-owned ones.
func headerList(m *ymap, key string, request bool) []string {
	names := m.strList(key)
	for _, h := range names {
		switch {
		case !headerPattern.MatchString(h):
			m.errf(key, "%q is not a lower-case header name", h)
		case request && contains(runtimeHeaders, h):
			m.errf(key, "%q is set by the runtime; an adapter may not set it", h)
		}
	}
	return names
}

// script reads and size-checks an adapter script; it is compiled later by scripting/.
func (l *loader) script(rel string) (string, bool) {
	data, ok := l.fs.read(rel, maxScriptBytes, CodeProviderInvalid)
	if !ok {
		return "", false
	}
	if len(data) == 0 || !utf8.Valid(data) {
		l.diags.add(CodeProviderInvalid, rel, 0, "", "the script must be non-empty UTF-8 text")
		return "", false
	}
	return string(data), true
}
