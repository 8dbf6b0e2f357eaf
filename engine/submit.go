package engine

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"

	"switchboard/packages"
	"switchboard/packages/jsonread"
)

// SubmitterConfig wires a Submitter.
type SubmitterConfig struct {
	Package *packages.Package
	Store   Store
	Clock   Clock
	// PayloadRetention bounds expiresAt: a message may not outlive its payload's retention.
	PayloadRetention time.Duration
	// ReceiptWindow is how long an idempotency record answers replays (submissionReceiptDays).
	ReceiptWindow time.Duration
	// OnAccepted, when set, is called after a new message became durable (the dispatcher's
	// Wake), so that it goes out without waiting for the next poll.
	OnAccepted func()
	// Intake, when set, counts the submissions taken (an Admission policy reads it).
	Intake *Intake
}

// Submitter turns a caller's request into a durable acceptance: it checks what the caller may
// use, validates and renders, checks the recipient, and hands the result to Store.Accept.
type Submitter struct {
	cfg SubmitterConfig
}

// NewSubmitter returns a Submitter.
func NewSubmitter(cfg SubmitterConfig) *Submitter { return &Submitter{cfg: cfg} }

// Submit accepts one message for caller under idempotency key. body is the request body as the
// API read it, hashed for the idempotency record; req is its decoded form, whose Data is a value
// of body: the body is read once. It returns the 202 body to send (the first answer again for a
// replay) or a *Problem.
func (s *Submitter) Submit(ctx context.Context, caller Caller, key string, body *jsonread.Doc, req *SubmitRequest) (AcceptResult, error) {
	s.cfg.Intake.take()
	pkg := s.cfg.Package
	access := pkg.AccessProfile(caller.Profile)
	if access == nil || access.Role != "sender" {
		return AcceptResult{}, NewProblem(CodeOperationNotAuthz, "the caller's access profile may not submit messages")
	}
	hash := RequestHash(body)
	sp := pkg.SenderProfile(req.SenderProfile)
	if req.SenderProfile == "" {
		return AcceptResult{}, NewProblem(CodeUnprocessable, "senderProfile is required")
	}
	if sp == nil || !access.AllowsSenderProfile(sp.ID) {
		return AcceptResult{}, NewProblem(CodeProfileNotAuthz, "the caller may not use this sender profile")
	}
	channel := Channel(sp.Channel)
	kind, address, err := req.To.Kind()
	if err != nil {
		return AcceptResult{}, NewProblem(CodeUnprocessable, err.Error())
	}
	if kind != RecipientKindFor(channel) {
		return AcceptResult{}, NewProblem(CodeContentInvalid, fmt.Sprintf("a %s message needs to.%s", channel, RecipientKindFor(channel)))
	}
	if err := CheckAddress(kind, address); err != nil {
		// A chat address and a device token are checked for their form only (the gateway owns
		// what they mean), so a bad one is a malformed request rather than an unprocessable
		// recipient.
		code := CodeUnprocessable
		if kind == RecipientAddress || kind == RecipientDevice {
			code = CodeRequestInvalid
		}
		return AcceptResult{}, NewProblem(code, err.Error())
	}
	parts, contentType, err := s.render(access, sp, req)
	if err != nil {
		return AcceptResult{}, err
	}
	now := s.cfg.Clock.Now()
	expiresAt, notBefore, err := s.timing(now, sp, req)
	if err != nil {
		return AcceptResult{}, err
	}
	id, err := uuid.NewV7()
	if err != nil {
		return AcceptResult{}, &Problem{Code: CodeServiceUnavailable, Detail: "cannot make a message id", Err: err}
	}
	msgID := id.String()
	response, err := acceptedResponse(msgID)
	if err != nil {
		return AcceptResult{}, fmt.Errorf("encode 202 body: %w", err)
	}
	payload := Payload{Recipient: address, Parts: parts, ContentType: contentType}
	next := now
	if notBefore != nil && notBefore.After(now) {
		next = *notBefore
	}
	msg := Message{
		ID: msgID, Dispatch: DispatchQueued, Report: ReportNone, Channel: channel,
		SenderProfile: sp.ID, Provider: sp.Provider, RecipientKind: kind,
		CorrelationID: req.CorrelationID, AccessProfile: access.ID, Caller: caller.Pseudonym,
		AcceptedAt: now, NotBefore: notBefore, ExpiresAt: expiresAt, UpdatedAt: now,
		NextAttemptAt: next, Generation: 1, PayloadBytes: payloadSize(payload),
	}
	if req.Template != nil {
		msg.TemplateID, msg.TemplateVersion, msg.Locale = req.Template.ID, req.Template.Version, req.Locale
	}
	results := s.cfg.Store.Accept(ctx, []Acceptance{{
		Idempotency: IdempotencyRecord{
			Issuer: caller.Issuer, Subject: caller.Subject, Key: key, RequestHash: hash,
			Response: response, ExpiresAt: now.Add(s.cfg.ReceiptWindow),
		},
		Message:    msg,
		Payload:    payload,
		DailyLimit: access.DailyLimit,
		Audit:      AuditEntry{Event: "message.accepted", Actor: caller.Pseudonym, MessageID: msgID, Outcome: string(DispatchQueued), At: now},
	}})
	if len(results) != 1 {
		return AcceptResult{}, &Problem{Code: CodeServiceUnavailable, Detail: "the store did not answer", Err: errors.New("accept: no result")}
	}
	r := results[0]
	if r.Err != nil {
		var p *Problem
		if errors.As(r.Err, &p) {
			return r, r.Err
		}
		return r, &Problem{Code: CodeServiceUnavailable, Detail: "the message could not be stored", Err: r.Err}
	}
	if !r.Replayed && s.cfg.OnAccepted != nil {
		s.cfg.OnAccepted()
	}
	return r, nil
}

// timing computes expiresAt and notBefore: it refuses an expiresAt in the past or beyond the
// payload retention, and a notBefore that is not before expiresAt.
func (s *Submitter) timing(now time.Time, sp *packages.SenderProfile, req *SubmitRequest) (time.Time, *time.Time, error) {
	expiresAt := now.Add(time.Duration(sp.DefaultExpirySeconds) * time.Second)
	if req.ExpiresAt != nil {
		expiresAt = req.ExpiresAt.UTC()
		if !expiresAt.After(now) {
			return time.Time{}, nil, NewProblem(CodeUnprocessable, "expiresAt is in the past")
		}
	}
	if s.cfg.PayloadRetention > 0 && expiresAt.Sub(now) > s.cfg.PayloadRetention {
		if req.ExpiresAt != nil {
			return time.Time{}, nil, NewProblem(CodeUnprocessable, "expiresAt is beyond the payload retention")
		}
		expiresAt = now.Add(s.cfg.PayloadRetention)
	}
	var notBefore *time.Time
	if req.NotBefore != nil {
		nb := req.NotBefore.UTC()
		if !nb.Before(expiresAt) {
			return time.Time{}, nil, NewProblem(CodeUnprocessable, "notBefore is not before expiresAt")
		}
		notBefore = &nb
	}
	return expiresAt, notBefore, nil
}

// render produces the message parts from a template or from direct content.
func (s *Submitter) render(access *packages.AccessProfile, sp *packages.SenderProfile, req *SubmitRequest) (map[string]string, string, error) {
	switch {
	case req.Template != nil && req.Content != nil:
		return nil, "", NewProblem(CodeUnprocessable, "give either template or content, not both")
	case req.Template != nil:
		return s.renderTemplate(access, sp, req)
	case req.Content != nil:
		if req.Data.Exists() || req.Locale != "" {
			return nil, "", NewProblem(CodeUnprocessable, "locale and data belong to a template submission")
		}
		return directContent(access, sp, req.Content)
	}
	return nil, "", NewProblem(CodeUnprocessable, "give a template or content")
}

func (s *Submitter) renderTemplate(access *packages.AccessProfile, sp *packages.SenderProfile, req *SubmitRequest) (map[string]string, string, error) {
	ref := req.Template
	if !access.AllowsTemplate(ref.ID) {
		return nil, "", NewProblem(CodeProfileNotAuthz, "the caller may not use this template")
	}
	tmpl := s.cfg.Package.Template(ref.ID, ref.Version)
	if tmpl == nil {
		return nil, "", NewProblem(CodeTemplateNotFound, "no such template version")
	}
	if tmpl.Channel != sp.Channel {
		return nil, "", NewProblem(CodeContentInvalid, "the template's channel differs from the sender profile's")
	}
	if req.Locale == "" {
		return nil, "", NewProblem(CodeUnprocessable, "locale is required with a template")
	}
	data, err := packages.DataOf(req.Data)
	if err != nil {
		return nil, "", ProblemFrom(err, CodeTemplateDataInvalid)
	}
	if err := tmpl.ValidateData(data); err != nil {
		return nil, "", ProblemFrom(err, CodeTemplateDataInvalid)
	}
	out, err := tmpl.Render(req.Locale, data)
	if err != nil {
		return nil, "", ProblemFrom(err, CodeRenderRefused)
	}
	if out.SMS != nil {
		if err := packages.CheckSegments(*out.SMS, sp.MaximumSegments); err != nil {
			return nil, "", ProblemFrom(err, CodeTooManySegments)
		}
	}
	return out.Parts, tmpl.ContentType, nil
}

// directContent checks direct content against the channel, and cleans and limits it with
// packages.CleanPart (as template parts are).
func directContent(access *packages.AccessProfile, sp *packages.SenderProfile, c *DirectContent) (map[string]string, string, error) {
	if !access.AllowDirectContent {
		return nil, "", NewProblem(CodeProfileNotAuthz, "the caller's access profile does not allow direct content")
	}
	if Channel(sp.Channel) == ChannelPush {
		return pushContent(c)
	}
	if c.Title != "" || c.Body != "" || c.Data != nil {
		return nil, "", NewProblem(CodeContentInvalid, "content.title, content.body and content.data belong to push messages")
	}
	if strings.TrimSpace(c.Text) == "" {
		return nil, "", NewProblem(CodeContentInvalid, "content.text is required")
	}
	switch Channel(sp.Channel) {
	case ChannelEmail:
		if strings.TrimSpace(c.Subject) == "" {
			return nil, "", NewProblem(CodeContentInvalid, "content.subject is required for email")
		}
		subject, err := packages.CleanPart(sp.Channel, "subject", c.Subject)
		if err != nil {
			return nil, "", ProblemFrom(err, CodeContentTooLarge)
		}
		text, err := packages.CleanPart(sp.Channel, "text", c.Text)
		if err != nil {
			return nil, "", ProblemFrom(err, CodeContentTooLarge)
		}
		return map[string]string{"subject": subject, "text": text}, "", nil
	case ChannelSMS:
		text, err := onePart(c, sp.Channel, "text", "an sms has no subject")
		if err != nil {
			return nil, "", err
		}
		if err := packages.CheckSegments(packages.CountSMS(text), sp.MaximumSegments); err != nil {
			return nil, "", ProblemFrom(err, CodeTooManySegments)
		}
		return map[string]string{"text": text}, "", nil
	case ChannelChat:
		// Direct chat content is {text}: the optional JSON body part (blocks, cards) comes from
		// a template only, where it is validated as JSON at render.
		text, err := onePart(c, sp.Channel, "text", "a chat message has no subject")
		if err != nil {
			return nil, "", err
		}
		return map[string]string{"text": text}, "", nil
	}
	body, err := onePart(c, sp.Channel, "body", "a peer message has no subject")
	if err != nil {
		return nil, "", err
	}
	return map[string]string{"body": body}, "text/plain; charset=utf-8", nil
}

// onePart is direct content of a channel without subject: content.text, cleaned as part.
func onePart(c *DirectContent, channel, part, noSubject string) (string, error) {
	if c.Subject != "" {
		return "", NewProblem(CodeContentInvalid, noSubject)
	}
	text, err := packages.CleanPart(channel, part, c.Text)
	if err != nil {
		return "", ProblemFrom(err, CodeContentTooLarge)
	}
	return text, nil
}

// ProblemFrom turns a packages error carrying a Code() into a Problem; its message is written
// by packages to be caller-safe (it names paths, never values).
func ProblemFrom(err error, fallback string) error {
	code := fallback
	var coded interface{ Code() string }
	if errors.As(err, &coded) && coded.Code() != "" {
		code = coded.Code()
	}
	return &Problem{Code: code, Detail: err.Error()}
}

// payloadSize is the stored size of a payload, used by the dispatcher's byte budget.
func payloadSize(p Payload) int64 {
	n := len(p.Recipient) + len(p.ContentType)
	for k, v := range p.Parts {
		n += len(k) + len(v)
	}
	return int64(n)
}
