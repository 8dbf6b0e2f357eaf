package packages

import (
	"errors"
	htmltemplate "html/template"
	"mime"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"
)

const (
	maxLocales         = 32
	defaultContentType = "application/json"
)

var (
	// localePattern: a simple language tag: language, optional script, optional region.
	localePattern = regexp.MustCompile(`^[a-z]{2,3}(-[A-Z][a-z]{3})?(-([A-Z]{2}|[0-9]{3}))?$`)
	parseLine     = regexp.MustCompile(`^template: [^:]*:(\d+):(?:\d+:)?\s*(.*)$`)
)

// loadTemplate loads templates/<id>/<version>/ as docs/package.md, "Templates" says. It returns nil when the
// template is unusable; every problem is recorded.
func (l *loader) loadTemplate(d decl[TemplateKey]) *Template {
	key := d.v
	dir := "templates/" + key.ID + "/" + key.Version
	switch l.fs.entry(dir) {
	case "dir":
	case "missing":
		d.m.errf("version", "template %s version %s is declared but its folder %s does not exist", key.ID, key.Version, dir)
		return nil
	case "link":
		return nil
	default:
		l.diags.add(CodePackageInvalid, dir, 0, "", "must be a folder")
		return nil
	}
	mark := len(l.diags.List)
	t := &Template{ID: key.ID, Version: key.Version, locales: map[string][]*compiledPart{}}
	if !l.templateYAML(t, dir+"/template.yaml") {
		return nil
	}
	if data, ok := l.fs.read(dir+"/schema.json", maxFileBytes, CodeTemplateInvalid); ok {
		sch, msg := compileSchema(dir+"/schema.json", data)
		if msg != "" {
			l.diags.add(CodeTemplateInvalid, dir+"/schema.json", 0, "", "%s", msg)
		}
		t.schema = sch
	}
	for _, e := range l.fs.readDir(dir) {
		if e.IsDir() && !hidden(e.Name()) && !contains(t.Locales, e.Name()) {
			l.diags.add(CodeTemplateInvalid, dir+"/"+e.Name(), 0, "", "locale folder %q is not declared in template.yaml", e.Name())
		}
	}
	for _, loc := range t.Locales {
		l.loadLocale(t, dir, loc)
	}
	if len(l.diags.List) != mark || t.schema == nil {
		return nil
	}
	l.loadSample(t, dir)
	if len(l.diags.List) != mark {
		return nil
	}
	return t
}

func hidden(name string) bool { return strings.HasPrefix(name, ".") }

// templateYAML reads template.yaml into t.
func (l *loader) templateYAML(t *Template, rel string) bool {
	data, ok := l.fs.read(rel, maxFileBytes, CodeTemplateInvalid)
	if !ok {
		return false
	}
	mark := len(l.diags.List)
	y := &ydoc{path: rel, code: CodeTemplateInvalid, diags: l.diags}
	root := y.parse(data)
	if root == nil {
		return false
	}
	m := y.mapping(root, "", "channel", "locales", "parts", "contentType")
	if m == nil {
		return false
	}
	t.Channel, _ = oneOf(m, "channel", "", channelEmail, channelSMS, channelPeer, channelChat, channelPush)
	if m.required("locales") {
		locs := m.strList("locales")
		if len(locs) == 0 || len(locs) > maxLocales {
			m.errf("locales", "between 1 and %d locales are required", maxLocales)
		}
		for _, loc := range locs {
			if !localePattern.MatchString(loc) {
				m.errf("locales", "%q is not a simple language tag such as en or pt-BR", loc)
				continue
			}
			t.Locales = append(t.Locales, loc)
		}
	}
	if m.required("parts") {
		t.Parts = m.strList("parts")
		if msg := checkParts(t.Channel, t.Parts); msg != "" {
			m.errf("parts", "%s", msg)
		}
	}
	switch {
	case t.Channel == channelPeer:
		t.ContentType = defaultContentType
		if ct, ok := m.str("contentType"); ok {
			if _, _, err := mime.ParseMediaType(ct); err != nil || !strings.Contains(ct, "/") {
				m.errf("contentType", "%q is not a media type", ct)
			}
			t.ContentType = ct
		}
		t.jsonBody = isJSONType(t.ContentType)
	case m.has("contentType") && t.Channel != "":
		m.errf("contentType", "only peer templates have a contentType")
	}
	return len(l.diags.List) == mark
}

// checkParts returns why a channel's part list is wrong, or "".
func checkParts(channel string, parts []string) string {
	switch channel {
	case channelEmail:
		for _, p := range parts {
			if p != "subject" && p != "text" && p != "html" {
				return "email templates have parts subject, text and optionally html; " + strconv.Quote(p) + " is not one"
			}
		}
		if !contains(parts, "subject") || !contains(parts, "text") {
			return "email templates need the parts subject and text"
		}
	case channelSMS:
		if len(parts) != 1 || parts[0] != "text" {
			return "sms templates have exactly one part: text"
		}
	case channelPeer:
		if len(parts) != 1 || parts[0] != "body" {
			return "peer templates have exactly one part: body"
		}
	case channelChat:
		for _, p := range parts {
			if p != "text" && p != "body" {
				return "chat templates have the part text and optionally body (a JSON document); " + strconv.Quote(p) + " is not one"
			}
		}
		if !contains(parts, "text") {
			return "chat templates need the part text"
		}
	case channelPush:
		for _, p := range parts {
			if p != "title" && p != "body" && p != "data" {
				return "push templates have the parts title and body and optionally data (a JSON object of strings); " + strconv.Quote(p) + " is not one"
			}
		}
		if !contains(parts, "title") || !contains(parts, "body") {
			return "push templates need the parts title and body"
		}
	}
	return ""
}

// loadLocale parses every part file of one locale and refuses undeclared part files.
func (l *loader) loadLocale(t *Template, dir, loc string) {
	ldir := dir + "/" + loc
	switch l.fs.entry(ldir) {
	case "dir":
	case "missing":
		l.diags.add(CodeTemplateInvalid, ldir, 0, "", "the folder of declared locale %q is missing", loc)
		return
	case "link":
		return
	default:
		l.diags.add(CodeTemplateInvalid, ldir, 0, "", "must be a folder")
		return
	}
	for _, e := range l.fs.readDir(ldir) {
		if part, ok := isTemplateFile(e.Name()); ok && !contains(t.Parts, part) {
			l.diags.add(CodeTemplateInvalid, ldir+"/"+e.Name(), 0, "", "part %q is not declared in template.yaml", part)
		}
	}
	for _, part := range t.Parts {
		rel := ldir + "/" + part + ".tmpl"
		if l.fs.entry(rel) == "missing" {
			l.diags.add(CodeTemplateInvalid, rel, 0, "", "the part file is missing (template.yaml declares part %q and locale %q)", part, loc)
			continue
		}
		data, ok := l.fs.read(rel, maxFileBytes, CodeTemplateInvalid)
		if !ok {
			continue
		}
		if !utf8.Valid(data) {
			l.diags.add(CodeTemplateInvalid, rel, 0, "", "the file is not valid UTF-8")
			continue
		}
		// One final line break ends the file; it is not part of the text (an SMS or a subject
		// must not gain a newline because editors end files with one).
		src := strings.TrimSuffix(strings.TrimSuffix(string(data), "\n"), "\r")
		p, err := newPart(part, partLimit(t.Channel, part), rel, loc, src)
		if err != nil {
			line, msg := parseFailure(err)
			l.diags.add(CodeTemplateInvalid, rel, line, "", "%s", msg)
			continue
		}
		t.locales[loc] = append(t.locales[loc], p)
	}
}

// parseFailure extracts the line and description of a template parse or escape error.
func parseFailure(err error) (int, string) {
	var he *htmltemplate.Error
	if errors.As(err, &he) {
		desc, _, _ := strings.Cut(he.Description, ": {") // drop the escaper's internal state
		return he.Line, "the html part cannot be escaped safely: " + desc
	}
	if m := parseLine.FindStringSubmatch(err.Error()); m != nil {
		line, _ := strconv.Atoi(m[1])
		return line, m[2]
	}
	return 0, err.Error()
}

// loadSample decodes sample.json, validates it and renders it in every locale.
func (l *loader) loadSample(t *Template, dir string) {
	rel := dir + "/sample.json"
	switch l.fs.entry(rel) {
	case "missing", "link":
		return
	}
	data, ok := l.fs.read(rel, maxFileBytes, CodeTemplateInvalid)
	if !ok {
		return
	}
	sample, err := DecodeData(data)
	if err != nil {
		l.diags.add(CodeDataInvalid, rel, 0, "", "sample.json: %s", err.Error())
		return
	}
	if err := t.ValidateData(sample); err != nil {
		var de *DataError
		errors.As(err, &de)
		l.diags.add(CodeDataInvalid, rel, 0, "", "sample.json: %s", de.Message)
		return
	}
	t.Sample = sample
	t.Samples = make(map[string]*Rendered, len(t.Locales))
	for _, loc := range t.Locales {
		r, err := t.Render(loc, sample)
		if err != nil {
			var re *RenderError
			errors.As(err, &re)
			path := rel
			if re.Part != "" {
				path = dir + "/" + loc + "/" + re.Part + ".tmpl"
			}
			l.diags.add(re.Code(), path, re.Line, "", "rendering sample.json: %s", re.Message)
			continue
		}
		t.Samples[loc] = r
	}
}
