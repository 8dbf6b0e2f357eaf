package peer

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"unicode/utf8"

	"github.com/libp2p/go-libp2p/core/protocol"

	"switchboard/engine"
	"switchboard/engine/retryafter"
	"switchboard/scripting"
)

// CodePayloadInvalid: prepare returned a payload that cannot be sent (bad base64, unknown
// payloadEncoding, a malformed protocol id). Permanent: the same adapter given the same
// message will build it again.
const CodePayloadInvalid = "adapter.payload-invalid"

// adapter is a peer provider's optional script (docs/adapters.md): prepare shapes the payload
// bytes and may pick the protocol, interpret reads the peer's answer.
type adapter struct {
	program      *scripting.Program
	hasInterpret bool
}

// prepareOutput is what prepare returns, decoded strictly.
type prepareOutput struct {
	Payload         *string `json:"payload"`
	PayloadEncoding string  `json:"payloadEncoding"`
	Protocol        string  `json:"protocol"`
}

// interpretOutput is what interpret returns, decoded strictly, as for HTTP adapters.
type interpretOutput struct {
	Outcome           string   `json:"outcome"`
	ProviderReference string   `json:"providerReference"`
	RetryAfter        *float64 `json:"retryAfter"`
	Code              string   `json:"code"`
}

// newAdapter compiles the adapter once: prepare required, interpret optional.
func newAdapter(cfg resolved) (*adapter, error) {
	limits := scripting.DefaultLimits().Lower(cfg.Limits)
	program, err := scripting.Compile(cfg.ScriptName, cfg.Source, peerAdapterRequired, peerAdapterOptional,
		limits, cfg.Logger)
	if err != nil {
		return nil, fmt.Errorf("adapter: %w", err)
	}
	return &adapter{program: program, hasInterpret: program.Has("interpret")}, nil
}

// prepare runs the script's prepare and returns the payload and protocol to send, or the
// outcome that ends the send: a deadline is transient (it may pass next time), any other
// script failure or an invalid output permanent.
func (a *adapter) prepare(ctx context.Context, out *engine.Outbound, proto protocol.ID) ([]byte, protocol.ID, *engine.Outcome) {
	parts := make(map[string]any, len(out.Parts))
	for name, text := range out.Parts {
		parts[name] = text
	}
	message := map[string]any{
		"messageId": out.MessageID, "generation": out.Generation, "attempt": out.Attempt,
		"channel": string(out.Channel), "recipient": out.Recipient, "parts": parts, "contentType": out.ContentType,
	}
	profile := map[string]any{"id": out.SenderProfile.ID, "channel": string(out.SenderProfile.Channel),
		"sender": out.SenderProfile.Sender}
	var got prepareOutput
	ok, err := a.program.CallInto(ctx, "prepare", &got, message, profile)
	if err != nil {
		return nil, "", scriptFailure(err, engine.OutcomePermanent)
	}
	if !ok || got.Payload == nil {
		return nil, "", &engine.Outcome{Class: engine.OutcomePermanent, Code: "script." + scripting.ClassOutputInvalid,
			Reason: "prepare returned no payload"}
	}
	var payload []byte
	switch got.PayloadEncoding {
	case "", "utf8":
		payload = []byte(*got.Payload)
	case "base64":
		if payload, err = base64.StdEncoding.DecodeString(*got.Payload); err != nil {
			return nil, "", &engine.Outcome{Class: engine.OutcomePermanent, Code: CodePayloadInvalid,
				Reason: "prepare payload is not standard base64"}
		}
	default:
		return nil, "", &engine.Outcome{Class: engine.OutcomePermanent, Code: CodePayloadInvalid,
			Reason: fmt.Sprintf("payloadEncoding %q is not utf8 or base64", got.PayloadEncoding)}
	}
	if got.Protocol != "" {
		if !validProtocol(got.Protocol) {
			return nil, "", &engine.Outcome{Class: engine.OutcomePermanent, Code: CodePayloadInvalid,
				Reason: "prepare protocol must be 1-256 printable ASCII characters starting with /"}
		}
		proto = protocol.ID(got.Protocol)
	}
	return payload, proto, nil
}

// interpret runs the script's interpret over a complete answer. Without interpret, or when
// it returns null, the default classification decides. A script failure is maybe-sent: the
// peer answered, but what it said cannot be read.
func (a *adapter) interpret(ctx context.Context, answer []byte) engine.Outcome {
	base := classifyAnswer(answer)
	if !a.hasInterpret || string(answer) == ResponseGone {
		return base
	}
	response := map[string]any{"bytes": base64.StdEncoding.EncodeToString(answer)}
	if utf8.Valid(answer) {
		response["text"] = string(answer)
		if v, ok := parseJSON(answer); ok {
			response["json"] = v
		}
	}
	var got interpretOutput
	ok, err := a.program.CallInto(ctx, "interpret", &got, response)
	if err != nil {
		return *scriptFailure(err, engine.OutcomeMaybeSent)
	}
	if !ok {
		return base
	}
	o, err := fromInterpret(&got)
	if err != nil {
		return engine.Outcome{Class: engine.OutcomeMaybeSent, Code: "script." + scripting.ClassOutputInvalid,
			Reason: "interpret: " + err.Error()}
	}
	return o
}

// fromInterpret validates interpret's output. An accepted outcome carries report delivered:
// the peer's answer is its acknowledgement.
func fromInterpret(out *interpretOutput) (engine.Outcome, error) {
	class, err := engine.CheckScriptOutcome(out.Outcome, out.Code)
	if err != nil {
		return engine.Outcome{}, err
	}
	if len(out.ProviderReference) > MaxMessageIDBytes || !printable(out.ProviderReference) {
		return engine.Outcome{}, errors.New("providerReference must be at most 256 printable characters")
	}
	o := engine.Outcome{Class: class, Code: out.Code, ProviderReference: out.ProviderReference, Reason: "interpret"}
	if class == engine.OutcomeAccepted {
		o.Report = engine.ReportDelivered
	} else if o.Code == "" {
		o.Code = "peer." + string(class)
	}
	if out.RetryAfter != nil {
		if *out.RetryAfter < 0 || math.IsNaN(*out.RetryAfter) {
			return engine.Outcome{}, errors.New("retryAfter must be a number of seconds, not negative")
		}
		o.RetryAfter = retryafter.Seconds(*out.RetryAfter)
	}
	return o, nil
}

// scriptFailure turns a failed call into an outcome: a deadline is transient before the
// envelope left (prepare) and class otherwise; a closed program is transient provider.closed.
func scriptFailure(err error, class engine.OutcomeClass) *engine.Outcome {
	if errors.Is(err, scripting.ErrClosed) {
		o := transient(CodeClosed, err.Error())
		if class == engine.OutcomeMaybeSent {
			o.Class = engine.OutcomeMaybeSent
		}
		return &o
	}
	scriptClass := scripting.ClassOf(err)
	if scriptClass == "" {
		scriptClass = scripting.ClassFailed
	}
	if scriptClass == scripting.ClassDeadline && class == engine.OutcomePermanent {
		class = engine.OutcomeTransient
	}
	return &engine.Outcome{Class: class, Code: "script." + scriptClass, Reason: err.Error()}
}

// parseJSON decodes one JSON value into plain values with json.Number numbers.
func parseJSON(b []byte) (any, bool) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil || dec.More() {
		return nil, false
	}
	return v, true
}

// validProtocol reports whether s may be used as a stream protocol id.
func validProtocol(s string) bool {
	return s != "" && len(s) <= 256 && s[0] == '/' && printable(s) && !bytes.ContainsRune([]byte(s), ' ')
}

// printable reports whether s is printable ASCII (spaces allowed).
func printable(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] > 0x7e {
			return false
		}
	}
	return true
}
