package packages

import "testing"

// brokenManifests break switchboard.yaml: closed mappings, fields, defaults and cross-references.
func brokenManifests() []brokenCase {
	return []brokenCase{
		{
			name: "unknown key in a sender profile",
			brk: func(t *testing.T, dir string) {
				replaceIn(t, dir, manifestPath, "    maximumSegments: 3\n", "    maximumSegments: 3\n    colour: blue\n")
			},
			code: CodePackageInvalid, path: manifestPath, lineText: "colour: blue", member: "senderProfiles[0].colour",
		},
		{
			name: "unknown top-level key",
			brk: func(t *testing.T, dir string) {
				replaceIn(t, dir, manifestPath, "kind: Package\n", "kind: Package\nlabels: {team: a}\n")
			},
			code: CodePackageInvalid, path: manifestPath, lineText: "labels:", member: "labels",
		},
		{
			name: "unknown key in retry",
			brk: func(t *testing.T, dir string) {
				replaceIn(t, dir, manifestPath, "maximumDelaySeconds: 3600}", "maximumDelaySeconds: 3600, jitter: 2}")
			},
			code: CodePackageInvalid, path: manifestPath, lineText: "jitter", member: "senderProfiles[0].retry.jitter",
		},
		{
			name: "bad identifier",
			brk: func(t *testing.T, dir string) {
				replaceIn(t, dir, manifestPath, "id: reminders-email", "id: Reminders_Email")
			},
			code: CodePackageInvalid, path: manifestPath, lineText: "Reminders_Email", member: "senderProfiles[1].id",
		},
		{
			name: "identifier ending with a dash",
			brk: func(t *testing.T, dir string) {
				replaceIn(t, dir, manifestPath, "- id: operations", "- id: operations-")
			},
			code: CodePackageInvalid, path: manifestPath, lineText: "id: operations-", member: "accessProfiles[1].id",
		},
		{
			name: "duplicate provider id",
			brk: func(t *testing.T, dir string) {
				replaceIn(t, dir, manifestPath, "  - {id: peers, kind: peer}\n", "  - {id: peers, kind: peer}\n  - {id: peers, kind: peer}\n")
			},
			code: CodePackageInvalid, path: manifestPath, lineText: "", member: "providers[3].id",
		},
		{
			name: "declared template version missing on disk",
			brk: func(t *testing.T, dir string) {
				replaceIn(t, dir, manifestPath, "  - {id: case-update, version: \"1\"}\n",
					"  - {id: case-update, version: \"1\"}\n  - {id: case-update, version: \"2\"}\n")
			},
			code: CodePackageInvalid, path: manifestPath, lineText: `version: "2"`, member: "templates[3].version",
		},
		{
			name: "version not quoted",
			brk: func(t *testing.T, dir string) {
				replaceIn(t, dir, manifestPath, `{id: case-update, version: "1"}`, `{id: case-update, version: 1}`)
			},
			code: CodePackageInvalid, path: manifestPath, lineText: "id: case-update", member: "templates[2].version",
		},
		{
			name: "idempotentSubmit on an smtp provider",
			brk: func(t *testing.T, dir string) {
				replaceIn(t, dir, manifestPath, "{id: mail-relay, kind: smtp}", "{id: mail-relay, kind: smtp, idempotentSubmit: true}")
			},
			code: CodePackageInvalid, path: manifestPath, lineText: "id: mail-relay", member: "providers[1].idempotentSubmit",
		},
		{
			name: "sender profile on a provider that cannot carry its channel",
			brk: func(t *testing.T, dir string) {
				replaceIn(t, dir, manifestPath, "provider: mail-relay", "provider: peers")
			},
			code: CodePackageInvalid, path: manifestPath, lineText: "provider: peers", member: "senderProfiles[1].provider",
		},
		{
			name: "fallback provider that cannot carry the channel",
			brk: func(t *testing.T, dir string) {
				replaceIn(t, dir, manifestPath, "    provider: sms-gateway\n", "    provider: sms-gateway\n    fallbackProviders: [mail-relay]\n")
			},
			code: CodePackageInvalid, path: manifestPath, lineText: "fallbackProviders", member: "senderProfiles[0].fallbackProviders",
		},
		{
			name: "unknown provider",
			brk: func(t *testing.T, dir string) {
				replaceIn(t, dir, manifestPath, "provider: peers", "provider: pigeons")
			},
			code: CodePackageInvalid, path: manifestPath, lineText: "pigeons", member: "senderProfiles[2].provider",
		},
		{
			name: "onUncertain retry without idempotence",
			brk: func(t *testing.T, dir string) {
				replaceIn(t, dir, manifestPath, "onUncertain: hold", "onUncertain: retry")
			},
			code: CodePackageInvalid, path: manifestPath, lineText: "onUncertain: retry", member: "senderProfiles[0].onUncertain",
		},
		{
			name: "client in two access profiles",
			brk: func(t *testing.T, dir string) {
				replaceIn(t, dir, manifestPath, "clients: [operations-console]", "clients: [operations-console, case-system]")
			},
			code: CodePackageInvalid, path: manifestPath, lineText: "operations-console", member: "accessProfiles[1].clients",
		},
		{
			name: "access profile naming an unknown template",
			brk: func(t *testing.T, dir string) {
				replaceIn(t, dir, manifestPath, "templates: [appointment-reminder,", "templates: [discharge-letter, appointment-reminder,")
			},
			code: CodePackageInvalid, path: manifestPath, lineText: "discharge-letter", member: "accessProfiles[0].templates",
		},
		{
			name: "operator with sender profiles",
			brk: func(t *testing.T, dir string) {
				replaceIn(t, dir, manifestPath, "    clients: [operations-console]\n", "    clients: [operations-console]\n    senderProfiles: [reminders-sms]\n")
			},
			code: CodePackageInvalid, path: manifestPath, lineText: "senderProfiles: [reminders-sms]", member: "accessProfiles[1].senderProfiles",
		},
		{
			name: "receiver allowed direct content",
			brk: func(t *testing.T, dir string) {
				replaceIn(t, dir, manifestPath, "    clients: [inbox-reader]\n", "    clients: [inbox-reader]\n    allowDirectContent: true\n")
			},
			code: CodePackageInvalid, path: manifestPath, lineText: "allowDirectContent: true", member: "accessProfiles[2].allowDirectContent",
		},
		{
			name: "receiver reading an unknown provider",
			brk: func(t *testing.T, dir string) {
				replaceIn(t, dir, manifestPath, "    clients: [inbox-reader]\n", "    clients: [inbox-reader]\n    inboxProviders: [fax-gateway]\n")
			},
			code: CodePackageInvalid, path: manifestPath, lineText: "inboxProviders: [fax-gateway]", member: "accessProfiles[2].inboxProviders",
		},
		{
			name: "sender with inboxProviders",
			brk: func(t *testing.T, dir string) {
				replaceIn(t, dir, manifestPath, "    clients: [case-system]\n", "    clients: [case-system]\n    inboxProviders: [sms-gateway]\n")
			},
			code: CodePackageInvalid, path: manifestPath, lineText: "inboxProviders: [sms-gateway]", member: "accessProfiles[0].inboxProviders",
		},
		{
			name: "burst of zero",
			brk: func(t *testing.T, dir string) {
				replaceIn(t, dir, manifestPath, "burst: 20000", "burst: 0")
			},
			code: CodePackageInvalid, path: manifestPath, lineText: "burst: 0", member: "accessProfiles[0].burst",
		},
		{
			name: "sms sender profile without maximumSegments",
			brk: func(t *testing.T, dir string) {
				replaceIn(t, dir, manifestPath, "    maximumSegments: 3\n", "")
			},
			code: CodePackageInvalid, path: manifestPath, lineText: "id: reminders-sms", member: "senderProfiles[0].maximumSegments",
		},
		{
			name: "maximumSegments out of range",
			brk: func(t *testing.T, dir string) {
				replaceIn(t, dir, manifestPath, "maximumSegments: 3", "maximumSegments: 11")
			},
			code: CodePackageInvalid, path: manifestPath, lineText: "maximumSegments: 11", member: "senderProfiles[0].maximumSegments",
		},
		{
			name: "maximumSegments on an email profile",
			brk: func(t *testing.T, dir string) {
				replaceIn(t, dir, manifestPath, "    sender: notices@example.org\n", "    sender: notices@example.org\n    maximumSegments: 2\n")
			},
			code: CodePackageInvalid, path: manifestPath, lineText: "maximumSegments: 2", member: "senderProfiles[1].maximumSegments",
		},
		{
			name: "bad E.164 sender",
			brk: func(t *testing.T, dir string) {
				replaceIn(t, dir, manifestPath, `sender: "+15550100"`, `sender: "+1-555-0100"`)
			},
			code: CodePackageInvalid, path: manifestPath, lineText: "+1-555-0100", member: "senderProfiles[0].sender",
		},
		{
			name: "email sender with a display name",
			brk: func(t *testing.T, dir string) {
				replaceIn(t, dir, manifestPath, "sender: notices@example.org", `sender: "Clinic <notices@example.org>"`)
			},
			code: CodePackageInvalid, path: manifestPath, lineText: "Clinic <", member: "senderProfiles[1].sender",
		},
		{
			name: "sender on a peer profile",
			brk: func(t *testing.T, dir string) {
				replaceIn(t, dir, manifestPath, "    provider: peers\n", "    provider: peers\n    sender: me\n")
			},
			code: CodePackageInvalid, path: manifestPath, lineText: "sender: me", member: "senderProfiles[2].sender",
		},
		{
			name: "expiry out of range",
			brk: func(t *testing.T, dir string) {
				replaceIn(t, dir, manifestPath, "defaultExpirySeconds: 86400", "defaultExpirySeconds: 30")
			},
			code: CodePackageInvalid, path: manifestPath, lineText: "defaultExpirySeconds: 30", member: "senderProfiles[0].defaultExpirySeconds",
		},
		{
			name: "retry given without all its members",
			brk: func(t *testing.T, dir string) {
				replaceIn(t, dir, manifestPath, "retry: {maximumAttempts: 10, initialDelaySeconds: 5, maximumDelaySeconds: 600}", "retry: {maximumAttempts: 10}")
			},
			code: CodePackageInvalid, path: manifestPath, lineText: "retry: {maximumAttempts: 10}", member: "senderProfiles[2].retry.initialDelaySeconds",
		},
		{
			name: "retry maximum below its initial delay",
			brk: func(t *testing.T, dir string) {
				replaceIn(t, dir, manifestPath, "maximumDelaySeconds: 600}", "maximumDelaySeconds: 4}")
			},
			code: CodePackageInvalid, path: manifestPath, lineText: "maximumDelaySeconds: 4}", member: "senderProfiles[2].retry.maximumDelaySeconds",
		},
		{
			name: "wrong apiVersion",
			brk: func(t *testing.T, dir string) {
				replaceIn(t, dir, manifestPath, "apiVersion: switchboard/v1", "apiVersion: switchboard/v2")
			},
			code: CodePackageInvalid, path: manifestPath, lineText: "apiVersion", member: "apiVersion",
		},
		{
			name: "wrong kind",
			brk: func(t *testing.T, dir string) {
				replaceIn(t, dir, manifestPath, "kind: Package", "kind: Runtime")
			},
			code: CodePackageInvalid, path: manifestPath, lineText: "kind: Runtime", member: "kind",
		},
		{
			name: "YAML syntax error",
			brk: func(t *testing.T, dir string) {
				replaceIn(t, dir, manifestPath, "    channel: email\n", "    channel: email: sms\n")
			},
			code: CodePackageInvalid, path: manifestPath, lineText: "channel: email: sms",
		},
		{
			name: "manifest missing",
			brk: func(t *testing.T, dir string) {
				remove(t, dir, manifestPath)
			},
			code: CodePackageInvalid, path: manifestPath,
		},
	}
}
