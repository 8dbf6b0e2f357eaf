package engine

import (
	"errors"
	"fmt"
	"time"
)

// Problem codes of SPEC section 5. engine/api maps each to its HTTP status in one table.
const (
	CodeRequestInvalid        = "request.invalid"
	CodeAuthenticationRefused = "authentication.refused"
	CodeOperationNotAuthz     = "operation.not-authorized"
	CodeProfileNotAuthz       = "profile.not-authorized"
	CodeCallbackUnverified    = "callback.unverified"
	CodeMessageNotVisible     = "message.not-visible"
	CodeTemplateNotFound      = "template.not-found"
	CodeRequestNotFound       = "request.not-found"
	CodeMethodNotAllowed      = "request.method-not-allowed"
	CodeIdempotencyKeyReused  = "idempotency.key-reused"
	CodeDispatchStarted       = "message.dispatch-started"
	CodeMessageTerminal       = "message.terminal"
	CodeIdempotencyExpired    = "idempotency.expired"
	CodeBodyTooLarge          = "request.body-too-large"
	CodeHeadersTooLarge       = "request.headers-too-large"
	CodeUnsupportedMediaType  = "request.unsupported-media-type"
	CodeUnprocessable         = "request.unprocessable"
	CodeTemplateDataInvalid   = "template.data-invalid"
	CodeLocaleUnavailable     = "template.locale-unavailable"
	CodeRenderRefused         = "template.render-refused"
	CodeContentInvalid        = "content.invalid"
	CodeContentTooLarge       = "content.too-large"
	CodeTooManySegments       = "content.too-many-segments"
	CodeCallbackUnreadable    = "callback.unreadable"
	CodeRateLimitExceeded     = "rate-limit.exceeded"
	CodeQuotaExceeded         = "quota.exceeded"
	CodeServiceUnavailable    = "service.unavailable"
	CodeMessageNotEligible    = "message.not-eligible"
)

// Problem is an error with a stable code. Detail is safe to show a caller: it never echoes a
// submitted value. Err, when set, is the internal cause, logged but never shown.
type Problem struct {
	Code       string
	Detail     string
	RetryAfter time.Duration
	Err        error
}

// NewProblem returns a Problem with a code and a caller-safe detail.
func NewProblem(code, detail string) *Problem { return &Problem{Code: code, Detail: detail} }

// Error implements error.
func (p *Problem) Error() string {
	if p.Err != nil {
		return fmt.Sprintf("%s: %s: %v", p.Code, p.Detail, p.Err)
	}
	return p.Code + ": " + p.Detail
}

// Unwrap returns the internal cause.
func (p *Problem) Unwrap() error { return p.Err }

// Is matches another Problem by code, so errors.Is(err, ErrNotFound) works for any Problem
// carrying that code.
func (p *Problem) Is(target error) bool {
	var t *Problem
	if errors.As(target, &t) {
		return t.Code == p.Code
	}
	return false
}

// Sentinel problems that stores and the engine return; compare with errors.Is.
var (
	ErrNotFound             = NewProblem(CodeMessageNotVisible, "no such message is visible to the caller")
	ErrIdempotencyKeyReused = NewProblem(CodeIdempotencyKeyReused, "this Idempotency-Key was used with another request body")
	ErrIdempotencyExpired   = NewProblem(CodeIdempotencyExpired, "this Idempotency-Key is past its receipt window")
	ErrQuotaExceeded        = NewProblem(CodeQuotaExceeded, "the access profile's daily limit is reached")
	ErrDispatchStarted      = NewProblem(CodeDispatchStarted, "dispatch of this message has started")
	ErrTerminal             = NewProblem(CodeMessageTerminal, "this message is in a final state")
	ErrNotEligible          = NewProblem(CodeMessageNotEligible, "the message is not in a state this action applies to")
	ErrCallbackUnverified   = NewProblem(CodeCallbackUnverified, "the callback could not be verified")
	ErrCallbackUnreadable   = NewProblem(CodeCallbackUnreadable, "the callback could not be read")
	ErrServiceUnavailable   = NewProblem(CodeServiceUnavailable, "the service cannot answer now")
	ErrLeaseLost            = errors.New("engine: lease lost: another worker or recovery owns the message")
	ErrStoreClosed          = errors.New("engine: store closed")
)

// CodeOf returns the problem code of err, or service.unavailable for errors without one.
func CodeOf(err error) string {
	var p *Problem
	if errors.As(err, &p) {
		return p.Code
	}
	return CodeServiceUnavailable
}
