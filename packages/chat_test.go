package packages

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

func TestChatTemplateRendersTextAndJSONBody(t *testing.T) {
	t.Parallel()
	pkg := mustLoad(t, quickstartDir)
	tmpl := pkg.Template("case-chat", "1")
	if tmpl == nil || tmpl.Channel != "chat" {
		t.Fatalf("case-chat = %+v", tmpl)
	}
	out, err := tmpl.Render("en", mustDecode(t, `{"caseId": "CASE-1", "status": "closed", "note": "a \"quoted\" note"}`))
	if err != nil {
		t.Fatal(err)
	}
	if out.Parts["text"] != `Case CASE-1 closed: a "quoted" note` {
		t.Errorf("text = %q", out.Parts["text"])
	}
	var body struct{ Blocks []map[string]any }
	if err := json.Unmarshal([]byte(out.Parts["body"]), &body); err != nil || len(body.Blocks) != 2 {
		t.Errorf("body = %s (%v)", out.Parts["body"], err)
	}
	sp := pkg.SenderProfile("team-chat")
	if sp == nil || sp.Channel != "chat" || sp.Sender != "Switchboard" || sp.MaximumSegments != 0 {
		t.Errorf("team-chat = %+v", sp)
	}
}

func TestChatBodyMustBeJSONWithinItsLimit(t *testing.T) {
	t.Parallel()
	tmpl := miniPackage(t, map[string]string{
		"template.yaml": "channel: chat\nlocales: [en]\nparts: [text, body]\n",
		"en/text.tmpl":  "hello",
		"en/body.tmpl":  `{"blocks": [{{.raw}}]}`,
	})
	if _, err := tmpl.Render("en", mustDecode(t, `{"raw": "{\"type\": \"divider\"}"}`)); err != nil {
		t.Fatalf("valid JSON body refused: %v", err)
	}
	_, err := tmpl.Render("en", mustDecode(t, `{"raw": "not json"}`))
	var re *RenderError
	if !errors.As(err, &re) || re.Code() != CodeRenderRefused || re.Part != "body" {
		t.Fatalf("non-JSON body: %v", err)
	}
	// 256 KiB is the chat body's limit, far below a peer body's 4 MiB.
	big := `"` + strings.Repeat("x", 256<<10) + `"`
	_, err = tmpl.Render("en", mustDecode(t, `{"raw": `+mustJSON(t, big)+`}`))
	if !errors.As(err, &re) || re.Code() != CodeContentTooLarge {
		t.Fatalf("over-limit body: %v", err)
	}
	if _, err := tmpl.Render("en", mustDecode(t, `{"raw": `+mustJSON(t, `"`+strings.Repeat("x", 200<<10)+`"`)+`}`)); err != nil {
		t.Fatalf("200 KiB body refused: %v", err)
	}
}

func TestChatTemplateWithoutBodyRendersText(t *testing.T) {
	t.Parallel()
	tmpl := miniPackage(t, map[string]string{
		"template.yaml": "channel: chat\nlocales: [en]\nparts: [text]\n",
		"en/text.tmpl":  "hello {{.name}}",
	})
	out, err := tmpl.Render("en", mustDecode(t, `{"name": "team"}`))
	if err != nil || out.Parts["text"] != "hello team" || len(out.Parts) != 1 {
		t.Fatalf("Render = %+v, %v", out, err)
	}
}

func TestChatPackageRefusals(t *testing.T) {
	t.Parallel()
	const manifestPath = "switchboard.yaml"
	const chatTemplate = "templates/case-chat/1/template.yaml"
	tests := []struct {
		name           string
		rel, old, new  string
		path, contains string
	}{
		{"chat on an smtp provider", manifestPath, "provider: chat-gateway", "provider: mail-relay",
			manifestPath, "chat is carried by http providers only"},
		{"chat on a peer provider", manifestPath, "provider: chat-gateway", "provider: peers",
			manifestPath, "chat is carried by http providers only"},
		{"chat sender with a line break", manifestPath, "sender: Switchboard", `sender: "Switch\nboard"`,
			manifestPath, "printable"},
		{"chat with maximumSegments", manifestPath, "sender: Switchboard", "sender: Switchboard\n    maximumSegments: 2",
			manifestPath, "only sms sender profiles"},
		{"chat template with a subject", chatTemplate, "parts: [text, body]", "parts: [subject, text]",
			chatTemplate, "chat templates have the part text"},
		{"chat template without text", chatTemplate, "parts: [text, body]", "parts: [body]",
			chatTemplate, "need the part text"},
		{"chat sample whose body is not JSON", "templates/case-chat/1/en/body.tmpl", `{"blocks": [`, `{"blocks": `,
			"templates/case-chat/1/en/body.tmpl", "not a JSON document"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := copyQuickstart(t)
			replaceIn(t, dir, tc.rel, tc.old, tc.new)
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

func mustJSON(t *testing.T, s string) string {
	t.Helper()
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
