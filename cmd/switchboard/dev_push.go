package main

import (
	"fmt"
	"log/slog"
	"os"
	"path/filepath"

	"go.yaml.in/yaml/v3"

	"switchboard/engine/runtime"
	"switchboard/packages"
	"switchboard/providers/httpgw/mockpush"
)

// devModePush: a mock push gateway (FCM or APNs) over HTTP/2 and TLS, with a throw-away
// certificate and credential.
const devModePush = "push-mock"

// Parameters the dev runtime file gives a provider a push mock answers: the project and the
// bundle id the bundled adapters need.
const (
	devFCMProject = "switchboard-dev"
	devAPNsTopic  = "org.example.switchboard"
)

// pushMockFor is the mock push gateway a provider's runtime-snippet.yaml asks for by its
// authentication kind (google-service-account: FCM, apns-token: APNs), "" for none.
func pushMockFor(dir string) mockpush.Protocol {
	raw, err := os.ReadFile(filepath.Join(dir, "runtime-snippet.yaml"))
	if err != nil {
		return ""
	}
	var sf struct {
		Providers map[string]struct {
			Authentication struct {
				Kind string `yaml:"kind"`
			} `yaml:"authentication"`
		} `yaml:"providers"`
	}
	if yaml.Unmarshal(raw, &sf) != nil || len(sf.Providers) != 1 {
		return ""
	}
	for _, p := range sf.Providers {
		switch p.Authentication.Kind {
		case runtime.AuthGoogleServiceAccount:
			return mockpush.FCM
		case runtime.AuthAPNsToken:
			return mockpush.APNs
		}
	}
	return ""
}

// addPush points the provider at a mock push gateway of its own: the mock's credential and
// certificate become secret files of the dev runtime file, which trusts that certificate and
// authenticates as the real gateway wants (a service account's grant, an APNs provider token).
func (h *devHTTP) addPush(p *packages.Provider, protocol mockpush.Protocol, l devPaths, log *slog.Logger) error {
	s := mockpush.New(mockpush.Options{Protocol: protocol, Logger: log.With("component", "mock-"+string(protocol), "provider", p.ID)})
	url, err := s.Start("127.0.0.1:0")
	if err != nil {
		return environment("listener.failed", "mock "+string(protocol), err)
	}
	h.closers = append(h.closers, func() { _ = s.Close() })
	secret, err := s.SecretFile()
	if err != nil {
		return err
	}
	secretName, caName := p.ID+"-"+string(protocol)+"-key", p.ID+"-"+string(protocol)+"-ca.pem"
	for name, data := range map[string][]byte{secretName: secret, caName: s.CertificatePEM()} {
		if err := os.WriteFile(filepath.Join(l.secrets, name), data, 0o600); err != nil {
			return environment("dev.unwritable", l.secrets, err)
		}
	}
	entry := map[string]any{"kind": "http", "trustedCaFile": "./secrets/" + caName}
	if protocol == mockpush.FCM {
		entry["baseUrl"] = url + "/v1/"
		entry["authentication"] = map[string]string{"kind": runtime.AuthGoogleServiceAccount, "serviceAccountRef": "secret:file/" + secretName}
		entry["parameters"] = map[string]string{"project": devFCMProject}
	} else {
		entry["baseUrl"] = url + "/"
		entry["http2"] = true
		entry["authentication"] = map[string]string{"kind": runtime.AuthAPNsToken, "keyRef": "secret:file/" + secretName,
			"keyId": mockpush.KeyID, "teamId": mockpush.TeamID}
		entry["parameters"] = map[string]string{"topic": devAPNsTopic}
	}
	h.entries[p.ID] = entry
	h.providers[p.ID] = devProvider{Mode: devModePush, URL: entry["baseUrl"].(string)}
	h.lines = append(h.lines, fmt.Sprintf("%s: mock %s at %s (HTTP/2 over TLS, a throw-away certificate and credential; "+
		"device tokens starting %q are unregistered)", p.ID, pushGatewayName(protocol), url, mockpush.DeadPrefix))
	return nil
}

// pushGatewayName names a push mock's gateway for the banner.
func pushGatewayName(protocol mockpush.Protocol) string {
	if protocol == mockpush.FCM {
		return "Firebase Cloud Messaging"
	}
	return "Apple Push Notification service"
}
