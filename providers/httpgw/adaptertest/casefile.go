package adaptertest

import (
	"bytes"
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/rogpeppe/go-internal/txtar"

	"switchboard/engine"
)

// A case file is a txtar archive. Its comment is free text. Its sections ("files") are:
//
//	message.yaml              input: the message and sender profile every send carries
//	setup.yaml                input, optional: clock, environment, test secrets, idempotentSubmit
//	sendN/request.http        expected: the request the gateway received ("(no request)" if none)
//	sendN/answer.http         input: the gateway's answer to send N; its position is when send N happens
//	sendN/outcome.yaml        expected: the outcome of send N
//	callbackN/request.http    input: callback N; its position is when it arrives
//	callbackN/receipts.yaml   expected: verification, receipts and their effect on the ledger
//	report.yaml               expected: the ledger after the last event (written when there are callbacks)
//
// N counts from 1 in file order, separately for sends and callbacks. Expected sections are
// written by update, each beside its event.

// Default clock of a case without setup.yaml `now`.
var defaultNow = time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)

// eventKind says whether an event is a send or a callback.
type eventKind string

const (
	kindSend     eventKind = "send"
	kindCallback eventKind = "callback"
)

// event is one send or callback, in file order.
type event struct {
	kind  eventKind
	n     int
	input []byte // answer.http of a send, request.http of a callback
}

// inputName and the expected section names of an event.
func (e event) inputName() string {
	if e.kind == kindSend {
		return e.prefix() + "answer.http"
	}
	return e.prefix() + "request.http"
}

func (e event) prefix() string { return string(e.kind) + strconv.Itoa(e.n) + "/" }

// caseFile is one parsed golden case.
type caseFile struct {
	path     string
	comment  []byte
	message  *messageSpec // nil without message.yaml
	setup    setupSpec
	rawMsg   []byte
	rawSetup []byte // nil without setup.yaml
	events   []event
	want     map[string]string // expected sections by name
}

// messageSpec is message.yaml: the message as prepare sees it, and its sender profile.
type messageSpec struct {
	MessageID      string            `yaml:"messageId"`
	Generation     int               `yaml:"generation"`
	Channel        string            `yaml:"channel"`
	Recipient      string            `yaml:"recipient"`
	Parts          map[string]string `yaml:"parts"`
	IdempotencyKey string            `yaml:"idempotencyKey"`
	Profile        struct {
		ID              string `yaml:"id"`
		Channel         string `yaml:"channel"`
		Sender          string `yaml:"sender"`
		MaximumSegments int    `yaml:"maximumSegments"`
	} `yaml:"profile"`
}

// setupSpec is setup.yaml.
type setupSpec struct {
	// Now is where the case's clock starts.
	Now time.Time `yaml:"now"`
	// Env substitutes ${NAME} in the snippet's baseUrl, verifier url and parameters.
	Env map[string]string `yaml:"env"`
	// IdempotentSubmit is the package's flag for the provider: prepare sees idempotencyKey.
	IdempotentSubmit bool `yaml:"idempotentSubmit"`
	// CallbackURL is what prepare reads as profile.callbackUrl (null when empty): the URL
	// a runtime with publicUrl would give.
	CallbackURL string `yaml:"callbackUrl"`
	// BaseURL and Verifier replace the snippet's (for adapters without runtime-snippet.yaml).
	BaseURL  string        `yaml:"baseUrl"`
	Verifier *verifierSpec `yaml:"verifier"`
	// Secret is the test secret of the verifier: HMAC key, Twilio or Plivo auth token, whsec_
	// secret, Vonage signature secret, Slack signing secret, Mailgun signing key, path token, or
	// USER:PASSWORD for basic.
	Secret string `yaml:"secret"`
	// PrivateKey (PEM: P-256 for ecdsa-p256, PKCS #8 Ed25519 for ed25519) signs callbacks; the
	// verifier gets its public key.
	PrivateKey string `yaml:"privateKey"`
	// PublicKey (base64 DER or PEM; for ed25519 also the base64 of its 32 bytes) replaces the
	// snippet's, for pre-signed callbacks.
	PublicKey string `yaml:"publicKey"`
}

// verifierSpec is a callbackVerifier as a runtime file writes it; references are ignored.
type verifierSpec struct {
	Kind            string `yaml:"kind"`
	Header          string `yaml:"header"`
	Encoding        string `yaml:"encoding"`
	URL             string `yaml:"url"`
	SignatureMethod string `yaml:"signatureMethod"`
	PublicKey       string `yaml:"publicKey"`
	SignatureHeader string `yaml:"signatureHeader"`
	TimestampHeader string `yaml:"timestampHeader"`
	SecretRef       string `yaml:"secretRef"`
	TokenRef        string `yaml:"tokenRef"`
	PublicKeyRef    string `yaml:"publicKeyRef"`
	UsernameRef     string `yaml:"usernameRef"`
	PasswordRef     string `yaml:"passwordRef"`
}

var sectionPattern = regexp.MustCompile(`^(send|callback)([1-9][0-9]{0,3})/(answer\.http|request\.http|outcome\.yaml|receipts\.yaml)$`)

// parseCase reads a case file. Every problem names the file and the section.
func parseCase(path string, data []byte) (*caseFile, error) {
	data = bytes.ReplaceAll(data, []byte("\r\n"), []byte("\n"))
	ar := txtar.Parse(data)
	c := &caseFile{path: path, comment: ar.Comment, want: map[string]string{}, setup: setupSpec{Now: defaultNow}}
	seen := map[string]bool{}
	next := map[eventKind]int{kindSend: 1, kindCallback: 1}
	var pendingWant []string // expected sections naming an event not yet seen
	for _, f := range ar.Files {
		if seen[f.Name] {
			return nil, fmt.Errorf("%s: section %s appears twice", path, f.Name)
		}
		seen[f.Name] = true
		switch f.Name {
		case "message.yaml":
			c.rawMsg = f.Data
			c.message = &messageSpec{}
			if err := decodeStrict(f.Data, c.message); err != nil {
				return nil, fmt.Errorf("%s: message.yaml: %w", path, err)
			}
			continue
		case "setup.yaml":
			c.rawSetup = f.Data
			if err := decodeStrict(f.Data, &c.setup); err != nil {
				return nil, fmt.Errorf("%s: setup.yaml: %w", path, err)
			}
			if c.setup.Now.IsZero() {
				c.setup.Now = defaultNow
			}
			continue
		case "report.yaml":
			c.want[f.Name] = string(f.Data)
			continue
		}
		m := sectionPattern.FindStringSubmatch(f.Name)
		if m == nil {
			return nil, fmt.Errorf("%s: unknown section %q (see the case format in examples/adapters/README.md)", path, f.Name)
		}
		kind, n, leaf := eventKind(m[1]), atoi(m[2]), m[3]
		input := kind == kindSend && leaf == "answer.http" || kind == kindCallback && leaf == "request.http"
		if !input {
			if kind == kindSend && leaf != "request.http" && leaf != "outcome.yaml" || kind == kindCallback && leaf != "receipts.yaml" {
				return nil, fmt.Errorf("%s: section %q: a %s has no %s", path, f.Name, kind, leaf)
			}
			c.want[f.Name] = string(f.Data)
			if n >= next[kind] {
				pendingWant = append(pendingWant, f.Name)
			}
			continue
		}
		if n != next[kind] {
			return nil, fmt.Errorf("%s: section %q: %ss are numbered 1, 2, … in file order; want %s%d", path, f.Name, kind, kind, next[kind])
		}
		next[kind]++
		c.events = append(c.events, event{kind: kind, n: n, input: f.Data})
	}
	for _, name := range pendingWant {
		m := sectionPattern.FindStringSubmatch(name)
		if atoi(m[2]) >= next[eventKind(m[1])] {
			return nil, fmt.Errorf("%s: section %q names a %s that has no input section", path, name, m[1])
		}
	}
	if next[kindSend] > 1 && c.message == nil {
		return nil, fmt.Errorf("%s: a case with sends needs message.yaml", path)
	}
	if len(c.events) == 0 {
		return nil, fmt.Errorf("%s: no send (sendN/answer.http) and no callback (callbackN/request.http)", path)
	}
	return c, nil
}

// outbound is the engine.Outbound of send n.
func (c *caseFile) outbound(n int) *engine.Outbound {
	m := c.message
	gen := m.Generation
	if gen == 0 {
		gen = 1
	}
	channel, pchannel := m.Channel, m.Profile.Channel
	if channel == "" {
		channel = pchannel
	}
	if pchannel == "" {
		pchannel = channel
	}
	parts := make(map[string]string, len(m.Parts))
	for k, v := range m.Parts {
		parts[k] = v
	}
	return &engine.Outbound{
		MessageID: m.MessageID, Generation: gen, Attempt: n, Channel: engine.Channel(channel),
		Recipient: m.Recipient, Parts: parts, IdempotencyKey: m.IdempotencyKey,
		SenderProfile: engine.SenderProfileView{ID: m.Profile.ID, Channel: engine.Channel(pchannel),
			Sender: m.Profile.Sender, MaximumSegments: m.Profile.MaximumSegments},
	}
}

// sectionOrder lists every expected or produced section in event order: each send's outcome
// then its request, each callback's receipts, report.yaml last; sections that name no event
// of the case come at the end.
func (c *caseFile) sectionOrder(got map[string]string) []string {
	var names []string
	seen := map[string]bool{}
	add := func(name string) {
		_, expected := c.want[name]
		_, made := got[name]
		if (expected || made) && !seen[name] {
			seen[name] = true
			names = append(names, name)
		}
	}
	for _, e := range c.events {
		if e.kind == kindSend {
			add(e.prefix() + "outcome.yaml")
			add(e.prefix() + "request.http")
			continue
		}
		add(e.prefix() + "receipts.yaml")
	}
	add("report.yaml")
	var rest []string
	for _, m := range []map[string]string{c.want, got} {
		for name := range m {
			if !seen[name] {
				seen[name] = true
				rest = append(rest, name)
			}
		}
	}
	sort.Strings(rest)
	return append(names, rest...)
}

// hasCallbacks reports whether the case delivers any callback.
func (c *caseFile) hasCallbacks() bool {
	for _, e := range c.events {
		if e.kind == kindCallback {
			return true
		}
	}
	return false
}

// format rebuilds the case with the given expected sections beside their events.
func (c *caseFile) format(got map[string]string) []byte {
	ar := &txtar.Archive{Comment: c.comment}
	add := func(name string, data []byte) { ar.Files = append(ar.Files, txtar.File{Name: name, Data: data}) }
	if c.rawMsg != nil {
		add("message.yaml", c.rawMsg)
	}
	if c.rawSetup != nil {
		add("setup.yaml", c.rawSetup)
	}
	for _, e := range c.events {
		if e.kind == kindSend {
			add(e.prefix()+"request.http", []byte(got[e.prefix()+"request.http"]))
			add(e.inputName(), e.input)
			add(e.prefix()+"outcome.yaml", []byte(got[e.prefix()+"outcome.yaml"]))
			continue
		}
		add(e.inputName(), e.input)
		add(e.prefix()+"receipts.yaml", []byte(got[e.prefix()+"receipts.yaml"]))
	}
	if r, ok := got["report.yaml"]; ok {
		add("report.yaml", []byte(r))
	}
	return txtar.Format(ar)
}

func atoi(s string) int {
	n, _ := strconv.Atoi(s)
	return n
}

// expandEnv substitutes ${NAME} and ${NAME:-default} from env (as the runtime loader does);
// a variable that is unset and has no default is an error naming it.
func expandEnv(s string, env map[string]string) (string, error) {
	var b strings.Builder
	for {
		i := strings.Index(s, "${")
		if i < 0 {
			b.WriteString(s)
			return b.String(), nil
		}
		j := strings.IndexByte(s[i:], '}')
		if j < 0 {
			return "", errors.New("unterminated ${")
		}
		b.WriteString(s[:i])
		expr := s[i+2 : i+j]
		name, def, hasDef := strings.Cut(expr, ":-")
		switch v := env[name]; {
		case v != "":
			b.WriteString(v)
		case hasDef:
			b.WriteString(def)
		default:
			return "", fmt.Errorf("${%s} is not set: give it in setup.yaml env", name)
		}
		s = s[i+j+1:]
	}
}
