package main

import (
	"os"
	"path/filepath"

	"switchboard/engine"
	"switchboard/engine/stdwebhook"
	"switchboard/engine/webhooks/receiver"
)

// startBenchReceiver starts the event endpoint of `switchboard bench --webhooks`: one local
// receiver subscribed to message.status of every access profile, checking every signature. It
// records the endpoint in session, for writeDevRuntime.
func startBenchReceiver(l devPaths, session *devSession) (*receiver.Receiver, error) {
	secret, err := os.ReadFile(filepath.Join(l.secrets, devWebhookSecret))
	if err != nil {
		return nil, environment("bench.unwritable", l.secrets, err)
	}
	key, ok := stdwebhook.DecodeSecret(string(secret))
	if !ok {
		return nil, refused("bench.invalid", devWebhookSecret, "not a whsec_ secret")
	}
	rc := receiver.New(receiver.Options{Key: key, KeepLags: true, Keep: 1})
	url, err := rc.Start("127.0.0.1:0")
	if err != nil {
		return nil, environment("listener.failed", "webhook receiver", err)
	}
	session.WebhookReceiver = &devReceiver{URL: url, Events: url + "events", Endpoint: devWebhookEndpoint}
	session.webhookEvents = []string{engine.EventMessageStatus}
	return rc, nil
}
