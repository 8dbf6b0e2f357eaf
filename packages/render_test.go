package packages

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

func renderCode(t *testing.T, err error) string {
	t.Helper()
	var re *RenderError
	if !errors.As(err, &re) {
		t.Fatalf("error %T is not a *RenderError: %v", err, err)
	}
	return re.Code()
}

func TestRenderQuickstartEmailEscapesHTML(t *testing.T) {
	t.Parallel()
	tmpl := mustLoad(t, quickstartDir).Template("appointment-reminder", "1")
	data := mustDecode(t, `{"patientName": "<script>alert(1)</script>", "clinicName": "A & B", "date": "2026-10-01", "time": "09:30"}`)
	if err := tmpl.ValidateData(data); err != nil {
		t.Fatal(err)
	}
	r, err := tmpl.Render("en", data)
	if err != nil {
		t.Fatal(err)
	}
	html := r.Parts["html"]
	if strings.Contains(html, "<script>") || !strings.Contains(html, "&lt;script&gt;alert(1)&lt;/script&gt;") {
		t.Errorf("html part does not escape the name:\n%s", html)
	}
	if !strings.Contains(html, "A &amp; B") {
		t.Errorf("html part does not escape &:\n%s", html)
	}
	if !strings.Contains(r.Parts["text"], "Hello <script>alert(1)</script>,") {
		t.Errorf("text part is changed:\n%s", r.Parts["text"])
	}
	if got, want := r.Parts["subject"], "Reminder: your appointment on October 1, 2026 at 09:30"; got != want {
		t.Errorf("subject = %q, want %q", got, want)
	}
	if r.SMS != nil {
		t.Error("email rendering reports SMS information")
	}
}

func TestRenderQuickstartLocales(t *testing.T) {
	t.Parallel()
	pkg := mustLoad(t, quickstartDir)
	email := pkg.Template("appointment-reminder", "1")
	r, err := email.Render("fr", email.Sample)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := r.Parts["subject"], "Rappel : votre rendez-vous du 01/10/2026 à 09:30"; got != want {
		t.Errorf("fr subject = %q, want %q", got, want)
	}
	if !strings.Contains(r.Parts["text"], "Montant à régler lors de la visite : 25.00 EUR") {
		t.Errorf("fr text:\n%s", r.Parts["text"])
	}
	_, err = email.Render("de", email.Sample)
	if code := renderCode(t, err); code != CodeLocaleUnavailable {
		t.Errorf("undeclared locale: code %s", code)
	}
	_, err = email.Render("fr-CA", email.Sample)
	if code := renderCode(t, err); code != CodeLocaleUnavailable {
		t.Errorf("no fallback from fr-CA to fr expected, got code %s", code)
	}

	sms := pkg.Template("appointment-reminder-sms", "1")
	r, err = sms.Render("en", sms.Sample)
	if err != nil {
		t.Fatal(err)
	}
	want := "Riverside Clinic: reminder of your appointment on October 1, 2026 at 09:30. To rebook, call us."
	if r.Parts["text"] != want {
		t.Errorf("sms text = %q", r.Parts["text"])
	}
	if r.SMS == nil || *r.SMS != (SMSInfo{Encoding: EncodingGSM7, Units: len(want), Segments: 1}) {
		t.Errorf("sms info = %+v", r.SMS)
	}
	if sms.Samples["en"] == nil || sms.Samples["en"].SMS.Segments != 1 {
		t.Errorf("sample rendering at load not kept: %+v", sms.Samples)
	}

	peer := pkg.Template("case-update", "1")
	if peer.ContentType != "application/json" {
		t.Errorf("content type %q", peer.ContentType)
	}
	r, err = peer.Render("en", mustDecode(t, `{"caseId": "C-1", "status": "closed", "updatedAt": "2026-10-01T09:30:00Z", "note": "said \"done\"\n"}`))
	if err != nil {
		t.Fatal(err)
	}
	var body map[string]any
	if err := json.Unmarshal([]byte(r.Parts["body"]), &body); err != nil {
		t.Fatalf("body is not JSON: %v\n%s", err, r.Parts["body"])
	}
	if body["note"] != "said \"done\"\n" || body["status"] != "closed" {
		t.Errorf("body = %v", body)
	}
	r, err = peer.Render("en", mustDecode(t, `{"caseId": "C-1", "status": "closed", "updatedAt": "2026-10-01T09:30:00Z"}`))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(r.Parts["body"], "note") {
		t.Errorf("absent note rendered: %s", r.Parts["body"])
	}
}

func TestRenderRefusesMissingAndNull(t *testing.T) {
	t.Parallel()
	sms := mustLoad(t, quickstartDir).Template("appointment-reminder-sms", "1")
	for name, data := range map[string]string{
		"missing key":   `{"date": "2026-10-01", "time": "09:30"}`,
		"null value":    `{"clinicName": null, "date": "2026-10-01", "time": "09:30"}`,
		"null argument": `{"clinicName": "X", "date": null, "time": "09:30"}`,
		"object value":  `{"clinicName": {"name": "X"}, "date": "2026-10-01", "time": "09:30"}`,
		"list value":    `{"clinicName": ["SECRET-1"], "date": "2026-10-01", "time": "09:30"}`,
		"null data":     `null`,
	} {
		_, err := sms.Render("en", mustDecode(t, data))
		if err == nil {
			t.Errorf("%s: rendered", name)
			continue
		}
		if code := renderCode(t, err); code != CodeRenderRefused {
			t.Errorf("%s: code %s", name, code)
		}
		var re *RenderError
		errors.As(err, &re)
		if re.Part != "text" || re.Locale != "en" || re.Line != 1 {
			t.Errorf("%s: part %q locale %q line %d", name, re.Part, re.Locale, re.Line)
		}
		if strings.Contains(re.Error(), "SECRET") {
			t.Errorf("%s: message echoes data: %s", name, re.Error())
		}
	}
	_, err := sms.Render("en", mustDecode(t, `{"date": "2026-10-01", "time": "09:30"}`))
	if !strings.Contains(err.Error(), `missing key "clinicName"`) || !strings.Contains(err.Error(), "<.clinicName>") {
		t.Errorf("missing key message: %v", err)
	}
}

func TestRenderCleansParts(t *testing.T) {
	t.Parallel()
	tmpl := miniPackage(t, map[string]string{
		"template.yaml":   "channel: email\nlocales: [en]\nparts: [subject, text, html]\n",
		"en/subject.tmpl": "  Re: {{.s}} \n",
		"en/text.tmpl":    "{{.s}}|{{.c}}",
		"en/html.tmpl":    "<p>{{.c}}</p>",
	})
	data := mustDecode(t, `{"s": "one\r\ntwo\nthree\tfour", "c": "a\u0000b\u0007c\td\ne\rf\u0085g\u007fh\u00e9"}`)
	r, err := tmpl.Render("en", data)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := r.Parts["subject"], "Re: one  two three\tfour"; got != want {
		t.Errorf("subject = %q, want %q", got, want)
	}
	if got, want := r.Parts["text"], "one\ntwo\nthree\tfour|abc\td\nefghé"; got != want {
		t.Errorf("text = %q, want %q", got, want)
	}
	// html/template itself turns NUL into U+FFFD; the writer drops the other controls.
	if got, want := r.Parts["html"], "<p>a\ufffdbc\td\ne\rfghé</p>"; got != want {
		t.Errorf("html = %q, want %q", got, want)
	}
}

func TestPartWriterSplitControl(t *testing.T) {
	t.Parallel()
	w := &partWriter{limit: 100, mode: "text"}
	for _, chunk := range []string{"a\xc2", "\x85b\xc2", "\xa9c\xc2"} { // C1 NEL split, then © split, then dangling
		if _, err := w.Write([]byte(chunk)); err != nil {
			t.Fatal(err)
		}
	}
	if got, want := w.finish(), "ab©c\xc2"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestRenderLimits(t *testing.T) {
	t.Parallel()
	email := miniPackage(t, map[string]string{
		"template.yaml":   "channel: email\nlocales: [en]\nparts: [subject, text, html]\n",
		"en/subject.tmpl": "{{.subject}}",
		"en/text.tmpl":    "{{.text}}",
		"en/html.tmpl":    "{{.html}}",
	})
	peer := miniPackage(t, map[string]string{
		"template.yaml": "channel: peer\nlocales: [en]\nparts: [body]\ncontentType: text/plain\n",
		"en/body.tmpl":  "{{.body}}",
	})
	ok := func(n int) string { return strings.Repeat("x", n) }
	cases := []struct {
		tmpl                *Template
		part                string
		limit               int
		subject, text, html int
		body                int
	}{
		{email, "subject", 512, 512, 1, 1, 0},
		{email, "text", 64 << 10, 1, 64 << 10, 1, 0},
		{email, "html", 256 << 10, 1, 1, 256 << 10, 0},
		{peer, "body", 4 << 20, 0, 0, 0, 4 << 20},
	}
	for _, c := range cases {
		sizes := map[string]int{"subject": c.subject, "text": c.text, "html": c.html, "body": c.body}
		data := map[string]any{}
		for k, n := range sizes {
			data[k] = ok(n)
		}
		r, err := c.tmpl.Render("en", data)
		if err != nil {
			t.Fatalf("%s at its limit: %v", c.part, err)
		}
		if len(r.Parts[c.part]) != c.limit {
			t.Fatalf("%s: %d bytes", c.part, len(r.Parts[c.part]))
		}
		data[c.part] = ok(c.limit + 1)
		_, err = c.tmpl.Render("en", data)
		if code := renderCode(t, err); code != CodeContentTooLarge {
			t.Errorf("%s over its limit: code %s", c.part, code)
		}
	}
}

func TestRenderPeerJSONBodyChecked(t *testing.T) {
	t.Parallel()
	peer := miniPackage(t, map[string]string{
		"template.yaml": "channel: peer\nlocales: [en]\nparts: [body]\n",
		"en/body.tmpl":  `{"id": "{{.id}}"}`,
	})
	if _, err := peer.Render("en", mustDecode(t, `{"id": "a"}`)); err != nil {
		t.Fatal(err)
	}
	_, err := peer.Render("en", mustDecode(t, `{"id": "a\"b"}`))
	if code := renderCode(t, err); code != CodeRenderRefused {
		t.Errorf("code %s", code)
	}
}
