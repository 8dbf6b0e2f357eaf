// Package mockpush stands in for the two push gateways in `switchboard dev` and in tests:
// Firebase Cloud Messaging's HTTP v1 API with the OAuth 2.0 token endpoint a service account
// exchanges its JWT grant at, and the Apple Push Notification service's provider API. Each
// Server speaks one of them over TLS with HTTP/2, with a throw-away certificate of its own
// (CertificatePEM) that the dev runtime file trusts, and checks what the real gateway checks of
// the credential: the grant's RS256 signature, the access token, the provider token's ES256
// signature, key id, team id and age.
//
// A device token that starts with "dead" is one the gateway no longer knows: FCM answers 404
// UNREGISTERED, APNs 410 Unregistered, so that a dev stack shows a device.unregistered event.
// Every other well-formed notification is accepted and recorded (Sent).
package mockpush
