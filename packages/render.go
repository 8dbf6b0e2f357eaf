package packages

import (
	"encoding/json"
	"errors"
	htmltemplate "html/template"
	"io"
	"mime"
	"regexp"
	"strconv"
	"strings"
	texttemplate "text/template"
)

// Part size limits (docs/package.md, "Templates"), in bytes of rendered output.
const (
	limitSubject = 512
	limitText    = 64 << 10
	limitHTML    = 256 << 10
	limitBody    = 4 << 20
	// limitChatBody bounds a chat message's JSON body (blocks, cards), which gateways cap far
	// below a peer body.
	limitChatBody = 256 << 10
)

// executor is a parsed part: a text/template or an html/template.
type executor interface {
	Execute(w io.Writer, data any) error
}

// compiledPart is one locale's part, parsed once at load.
type compiledPart struct {
	name  string
	limit int
	hint  int // initial output buffer size: the source size with some room, within the limit
	exec  executor
}

// errTooLarge stops execution as soon as a part passes its limit.
var errTooLarge = errors.New("rendered part too large")

// Render renders every part of the template in one declared locale. It never falls back to
// another locale. data is a value as DecodeData returns it, normally validated first with
// ValidateData. Errors are *RenderError with code template.locale-unavailable,
// template.render-refused (a missing key, a null or non-printable value, a function error, a
// JSON body that is not JSON) or content.too-large. Subjects lose CR and LF (each becomes a
// space) and surrounding spaces; text, SMS and body parts lose control characters other than
// newline and tab; html parts lose control characters other than newline, tab and CR. For sms
// templates Rendered.SMS is set. Render is safe for concurrent use and never modifies data.
func (t *Template) Render(locale string, data any) (*Rendered, error) {
	parts, ok := t.locales[locale]
	if !ok {
		return nil, &RenderError{
			code:    CodeLocaleUnavailable,
			Locale:  locale,
			Message: "the template does not declare this locale (declared: " + strings.Join(t.Locales, ", ") + ")",
		}
	}
	out := &Rendered{Parts: make(map[string]string, len(parts))}
	for _, p := range parts {
		w := &partWriter{limit: p.limit, mode: p.name}
		w.b.Grow(p.hint)
		if err := p.exec.Execute(w, data); err != nil {
			return nil, renderFailure(p, locale, err)
		}
		out.Parts[p.name] = w.finish()
	}
	switch t.Channel {
	case channelSMS:
		info := CountSMS(out.Parts["text"])
		out.SMS = &info
	case channelPeer:
		if t.jsonBody && !json.Valid([]byte(out.Parts["body"])) {
			return nil, &RenderError{code: CodeRenderRefused, Part: "body", Locale: locale,
				Message: "body part (locale " + locale + "): the rendered body is not valid JSON (" + t.ContentType + ")"}
		}
	case channelChat:
		// The body is sent as it is (Slack blocks, a Teams card): it must be one JSON document.
		if body, ok := out.Parts["body"]; ok && !json.Valid([]byte(body)) {
			return nil, &RenderError{code: CodeRenderRefused, Part: "body", Locale: locale,
				Message: "body part (locale " + locale + "): the rendered chat body is not a JSON document"}
		}
	case channelPush:
		if data, ok := out.Parts["data"]; ok {
			if err := CheckPushData(data); err != nil {
				return nil, pushDataRefusal(locale, err)
			}
		}
	}
	return out, nil
}

// isJSONType reports whether a media type is JSON (application/json or a +json suffix).
func isJSONType(ct string) bool {
	mt, _, err := mime.ParseMediaType(ct)
	return err == nil && (mt == "application/json" || strings.HasSuffix(mt, "+json"))
}

// execLocation matches the location text/template puts in execution errors.
var execLocation = regexp.MustCompile(`^template: [^:]*:(\d+):(\d+): executing "[^"]*" at <(.*?)>: (.*)$`)

// renderFailure turns an execution error into a caller-safe RenderError: it keeps the line,
// column and template expression (package content) and a description of the cause, never a
// data value. The original error is kept in Err for logs.
func renderFailure(p *compiledPart, locale string, err error) *RenderError {
	prefix := p.name + " part (locale " + locale + ")"
	if errors.Is(err, errTooLarge) {
		return &RenderError{code: CodeContentTooLarge, Part: p.name, Locale: locale, Err: err,
			Message: prefix + ": the rendered part exceeds " + strconv.Itoa(p.limit) + " bytes"}
	}
	re := &RenderError{code: CodeRenderRefused, Part: p.name, Locale: locale, Err: err}
	cause := "the template cannot be rendered with this data"
	var fe *funcError
	if errors.As(err, &fe) {
		cause = fe.msg
	}
	m := execLocation.FindStringSubmatch(err.Error())
	if m == nil {
		re.Message = prefix + ": " + cause
		return re
	}
	re.Line, _ = strconv.Atoi(m[1])
	if fe == nil {
		switch {
		case strings.HasPrefix(m[4], "map has no entry for key "):
			cause = "missing key " + strings.TrimPrefix(m[4], "map has no entry for key ")
		case strings.HasPrefix(m[4], "nil data; no entry for key "):
			cause = "missing key " + strings.TrimPrefix(m[4], "nil data; no entry for key ")
		case strings.HasPrefix(m[4], "nil pointer evaluating"):
			cause = "a value is null or missing"
		case strings.HasPrefix(m[4], "can't evaluate field"):
			cause = "a field is read from a value that is not an object"
		}
	}
	re.Message = prefix + ", line " + m[1] + ", column " + m[2] + ", at <" + expression(m[3]) + ">: " + cause
	return re
}

// expression undoes the rewrite of tree.go in an error's expression text, so that authors see
// what they wrote.
func expression(s string) string {
	s = strings.ReplaceAll(s, " | "+emitFunc, "")
	return optionalText.ReplaceAllStringFunc(s, func(m string) string {
		sub := optionalText.FindStringSubmatch(m)
		recv := sub[1]
		if recv == "." {
			recv = ""
		}
		var b strings.Builder
		b.WriteString(recv)
		for _, q := range quoted.FindAllString(sub[2], -1) {
			k, _ := strconv.Unquote(q)
			b.WriteString("." + k)
		}
		return b.String()
	})
}

var (
	optionalText = regexp.MustCompile(`\(?` + optionalFunc + ` (\.|\$[A-Za-z0-9_]*)((?: "(?:[^"\\]|\\.)*")+)\)?`)
	quoted       = regexp.MustCompile(`"(?:[^"\\]|\\.)*"`)
)

// newPart parses one part file. html parts use html/template; the others text/template. Both
// refuse missing keys; the tree is rewritten by prepareTree.
func newPart(name string, limit int, rel, locale, src string) (*compiledPart, error) {
	p := &compiledPart{name: name, limit: limit}
	p.hint = min(p.limit, len(src)+len(src)/2+64)
	funcs := funcMap(locale)
	if name == "html" {
		t, err := htmltemplate.New(rel).Option("missingkey=error").Funcs(htmltemplate.FuncMap(funcs)).Parse(src)
		if err != nil {
			return nil, err
		}
		for _, tt := range t.Templates() {
			prepareTree(tt.Tree)
		}
		// Escaping happens on first execution; run it now so that a template the escaper
		// refuses (an action in an ambiguous context) is refused at load.
		var escErr *htmltemplate.Error
		if err := t.Execute(io.Discard, nil); errors.As(err, &escErr) {
			return nil, err
		}
		p.exec = t
		return p, nil
	}
	t, err := texttemplate.New(rel).Option("missingkey=error").Funcs(texttemplate.FuncMap(funcs)).Parse(src)
	if err != nil {
		return nil, err
	}
	for _, tt := range t.Templates() {
		prepareTree(tt.Tree)
	}
	p.exec = t
	return p, nil
}

// partLimit is the size limit of a part of a channel's template, 0 for a part no channel has.
func partLimit(channel, name string) int {
	switch {
	case channel == channelChat && name == "body":
		return limitChatBody
	case channel == channelPush:
		switch name {
		case "title":
			return limitPushTitle
		case "body":
			return limitPushBody
		case "data":
			return LimitPushData
		}
		return 0
	}
	switch name {
	case "subject":
		return limitSubject
	case "text":
		return limitText
	case "html":
		return limitHTML
	case "body":
		return limitBody
	}
	return 0
}
