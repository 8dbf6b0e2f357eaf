package packages

import (
	"errors"
	"strings"
	"testing"
)

// pushTemplate is a push template with the given data part source.
func pushTemplate(t *testing.T, data string) *Template {
	t.Helper()
	return miniPackage(t, map[string]string{
		"template.yaml": "channel: push\nlocales: [en]\nparts: [title, body, data]\n",
		"en/title.tmpl": "Case {{.caseId}}\nupdated",
		"en/body.tmpl":  "Now {{.status}}.\x07",
		"en/data.tmpl":  data,
	})
}

func TestPushTemplateRendersTitleBodyAndData(t *testing.T) {
	t.Parallel()
	tmpl := pushTemplate(t, `{"caseId": {{json .caseId}}, "status": {{json .status}}}`)
	out, err := tmpl.Render("en", mustDecode(t, `{"caseId": "C-1", "status": "closed"}`))
	if err != nil {
		t.Fatal(err)
	}
	if out.Parts["title"] != "Case C-1 updated" || out.Parts["body"] != "Now closed." ||
		out.Parts["data"] != `{"caseId": "C-1", "status": "closed"}` {
		t.Fatalf("parts %q", out.Parts)
	}
}

func TestPushDataIsCheckedAtRender(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct {
		data, code string
	}{
		"a number value":      {`{"count": {{.n}}}`, CodeRenderRefused},
		"a nested object":     {`{"case": {"id": "x"}}`, CodeRenderRefused},
		"an array":            {`["x"]`, CodeRenderRefused},
		"not JSON":            {`caseId={{.n}}`, CodeRenderRefused},
		"null":                {`null`, CodeRenderRefused},
		"over 4 KiB rendered": {`{"pad": "{{.pad}}"}`, CodeContentTooLarge},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			tmpl := pushTemplate(t, tc.data)
			_, err := tmpl.Render("en", mustDecode(t, `{"caseId": "C-1", "status": "s", "n": 3, "pad": "`+strings.Repeat("x", 4100)+`"}`))
			var re *RenderError
			if !errors.As(err, &re) || re.Code() != tc.code || re.Part != "data" || !strings.Contains(re.Message, "data part") {
				t.Fatalf("err = %v, want %s on the data part", err, tc.code)
			}
			if strings.Contains(re.Message, "xxxx") || strings.Contains(re.Message, "C-1") {
				t.Fatalf("the message repeats data: %s", re.Message)
			}
		})
	}
	if _, err := pushTemplate(t, `{}`).Render("en", mustDecode(t, `{"caseId": "C", "status": "s"}`)); err != nil {
		t.Fatalf("an empty data object refused: %v", err)
	}
}

func TestCheckPushData(t *testing.T) {
	t.Parallel()
	if err := CheckPushData(`{"a": "1", "b": ""}`); err != nil {
		t.Fatal(err)
	}
	if err := CheckPushData(`{"a": "1"} {}`); !errors.Is(err, ErrPushDataShape) {
		t.Fatalf("two values: %v", err)
	}
	if err := CheckPushData(`{"a": "` + strings.Repeat("x", LimitPushData) + `"}`); !errors.Is(err, ErrPushDataTooLarge) {
		t.Fatalf("too large: %v", err)
	}
}

func TestPushPackageRefusals(t *testing.T) {
	t.Parallel()
	manifest := func(profile string) string {
		return "apiVersion: switchboard/v1\nkind: Package\nproviders:\n  - {id: fcm, kind: http}\n  - {id: relay, kind: smtp}\n" +
			"senderProfiles:\n  - " + profile + "\ntemplates: [{id: t, version: \"1\"}]\n" +
			"accessProfiles:\n  - {id: ops, role: operator, clients: [ops], requestsPerMinute: 60, burst: 10}\n"
	}
	for name, tc := range map[string]struct {
		profile, parts, path, contains string
	}{
		"push on an smtp provider": {"{id: p, channel: push, provider: relay}", "[title, body]", "switchboard.yaml", "push is carried by http providers only"},
		"push with a sender":       {"{id: p, channel: push, provider: fcm, sender: app}", "[title, body]", "switchboard.yaml", "push sender profiles have no sender"},
		"push with segments":       {"{id: p, channel: push, provider: fcm, maximumSegments: 2}", "[title, body]", "switchboard.yaml", "only sms sender profiles"},
		"push template with text":  {"{id: p, channel: push, provider: fcm}", "[title, body, text]", "templates/t/1/template.yaml", "push templates have the parts title and body"},
		"push template no title":   {"{id: p, channel: push, provider: fcm}", "[body]", "templates/t/1/template.yaml", "need the parts title and body"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			writeFile(t, dir, "switchboard.yaml", manifest(tc.profile))
			writeFile(t, dir, "templates/t/1/template.yaml", "channel: push\nlocales: [en]\nparts: "+tc.parts+"\n")
			writeFile(t, dir, "templates/t/1/schema.json", `{"type": "object"}`)
			for _, p := range []string{"title", "body", "text"} {
				if strings.Contains(tc.parts, p) {
					writeFile(t, dir, "templates/t/1/en/"+p+".tmpl", "x")
				}
			}
			le := loadError(t, dir)
			for _, d := range le.Diagnostics {
				if d.Path == tc.path && strings.Contains(d.Message, tc.contains) {
					return
				}
			}
			t.Fatalf("no diagnostic at %s mentioning %q: %v", tc.path, tc.contains, le)
		})
	}
}
