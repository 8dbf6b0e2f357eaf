package packages

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// brokenLayouts break the folders and files around the manifest: templates, schemas, samples,
// parts, providers, scripts and symbolic links.
func brokenLayouts() []brokenCase {
	return []brokenCase{
		{
			name: "unknown key in template.yaml",
			brk: func(t *testing.T, dir string) {
				writeFile(t, dir, emailDir+"/template.yaml", "channel: email\nlocales: [en, fr]\nparts: [subject, text, html]\nfallback: en\n")
			},
			code: CodeTemplateInvalid, path: emailDir + "/template.yaml", lineText: "fallback", member: "fallback",
		},
		{
			name: "unknown key in provider.yaml capabilities",
			brk: func(t *testing.T, dir string) {
				replaceIn(t, dir, gatewayDir+"/provider.yaml", "concurrencyLimit: 128}", "concurrencyLimit: 128, batching: true}")
			},
			code: CodeProviderInvalid, path: gatewayDir + "/provider.yaml", lineText: "batching", member: "capabilities.batching",
		},
		{
			name: "undeclared template version on disk",
			brk: func(t *testing.T, dir string) {
				copyTree(t, filepath.Join(dir, peerDir), filepath.Join(dir, "templates/case-update/2"))
			},
			code: CodePackageInvalid, path: "templates/case-update/2",
		},
		{
			name: "undeclared template on disk",
			brk: func(t *testing.T, dir string) {
				copyTree(t, filepath.Join(dir, peerDir), filepath.Join(dir, "templates/ghost/1"))
			},
			code: CodePackageInvalid, path: "templates/ghost",
		},
		{
			name: "undeclared locale folder",
			brk: func(t *testing.T, dir string) {
				copyTree(t, filepath.Join(dir, emailDir, "en"), filepath.Join(dir, emailDir, "de"))
			},
			code: CodeTemplateInvalid, path: emailDir + "/de",
		},
		{
			name: "declared locale folder missing",
			brk: func(t *testing.T, dir string) {
				remove(t, dir, emailDir+"/fr")
			},
			code: CodeTemplateInvalid, path: emailDir + "/fr",
		},
		{
			name: "missing part file",
			brk: func(t *testing.T, dir string) {
				remove(t, dir, emailDir+"/fr/html.tmpl")
			},
			code: CodeTemplateInvalid, path: emailDir + "/fr/html.tmpl",
		},
		{
			name: "undeclared part file",
			brk: func(t *testing.T, dir string) {
				writeFile(t, dir, smsDir+"/en/footer.tmpl", "STOP to opt out")
			},
			code: CodeTemplateInvalid, path: smsDir + "/en/footer.tmpl",
		},
		{
			name: "schema with a remote $ref",
			brk: func(t *testing.T, dir string) {
				writeFile(t, dir, smsDir+"/schema.json", `{"$ref": "https://schemas.example/reminder.json"}`)
			},
			code: CodeTemplateInvalid, path: smsDir + "/schema.json",
		},
		{
			name: "schema with a relative $ref to another file",
			brk: func(t *testing.T, dir string) {
				writeFile(t, dir, smsDir+"/schema.json", `{"properties": {"date": {"$ref": "common.json#/$defs/date"}}}`)
			},
			code: CodeTemplateInvalid, path: smsDir + "/schema.json",
		},
		{
			name: "schema with a $ref to a meta-schema",
			brk: func(t *testing.T, dir string) {
				writeFile(t, dir, smsDir+"/schema.json", `{"$ref": "https://json-schema.org/draft/2020-12/schema"}`)
			},
			code: CodeTemplateInvalid, path: smsDir + "/schema.json",
		},
		{
			name: "schema that does not compile",
			brk: func(t *testing.T, dir string) {
				writeFile(t, dir, smsDir+"/schema.json", `{"type": 5}`)
			},
			code: CodeTemplateInvalid, path: smsDir + "/schema.json",
		},
		{
			name: "schema of another draft",
			brk: func(t *testing.T, dir string) {
				writeFile(t, dir, smsDir+"/schema.json", `{"$schema": "http://json-schema.org/draft-07/schema#"}`)
			},
			code: CodeTemplateInvalid, path: smsDir + "/schema.json",
		},
		{
			name: "schema that is not JSON",
			brk: func(t *testing.T, dir string) {
				writeFile(t, dir, smsDir+"/schema.json", `{"type": "object",}`)
			},
			code: CodeTemplateInvalid, path: smsDir + "/schema.json",
		},
		{
			name: "sample that does not validate",
			brk: func(t *testing.T, dir string) {
				replaceIn(t, dir, smsDir+"/sample.json", `"09:30"`, `"9h30"`)
			},
			code: CodeDataInvalid, path: smsDir + "/sample.json",
		},
		{
			name: "sample that is not JSON",
			brk: func(t *testing.T, dir string) {
				writeFile(t, dir, smsDir+"/sample.json", `{"clinicName": `)
			},
			code: CodeDataInvalid, path: smsDir + "/sample.json",
		},
		{
			name: "template reads a key the sample lacks",
			brk: func(t *testing.T, dir string) {
				writeFile(t, dir, emailDir+"/fr/text.tmpl", "Bonjour {{.patientName}},\n\nVotre médecin : {{.doctor}}\n")
			},
			code: CodeRenderRefused, path: emailDir + "/fr/text.tmpl", lineText: "{{.doctor}}",
		},
		{
			name: "peer body that is not JSON",
			brk: func(t *testing.T, dir string) {
				writeFile(t, dir, peerDir+"/en/body.tmpl", `{"caseId": {{.caseId}}}`)
			},
			code: CodeRenderRefused, path: peerDir + "/en/body.tmpl",
		},
		{
			name: "template syntax error",
			brk: func(t *testing.T, dir string) {
				writeFile(t, dir, smsDir+"/en/text.tmpl", "{{.clinicName}}:\nreminder on {{date .date}\n")
			},
			code: CodeTemplateInvalid, path: smsDir + "/en/text.tmpl", lineText: "reminder on",
		},
		{
			name: "template calls an unknown function",
			brk: func(t *testing.T, dir string) {
				writeFile(t, dir, smsDir+"/en/text.tmpl", "{{.clinicName}}\n{{env \"HOME\"}}\n")
			},
			code: CodeTemplateInvalid, path: smsDir + "/en/text.tmpl", lineText: "env",
		},
		{
			name: "html part in an ambiguous context",
			brk: func(t *testing.T, dir string) {
				writeFile(t, dir, emailDir+"/en/html.tmpl", "<p>Hello</p>\n<a href=\"{{.clinicName}}\n")
			},
			code: CodeTemplateInvalid, path: emailDir + "/en/html.tmpl",
		},
		{
			name: "bad channel in template.yaml",
			brk: func(t *testing.T, dir string) {
				replaceIn(t, dir, smsDir+"/template.yaml", "channel: sms", "channel: fax")
			},
			code: CodeTemplateInvalid, path: smsDir + "/template.yaml", lineText: "fax", member: "channel",
		},
		{
			name: "sms template with an html part",
			brk: func(t *testing.T, dir string) {
				replaceIn(t, dir, smsDir+"/template.yaml", "parts: [text]", "parts: [text, html]")
			},
			code: CodeTemplateInvalid, path: smsDir + "/template.yaml", lineText: "parts", member: "parts",
		},
		{
			name: "contentType on an email template",
			brk: func(t *testing.T, dir string) {
				replaceIn(t, dir, emailDir+"/template.yaml", "channel: email\n", "channel: email\ncontentType: text/plain\n")
			},
			code: CodeTemplateInvalid, path: emailDir + "/template.yaml", lineText: "contentType", member: "contentType",
		},
		{
			name: "bad locale tag",
			brk: func(t *testing.T, dir string) {
				replaceIn(t, dir, smsDir+"/template.yaml", "locales: [en]", "locales: [EN_us]")
			},
			code: CodeTemplateInvalid, path: smsDir + "/template.yaml", lineText: "locales", member: "locales",
		},
		{
			name: "symbolic link inside the package",
			brk: func(t *testing.T, dir string) {
				if err := os.Symlink("/etc/hostname", filepath.Join(dir, emailDir, "en", "notes.txt")); err != nil {
					t.Fatal(err)
				}
			},
			code: CodePackageInvalid, path: emailDir + "/en/notes.txt",
		},
		{
			name: "symbolic link in place of a layout file",
			brk: func(t *testing.T, dir string) {
				remove(t, dir, smsDir+"/schema.json")
				if err := os.Symlink("../../appointment-reminder/1/schema.json", filepath.Join(dir, smsDir, "schema.json")); err != nil {
					t.Fatal(err)
				}
			},
			code: CodePackageInvalid, path: smsDir + "/schema.json",
		},
		{
			name: "script over 64 KiB",
			brk: func(t *testing.T, dir string) {
				writeFile(t, dir, gatewayDir+"/adapter.js", "function prepare(m, p) { return {target: \"x\"}; }\n//"+strings.Repeat("x", 64<<10)+"\n")
			},
			code: CodeProviderInvalid, path: gatewayDir + "/adapter.js",
		},
		{
			name: "http provider without provider.yaml",
			brk: func(t *testing.T, dir string) {
				remove(t, dir, gatewayDir+"/provider.yaml")
			},
			code: CodeProviderInvalid, path: gatewayDir + "/provider.yaml",
		},
		{
			name: "http provider without a folder",
			brk: func(t *testing.T, dir string) {
				remove(t, dir, gatewayDir)
			},
			code: CodeProviderInvalid, path: gatewayDir + "/provider.yaml",
		},
		{
			name: "script named in provider.yaml missing",
			brk: func(t *testing.T, dir string) {
				replaceIn(t, dir, gatewayDir+"/provider.yaml", "script: adapter.js", "script: gateway.js")
			},
			code: CodeProviderInvalid, path: gatewayDir + "/gateway.js",
		},
		{
			name: "script path leaving the provider folder",
			brk: func(t *testing.T, dir string) {
				replaceIn(t, dir, gatewayDir+"/provider.yaml", "script: adapter.js", "script: ../peers/adapter.js")
			},
			code: CodeProviderInvalid, path: gatewayDir + "/provider.yaml", lineText: "script:", member: "script",
		},
		{
			name: "request method not allowed",
			brk: func(t *testing.T, dir string) {
				replaceIn(t, dir, gatewayDir+"/provider.yaml", "method: post", "method: delete")
			},
			code: CodeProviderInvalid, path: gatewayDir + "/provider.yaml", lineText: "method", member: "request.method",
		},
		{
			name: "request header owned by the runtime",
			brk: func(t *testing.T, dir string) {
				replaceIn(t, dir, gatewayDir+"/provider.yaml", "headers: [content-type,", "headers: [authorization, content-type,")
			},
			code: CodeProviderInvalid, path: gatewayDir + "/provider.yaml", lineText: "authorization", member: "request.headers",
		},
		{
			name: "smtp provider with a folder",
			brk: func(t *testing.T, dir string) {
				writeFile(t, dir, "providers/mail-relay/provider.yaml", "script: adapter.js\n")
			},
			code: CodeProviderInvalid, path: "providers/mail-relay",
		},
		{
			name: "folder of an undeclared provider",
			brk: func(t *testing.T, dir string) {
				copyTree(t, filepath.Join(dir, gatewayDir), filepath.Join(dir, "providers/other-gateway"))
			},
			code: CodeProviderInvalid, path: "providers/other-gateway",
		},
	}
}
