package main

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// The request-body rules of docs/api.md, through the real API server: every JSON body is read
// strictly (no repeated member name in any object, valid UTF-8 only), correlationId is bounded,
// and no answer repeats what was sent.

// smsJSON is the quickstart's SMS submission as text, with extra members spliced in at the top
// level (top), in to (to) and in data (data), so that a test can repeat members.
func smsJSON(top, to, data string) []byte {
	return []byte(`{"senderProfile":"reminders-sms","to":{"phone":"` + testPhone + `"` + to + `},` +
		`"template":{"id":"appointment-reminder-sms","version":"1"},"locale":"en",` +
		`"data":{"clinicName":"Riverside Clinic","date":"2026-10-01","time":"09:30"` + data + `}` + top + `}`)
}

func TestRepeatedMembersAreRefusedInEveryBody(t *testing.T) {
	t.Parallel()
	e := newAPIEnv(t, envOptions{})
	o := loadOpenAPI(t, e.do(request{method: "GET", path: "/openapi.json"}).raw)
	sender, operator := e.token("case-system"), e.token("operations-console")
	if a := e.do(request{method: "POST", path: "/v1/messages", token: sender, key: "plain", body: smsJSON("", "", "")}); a.status != 202 {
		t.Fatalf("the body without repeats: %d %s", a.status, a.raw)
	}
	for name, body := range map[string][]byte{
		"two to":                      smsJSON(`,"to":{"phone":"+15550100999"}`, "", ""),
		"two senderProfile":           smsJSON(`,"senderProfile":"reminders-email"`, "", ""),
		"two locale, one escaped":     smsJSON(`,"\u006cocale":"en"`, "", ""),
		"two phone in to":             smsJSON("", `,"phone":"+15550100999"`, ""),
		"two members in data":         smsJSON("", "", `,"clinicName":"Elsewhere"`),
		"repeat deep inside data":     smsJSON("", "", `,"patientName":"x","extra":[{"a":{"b":1,"b":2}}]`),
		"two template ids":            []byte(`{"senderProfile":"reminders-sms","to":{"phone":"` + testPhone + `"},"template":{"id":"a","id":"appointment-reminder-sms","version":"1"},"locale":"en"}`),
		"two correlationId":           smsJSON(`,"correlationId":"a","correlationId":"b"`, "", ""),
		"repeated with the same text": smsJSON(`,"locale":"en"`, "", ""),
	} {
		t.Run("submission/"+name, func(t *testing.T) {
			a := e.do(request{method: "POST", path: "/v1/messages", token: sender, key: "k-" + name, body: body})
			assertProblem(t, o, a, 400, "request.invalid")
			if !strings.Contains(string(a.raw), "repeats a member name") {
				t.Fatalf("detail does not say why: %s", a.raw)
			}
		})
	}
	preview := "/v1/templates/appointment-reminder-sms/versions/1/preview"
	for name, req := range map[string]request{
		"preview: two locale": {method: "POST", path: preview, token: sender,
			body: []byte(`{"locale":"en","locale":"fr","data":{"clinicName":"C","date":"2026-10-01","time":"09:30"}}`)},
		"preview: repeat in data": {method: "POST", path: preview, token: sender,
			body: []byte(`{"locale":"en","data":{"clinicName":"C","clinicName":"D","date":"2026-10-01","time":"09:30"}}`)},
		"settle: two outcome": {method: "POST", path: "/v1/messages/0193aaaa-0000-7000-8000-000000000000/settle", token: operator,
			body: []byte(`{"outcome":"sent","outcome":"not-sent"}`)},
		"retry: repeated member": {method: "POST", path: "/v1/messages/0193aaaa-0000-7000-8000-000000000000/retry", token: operator,
			body: []byte(`{"a":1,"a":1}`)},
	} {
		t.Run(name, func(t *testing.T) {
			assertProblem(t, o, e.do(req), 400, "request.invalid")
		})
	}
}

func TestInvalidUnicodeIsRefused(t *testing.T) {
	t.Parallel()
	e := newAPIEnv(t, envOptions{})
	o := loadOpenAPI(t, e.do(request{method: "GET", path: "/openapi.json"}).raw)
	sender := e.token("case-system")
	for name, body := range map[string][]byte{
		"in a member value":         smsJSON(`,"correlationId":"ab`+"\xff"+`cd"`, "", ""),
		"in senderProfile":          []byte("{\"senderProfile\":\"reminders-sms\xc3\",\"to\":{\"phone\":\"" + testPhone + "\"}}"),
		"in a data value":           smsJSON("", "", `,"patientName":"Ren`+"\xe9"+`e"`),
		"in a member name":          smsJSON("", "", `,"name`+"\xfe"+`":"x"`),
		"an encoded surrogate":      smsJSON("", "", `,"patientName":"`+"\xed\xa0\x80"+`"`),
		"an escaped lone surrogate": smsJSON("", "", `,"patientName":"a\ud800b"`),
		"a lone low surrogate":      smsJSON("", "", `,"patientName":"\udc00"`),
	} {
		t.Run(name, func(t *testing.T) {
			a := e.do(request{method: "POST", path: "/v1/messages", token: sender, key: "k-" + name, body: body})
			assertProblem(t, o, a, 400, "request.invalid")
		})
	}
	t.Run("preview", func(t *testing.T) {
		a := e.do(request{method: "POST", path: "/v1/templates/appointment-reminder-sms/versions/1/preview", token: sender,
			body: []byte("{\"locale\":\"en\",\"data\":{\"clinicName\":\"C\xff\",\"date\":\"2026-10-01\",\"time\":\"09:30\"}}")})
		assertProblem(t, o, a, 400, "request.invalid")
	})
	t.Run("a paired surrogate escape is text", func(t *testing.T) {
		a := e.do(request{method: "POST", path: "/v1/messages", token: sender, key: "emoji",
			body: smsJSON("", "", `,"patientName":"\ud83d\ude00"`)})
		if a.status != 202 {
			t.Fatalf("%d %s", a.status, a.raw)
		}
	})
}

func TestCorrelationIDIsBounded(t *testing.T) {
	t.Parallel()
	e := newAPIEnv(t, envOptions{})
	o := loadOpenAPI(t, e.do(request{method: "GET", path: "/openapi.json"}).raw)
	sender := e.token("case-system")
	for i, id := range []string{"c", "order 42 / Zürich – 東京 😀", strings.Repeat("é", 128), strings.Repeat("x", 128)} {
		a := e.do(request{method: "POST", path: "/v1/messages", token: sender, key: fmt.Sprintf("ok-%d", i),
			body: with(smsBody(nil), "correlationId", id)})
		if a.status != 202 {
			t.Fatalf("correlationId %q: %d %s", id, a.status, a.raw)
		}
		view := e.do(request{method: "GET", path: "/v1/messages/" + a.json(t)["id"].(string), token: sender})
		o.check(t, "MessageView", view.raw)
		if got := view.json(t)["correlationId"]; got != id {
			t.Fatalf("the view holds correlationId %q, want %q", got, id)
		}
	}
	for name, id := range map[string]string{
		"empty": "", "129 characters": strings.Repeat("x", 129), "a million characters": strings.Repeat("x", 1000000),
		"a newline": "a\nb", "a tab": "a\tb", "NUL": "a\x00b", "DEL": "a\x7fb", "a C1 control": "a\u0085b",
		"a no-break space": "a\u00a0b", "a bidi override": "a\u202eb", "a zero-width joiner": "a\u200db",
	} {
		t.Run(name, func(t *testing.T) {
			a := e.do(request{method: "POST", path: "/v1/messages", token: sender, key: "bad-" + name,
				body: with(smsBody(nil), "correlationId", id)})
			assertProblem(t, o, a, 400, "request.invalid")
		})
	}
}

// canary is the text every hostile request carries; it is not a plain identifier, so no answer
// may repeat it. longCanary is a plain identifier over 64 characters, which no answer names
// either.
const (
	canary     = "zq-canary-7731"
	longCanary = "zqCanary7731xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
)

func TestAnswersNeverRepeatSubmittedText(t *testing.T) {
	t.Parallel()
	e := newAPIEnv(t, envOptions{})
	sender, operator := e.token("case-system"), e.token("operations-console")
	sms := func(k string, v any) map[string]any { return with(smsBody(nil), k, v) }
	data := func(extra map[string]any) map[string]any {
		d := map[string]any{"clinicName": "Riverside Clinic", "date": "2026-10-01", "time": "09:30"}
		for k, v := range extra {
			d[k] = v
		}
		return d
	}
	preview := "/v1/templates/appointment-reminder-sms/versions/1/preview"
	var reqs []request
	for _, c := range []string{canary, longCanary, canary + "\x01", "<" + canary + ">", strings.Repeat(canary, 20)} {
		for _, body := range []any{
			sms(c, 1), sms("to", map[string]any{"phone": testPhone, c: "x"}), sms("template", map[string]any{"id": c, "version": "1"}),
			sms("template", map[string]any{"id": "appointment-reminder-sms", "version": c}),
			sms("template", map[string]any{"id": "appointment-reminder-sms", "version": "1", c: "1"}),
			sms("senderProfile", c), sms("locale", c), sms("to", map[string]string{"phone": c}),
			sms("to", map[string]string{"email": c + "@example.org"}), sms("to", map[string]string{"peer": c}),
			sms("to", map[string]string{"fax": c}), sms("content", map[string]string{"text": c, c: c}),
			sms("expiresAt", c), sms("notBefore", c), sms("correlationId", strings.Repeat(c, 20)),
			sms("correlationId", c+"\n"), sms("data", c), sms("data", data(map[string]any{c: c})),
			sms("data", data(map[string]any{"patientName": c, "date": c, "time": c, "clinicName": strings.Repeat(c, 10)})),
			sms("data", data(map[string]any{"nested": map[string]any{c: []any{c}}})),
			sms("data", data(map[string]any{"n": strings.Repeat("9", 70), c: strings.Repeat("9", 70)})),
			map[string]any{"senderProfile": "reminders-sms", "to": map[string]string{"phone": testPhone}, "content": map[string]string{"text": c}},
			[]any{c}, c,
		} {
			reqs = append(reqs, request{method: "POST", path: "/v1/messages", token: sender, key: "k", body: body})
		}
		for _, raw := range []string{
			`{"` + c + `":1,"` + c + `":2}`, `{"senderProfile":"` + c + "\xff" + `"}`, `{"` + c + `":"\ud800"}`,
			`{"senderProfile":"` + c + `"`, `{"a":1} "` + c + `"`, `{"` + c + `"}`, c,
		} {
			reqs = append(reqs, request{method: "POST", path: "/v1/messages", token: sender, key: "k", body: []byte(raw)})
		}
		// Headers cannot carry control characters, paths and queries carry the canary escaped.
		h := strings.Map(func(r rune) rune {
			if r < 0x20 {
				return 'é'
			}
			return r
		}, c)
		p, q := url.PathEscape(c), url.QueryEscape(c)
		reqs = append(reqs,
			request{method: "POST", path: "/v1/messages", token: sender, key: h + "é", body: smsBody(nil)},
			request{method: "POST", path: "/v1/messages", token: sender, key: strings.Repeat(h, 10), body: smsBody(nil)},
			request{method: "POST", path: "/v1/messages", token: sender, key: "k", body: smsBody(nil), contentType: "text/" + h},
			request{method: "POST", path: "/v1/messages", token: h, key: "k", body: smsBody(nil)},
			request{method: "POST", path: "/v1/messages", token: sender + h, key: "k", body: smsBody(nil)},
			request{method: "POST", path: preview, token: sender, body: map[string]any{"locale": c, "data": data(nil)}},
			request{method: "POST", path: preview, token: sender, body: map[string]any{"locale": "en", c: 1}},
			request{method: "POST", path: preview, token: sender, body: map[string]any{"locale": "en", "data": data(map[string]any{c: 1})}},
			request{method: "POST", path: "/v1/templates/" + p + "/versions/1/preview", token: sender, body: map[string]any{"locale": "en"}},
			request{method: "POST", path: "/v1/templates/appointment-reminder-sms/versions/" + p + "/preview", token: sender, body: map[string]any{"locale": "en"}},
			request{method: "GET", path: "/v1/messages/" + p, token: sender},
			request{method: "POST", path: "/v1/messages/" + p + "/cancel", token: sender},
			request{method: "POST", path: "/v1/messages/" + p + "/settle", token: operator, body: map[string]any{"outcome": c}},
			request{method: "POST", path: "/v1/messages/" + p + "/settle", token: operator, body: map[string]any{c: "sent"}},
			request{method: "POST", path: "/v1/messages/" + p + "/retry", token: operator, body: map[string]any{c: 1}},
			request{method: "GET", path: "/v1/inbox?" + q + "=1", token: operator},
			request{method: "GET", path: "/v1/inbox?after=" + q, token: operator},
			request{method: "GET", path: "/v1/inbox?limit=" + q, token: operator},
			request{method: "GET", path: "/v2/" + p, token: sender},
			request{method: "POST", path: "/v1/provider-callbacks/" + p, body: map[string]string{c: c}},
			request{method: "POST", path: "/v1/provider-callbacks/sms-gateway", body: map[string]string{"id": c},
				header: map[string]string{"x-signature": h}},
		)
	}
	reqs = append(reqs, request{method: "ZQCANARY", path: "/v1/messages", token: sender})
	for i, r := range reqs {
		a := e.do(r)
		if raw, ok := r.body.([]byte); ok {
			r.body = string(raw)
		}
		if a.status < 400 && a.status != http.StatusAccepted {
			t.Errorf("request %d (%s %.80s) answered %d", i, r.method, r.path, a.status)
		}
		for name, values := range a.header {
			for _, v := range values {
				if strings.Contains(strings.ToLower(v), "canary") {
					t.Errorf("request %d (%s %.80s, body %.200v): header %s repeats the canary: %s", i, r.method, r.path, r.body, name, v)
				}
			}
		}
		if strings.Contains(strings.ToLower(string(a.raw)), "canary") {
			t.Errorf("request %d (%s %.80s, body %.200v): the answer repeats the canary: %s", i, r.method, r.path, r.body, a.raw)
		}
	}
}

func TestPlainMemberNamesAreNamed(t *testing.T) {
	t.Parallel()
	e := newAPIEnv(t, envOptions{})
	sender := e.token("case-system")
	for body, want := range map[string]string{
		`{"priority":"high"}`:                  "unknown member priority",
		`{"to":{"fax":"1"}}`:                   "unknown member to.fax",
		`{"senderProfile":1}`:                  "member senderProfile must be a string",
		`{"SenderProfile":"reminders-sms"}`:    "unknown member SenderProfile",
		`{"expiresAt":"tomorrow"}`:             "member expiresAt is not an RFC 3339 time",
		`{"to":{"phone":"1"},"to":{"peer":1}}`: "repeats a member name (at byte 20)",
	} {
		a := e.do(request{method: "POST", path: "/v1/messages", token: sender, key: "k", body: []byte(body)})
		if a.status != 400 || !strings.Contains(a.json(t)["detail"].(string), want) {
			t.Errorf("%s: %d %s, want a detail saying %q", body, a.status, a.raw, want)
		}
	}
}
