package packages

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestRenderFunctions(t *testing.T) {
	t.Parallel()
	tmpl := miniPackage(t, map[string]string{
		"template.yaml":   "channel: email\nlocales: [en, en-GB, fr, de, ja, sv]\nparts: [subject, text]\n",
		"en/subject.tmpl": "{{date .d}}", "en/text.tmpl": "x",
		"en-GB/subject.tmpl": "{{date .d}}", "en-GB/text.tmpl": "x",
		"fr/subject.tmpl": "{{date .d}}", "fr/text.tmpl": "x",
		"de/subject.tmpl": "{{date .d}}", "de/text.tmpl": "x",
		"ja/subject.tmpl": "{{date .d}}", "ja/text.tmpl": "x",
		"sv/subject.tmpl": "{{date .d}}", "sv/text.tmpl": "x",
	})
	for locale, want := range map[string]string{
		"en": "October 1, 2026", "en-GB": "1 October 2026", "fr": "01/10/2026",
		"de": "01.10.2026", "ja": "2026/10/01", "sv": "2026-10-01",
	} {
		for _, d := range []string{"2026-10-01", "2026-10-01T23:30:00-05:00", "2026-10-01t23:59:60z", "2026-10-01T00:00:00.123+14:00"} {
			r, err := tmpl.Render(locale, map[string]any{"d": d})
			if err != nil {
				t.Fatalf("%s %s: %v", locale, d, err)
			}
			if r.Parts["subject"] != want {
				t.Errorf("date %s in %s = %q, want %q", d, locale, r.Parts["subject"], want)
			}
		}
	}

	cases := []struct {
		src, data, want string
	}{
		{`{{number .n 2}}`, `{"n": 2.675}`, "2.68"},
		{`{{number .n 2}}`, `{"n": 1e2}`, "100.00"},
		{`{{number .n 0}}`, `{"n": 2.5}`, "3"},
		{`{{number .n 3}}`, `{"n": -0.0001}`, "0.000"},
		{`{{number .n 1}}`, `{"n": -12.25}`, "-12.3"},
		{`{{number 7 2}}`, `{}`, "7.00"},
		{`{{number .n .d}}`, `{"n": 1, "d": 1}`, "1.0"},
		{`{{upper .s}}|{{lower .s}}`, `{"s": "Crème Brûlée"}`, "CRÈME BRÛLÉE|crème brûlée"},
		{`{{default "none" .missing}}`, `{}`, "none"},
		{`{{default "none" .n}}`, `{"n": null}`, "none"},
		{`{{default "none" .s}}`, `{"s": ""}`, "none"},
		{`{{default "none" .s}}`, `{"s": "given"}`, "given"},
		{`{{default "none" .n}}`, `{"n": 0}`, "0"},
		{`{{.missing | default "piped"}}`, `{}`, "piped"},
		{`{{default "deep" .a.b.c}}`, `{}`, "deep"},
		{`{{default "deep" .a.b}}`, `{"a": {"b": "set"}}`, "set"},
		{`{{default "v" $.x}}`, `{}`, "v"},
		{`{{with $o := .opt}}{{default "no" $o.k}}{{end}}`, `{"opt": {"other": 1}}`, "no"},
		{`{{range .items}}{{default "-" .name}};{{end}}`, `{"items": [{"name": "a"}, {}]}`, "a;-;"},
		{`{{if .maybe}}yes{{else}}no{{end}}`, `{}`, "no"},
		{`{{if .maybe}}yes{{else}}no{{end}}`, `{"maybe": "x"}`, "yes"},
		{`{{with .a.b}}{{.}}{{else}}none{{end}}`, `{"a": null}`, "none"},
		{`{{if and .a (not .b)}}A{{else if or .b .c}}BC{{end}}`, `{"c": true}`, "BC"},
		{`{{if not .x}}absent{{end}}`, `{}`, "absent"},
		{`{{.b}} {{.n}} {{len .l}}`, `{"b": true, "n": 12.50, "l": [1, 2]}`, "true 12.50 2"},
		{`{{json .o}}`, `{"o": {"k": [1, "<&>"]}}`, `{"k":[1,"<&>"]}`},
		{`{{upper (default "fallback" .m)}}`, `{}`, "FALLBACK"},
	}
	for _, c := range cases {
		tm := textTemplate(t, c.src)
		r, err := tm.Render("en", mustDecode(t, c.data))
		if err != nil {
			t.Errorf("%s with %s: %v", c.src, c.data, err)
			continue
		}
		if r.Parts["text"] != c.want {
			t.Errorf("%s with %s = %q, want %q", c.src, c.data, r.Parts["text"], c.want)
		}
	}
}

func TestRenderFunctionErrors(t *testing.T) {
	t.Parallel()
	cases := []struct {
		src, data, message string
	}{
		{`{{date .d}}`, `{"d": "SECRET-2026"}`, "date: the value is not an ISO date"},
		{`{{date .d}}`, `{"d": "2026-02-30"}`, "date: the value is not an ISO date"},
		{`{{date .d}}`, `{"d": "2026-10-01T25:00:00Z"}`, "date: the value is not an ISO date"},
		{`{{date .d}}`, `{"d": "2026-10-01 and more"}`, "date: the value is not an ISO date"},
		{`{{date .d}}`, `{"d": 20261001}`, "date: the value is not a string"},
		{`{{number .n 2}}`, `{"n": "12"}`, "number: the value is not a number"},
		{`{{number .n 2}}`, `{"n": 1e999999}`, "number: the value is out of range"},
		{`{{number .n 21}}`, `{"n": 1}`, "decimals must be an integer from 0 to 20"},
		{`{{number .n 2}}`, `{}`, `missing key "n"`},
		{`{{upper .s}}`, `{"s": null}`, "upper: the value is null or missing"},
		{`{{lower .s}}`, `{"s": true}`, "lower: the value is not a string"},
		{`{{.missing}}`, `{}`, `missing key "missing"`},
		{`{{.a.b}}`, `{"a": null}`, "null or missing"},
		{`{{.a.b}}`, `{"a": "SECRET"}`, "not an object"},
		{`{{default "x" .a.b}}`, `{"a": "SECRET"}`, "not an object"},
		{`{{.o}}`, `{"o": {"k": "SECRET"}}`, "an object or a list cannot be printed"},
		{`{{json .n}}`, `{"n": null}`, "json: the value is null or missing"},
		{`{{range .n}}{{.}}{{end}}`, `{"n": 5}`, "cannot be rendered with this data"},
	}
	for _, c := range cases {
		tm := textTemplate(t, c.src)
		_, err := tm.Render("en", mustDecode(t, c.data))
		if err == nil {
			t.Errorf("%s with %s: rendered", c.src, c.data)
			continue
		}
		if code := renderCode(t, err); code != CodeRenderRefused {
			t.Errorf("%s: code %s", c.src, code)
		}
		if !strings.Contains(err.Error(), c.message) {
			t.Errorf("%s with %s: %q does not say %q", c.src, c.data, err.Error(), c.message)
		}
		if strings.Contains(err.Error(), "SECRET") || strings.Contains(err.Error(), "999999") {
			t.Errorf("%s: message echoes data: %s", c.src, err)
		}
	}
}

func TestNumberRefusesLongLiterals(t *testing.T) {
	t.Parallel()
	if _, err := formatNumber(json.Number("1"+strings.Repeat("0", 64)), 2); err == nil || !strings.Contains(err.Error(), "out of range") {
		t.Errorf("65-character number: %v", err)
	}
}
