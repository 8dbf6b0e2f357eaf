package smtp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"

	gosmtp "github.com/emersion/go-smtp"

	"switchboard/engine"
)

// Codes of outcomes that carry no SMTP reply code (replies give smtp.<code>).
const (
	// CodeClosed: Send was called after Close (transient: another process may send it).
	CodeClosed = "provider.closed"
	// CodeCancelled: the send's context was cancelled before the body was written.
	CodeCancelled = "smtp.cancelled"
	// CodeTimeout: the send's deadline passed before the body was written.
	CodeTimeout = "smtp.timeout"
	// CodeConnectFailed: the relay could not be reached or dropped the connection before DATA.
	CodeConnectFailed = "smtp.connect-failed"
	// CodeStartTLSUnavailable: tls is starttls and the relay does not offer STARTTLS.
	CodeStartTLSUnavailable = "smtp.starttls-unavailable"
	// CodeTLSFailed: the TLS handshake failed (certificate not trusted, protocol mismatch).
	CodeTLSFailed = "smtp.tls-failed"
	// CodeAuthUnavailable: credentials are configured, the relay offers no usable mechanism.
	CodeAuthUnavailable = "smtp.auth-unavailable"
	// CodeSMTPUTF8Unavailable: an address is not ASCII and the relay does not offer SMTPUTF8.
	CodeSMTPUTF8Unavailable = "smtp.smtputf8-unavailable"
	// CodeMessageInvalid: the message cannot be built (an address that does not parse, …).
	CodeMessageInvalid = "smtp.message-invalid"
	// CodeBodyNotSent: the connection broke while the body was being written; the final "."
	// did not leave, so the relay cannot have taken the message.
	CodeBodyNotSent = "smtp.body-not-sent"
	// CodeReplyLost: the whole body left and the final reply never came (timeout or broken
	// connection): maybe-sent.
	CodeReplyLost = "smtp.reply-lost"
	// CodeProtocol: the relay answered something go-smtp could not read, before DATA.
	CodeProtocol = "smtp.protocol-error"
)

// step names where in the conversation an error happened.
type step string

const (
	stepBuild   step = "build"
	stepConnect step = "connect"
	stepTLS     step = "tls"
	stepAuth    step = "auth"
	// stepCapabilities: the relay lacks an extension this message needs.
	stepCapabilities step = "capabilities"
	stepMail         step = "MAIL FROM"
	stepRcpt         step = "RCPT TO"
	stepData         step = "DATA"
	stepBody         step = "message body"
	stepReply        step = "final reply"
)

// stepError is an error of one step of the conversation.
type stepError struct {
	step step
	err  error
	// bodyLeft is set on stepReply errors when the whole body (its final "." included) was
	// written without a write error.
	bodyLeft bool
}

func (e *stepError) Error() string { return string(e.step) + ": " + e.err.Error() }
func (e *stepError) Unwrap() error { return e.err }

// classify turns the error of a conversation into an outcome (see the package comment).
func classify(ctx context.Context, err error) engine.Outcome {
	var se *stepError
	if !errors.As(err, &se) {
		se = &stepError{step: stepConnect, err: err}
	}
	reason := se.Error()
	var reply *gosmtp.SMTPError
	if errors.As(se.err, &reply) {
		code := "smtp." + strconv.Itoa(reply.Code)
		switch {
		case reply.Code >= 400 && reply.Code < 500:
			return outcome(engine.OutcomeTransient, code, reason)
		case reply.Code >= 500 && reply.Code < 600:
			return outcome(engine.OutcomePermanent, code, reason)
		}
		// Any other code where a success was expected is a protocol violation; after the body
		// it says nothing about whether the relay kept the message.
		if se.step == stepReply {
			return outcome(engine.OutcomeMaybeSent, code, reason)
		}
		return outcome(engine.OutcomeTransient, code, reason)
	}
	switch {
	case se.step == stepReply && se.bodyLeft:
		return outcome(engine.OutcomeMaybeSent, CodeReplyLost, reason)
	case se.step == stepReply || se.step == stepBody:
		return outcome(engine.OutcomeTransient, CodeBodyNotSent, reason)
	case errors.Is(se.err, errInvalidMessage):
		return outcome(engine.OutcomePermanent, CodeMessageInvalid, reason)
	case errors.Is(se.err, errSMTPUTF8Unavailable):
		return outcome(engine.OutcomePermanent, CodeSMTPUTF8Unavailable, reason)
	case ctx.Err() != nil || isTimeout(se.err):
		// The connection deadlines are the conversation's deadline, so an i/o timeout is the
		// deadline passing (it may fire a hair before ctx notices).
		return notSent(ctx, reason)
	case errors.Is(se.err, errStartTLSUnavailable):
		return outcome(engine.OutcomeTransient, CodeStartTLSUnavailable, reason)
	case se.step == stepTLS:
		return outcome(engine.OutcomeTransient, CodeTLSFailed, reason)
	case errors.Is(se.err, errAuthUnavailable):
		return outcome(engine.OutcomeTransient, CodeAuthUnavailable, reason)
	case se.step == stepConnect || isNetError(se.err):
		return outcome(engine.OutcomeTransient, CodeConnectFailed, reason)
	}
	return outcome(engine.OutcomeTransient, CodeProtocol, reason)
}

// notSent is the transient outcome of a send whose context ended before the body was written.
func notSent(ctx context.Context, where string) engine.Outcome {
	code := CodeTimeout
	if errors.Is(ctx.Err(), context.Canceled) {
		code = CodeCancelled
	}
	return outcome(engine.OutcomeTransient, code, fmt.Sprintf("not sent: context ended (%s)", where))
}

// outcome builds an outcome; SMTP never reports delivery, so the report is unavailable.
func outcome(class engine.OutcomeClass, code, reason string) engine.Outcome {
	return engine.Outcome{Class: class, Code: code, Reason: reason, Report: engine.ReportUnavailable}
}

// isNetError reports whether err is a transport failure (as opposed to a reply).
func isNetError(err error) bool {
	var ne interface{ Timeout() bool }
	return errors.As(err, &ne) || isEOF(err)
}

// isTimeout reports whether err is a deadline passing on the connection.
func isTimeout(err error) bool {
	var ne interface{ Timeout() bool }
	return errors.As(err, &ne) && ne.Timeout()
}

func isEOF(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF)
}
