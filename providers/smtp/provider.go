package smtp

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	gosmtp "github.com/emersion/go-smtp"

	"switchboard/engine"
)

// errSMTPUTF8Unavailable: an address is not ASCII and the relay does not offer SMTPUTF8.
var errSMTPUTF8Unavailable = errors.New("an address is not ASCII and the relay does not offer SMTPUTF8")

// Provider is one connected SMTP relay. It implements engine.Provider and is safe for
// concurrent use.
type Provider struct {
	s         *settings
	slots     chan struct{}
	pool      pool
	closed    atomic.Bool
	closeOnce sync.Once
}

// New validates cfg (see Config for the defaults) and returns a provider. It reads the trusted
// CA file and parses the DKIM key now, so that a bad one fails startup rather than every send;
// it does not connect: the first Send does.
func New(cfg Config) (*Provider, error) {
	s, err := cfg.normalized()
	if err != nil {
		return nil, fmt.Errorf("smtp %s: %w", cfg.ID, err)
	}
	return &Provider{
		s:     s,
		slots: make(chan struct{}, s.ConcurrencyLimit),
		pool:  pool{limit: s.ConcurrencyLimit},
	}, nil
}

// Kind returns "smtp".
func (p *Provider) Kind() string { return "smtp" }

// Close says goodbye (QUIT) to the resting connections and makes later sends return a
// transient provider.closed outcome; a conversation in flight finishes and then closes its
// connection. It is safe to call more than once.
func (p *Provider) Close() error {
	p.closeOnce.Do(func() {
		p.closed.Store(true)
		p.pool.close()
	})
	return nil
}

// Send builds and signs the message, takes a slot and a connection (a resting one, else a new
// one) and runs MAIL, RCPT, DATA. The conversation is bounded by ctx, out.Deadline and
// Config.Timeout. It returns transient when ctx ends before the end of the body is written and
// maybe-sent when it ends after, before the final reply. On acceptance the provider reference
// is the Message-ID and the report is unavailable.
func (p *Provider) Send(ctx context.Context, out *engine.Outbound) engine.Outcome {
	if p.closed.Load() {
		return outcome(engine.OutcomeTransient, CodeClosed, "provider is closed")
	}
	if !out.Deadline.IsZero() {
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, out.Deadline)
		defer cancel()
	}
	if ctx.Err() != nil {
		return notSent(ctx, "before the message was built")
	}
	env, err := p.build(out)
	if err != nil {
		return classify(ctx, err)
	}
	select {
	case p.slots <- struct{}{}:
	case <-ctx.Done():
		return notSent(ctx, "waiting for a connection slot")
	}
	defer func() { <-p.slots }()
	ctx, cancel := context.WithTimeout(ctx, p.s.Timeout)
	defer cancel()

	if err := p.converse(ctx, env); err != nil {
		o := classify(ctx, err)
		o.ProviderReference = env.messageID
		return o
	}
	o := outcome(engine.OutcomeAccepted, "", "")
	o.ProviderReference = env.messageID
	return o
}

// build composes the message and signs it when DKIM is configured.
func (p *Provider) build(out *engine.Outbound) (*envelope, error) {
	env, err := p.s.compose(out, p.s.Clock.Now())
	if err != nil {
		return nil, &stepError{step: stepBuild, err: err}
	}
	if p.s.signer != nil {
		// The key was checked by New, so a failure here comes from the message itself.
		sig, err := sign(p.s.DKIM, p.s.signer, env.data)
		if err != nil {
			return nil, &stepError{step: stepBuild, err: fmt.Errorf("%w: %w", errInvalidMessage, err)}
		}
		env.signature = sig
	}
	return env, nil
}

// converse carries env over a resting connection or a new one. A resting connection the relay
// has dropped shows it at MAIL FROM, before anything of the message was sent, so converse then
// tries once more on a new connection.
func (p *Provider) converse(ctx context.Context, env *envelope) error {
	if c := p.pool.take(p.s.Clock.Now(), p.s.IdleTimeout); c != nil {
		err := p.deliver(ctx, c, env)
		if !staleAtMail(err) || ctx.Err() != nil {
			return err
		}
		p.s.Logger.Debug("a resting connection was dropped by the relay; opening a new one", "error", err)
	}
	c, err := p.s.dial(ctx)
	if err != nil {
		return err
	}
	return p.deliver(ctx, c, env)
}

// staleAtMail reports whether err says a reused connection was already gone at MAIL FROM: a
// transport error or a 421 (the relay is closing the channel).
func staleAtMail(err error) bool {
	var se *stepError
	if !errors.As(err, &se) || se.step != stepMail {
		return false
	}
	var reply *gosmtp.SMTPError
	if errors.As(se.err, &reply) {
		return reply.Code == 421
	}
	return true
}

// deliver runs one mail transaction on c and then hands c back to the pool or closes it: a
// connection is kept only after a complete exchange (accepted, or refused by a reply other than
// 421 and reset with RSET), and at most MaxMessagesPerConnection times.
func (p *Provider) deliver(ctx context.Context, c *relayConn, env *envelope) (err error) {
	stop := context.AfterFunc(ctx, func() { _ = c.raw.Close() })
	keep := false
	defer func() {
		switch {
		case !stop() || !keep || c.raw.writeFailed.Load():
			c.close()
		case c.sent >= p.s.MaxMessagesPerConnection:
			c.quit(quitTimeout) // a healthy connection that did its share: say goodbye
		default:
			p.pool.put(c, p.s.Clock.Now())
		}
	}()
	c.armTimeouts(ctx)

	if env.utf8 && !c.utf8 {
		keep = true // nothing was said: the connection is as good as before
		return &stepError{step: stepCapabilities, err: errSMTPUTF8Unavailable}
	}
	var opts *gosmtp.MailOptions
	if env.utf8 {
		opts = &gosmtp.MailOptions{UTF8: true}
	}
	if err := c.client.Mail(env.from, opts); err != nil {
		keep = p.resetAfter(c, err)
		return &stepError{step: stepMail, err: err}
	}
	if err := c.client.Rcpt(env.to, nil); err != nil {
		keep = p.resetAfter(c, err)
		return &stepError{step: stepRcpt, err: err}
	}
	w, err := c.client.Data()
	if err != nil {
		keep = p.resetAfter(c, err)
		return &stepError{step: stepData, err: err}
	}
	c.sent++
	if len(env.signature) > 0 {
		if _, err := w.Write(env.signature); err != nil {
			return &stepError{step: stepBody, err: err}
		}
	}
	if _, err := w.Write(env.data); err != nil {
		return &stepError{step: stepBody, err: err}
	}
	_, err = w.CloseWithResponse()
	if err == nil {
		keep = true
		return nil
	}
	var reply *gosmtp.SMTPError
	if errors.As(err, &reply) {
		keep = reply.Code != 421
		if reply.Code >= 200 && reply.Code < 300 {
			return nil // a 2xx other than 250 is still an acceptance
		}
	}
	return &stepError{step: stepReply, err: err, bodyLeft: !c.raw.writeFailed.Load()}
}

// resetAfter decides whether a connection survives a failed MAIL, RCPT or DATA command: only
// after a reply other than 421, and only when RSET succeeds.
func (p *Provider) resetAfter(c *relayConn, err error) bool {
	var reply *gosmtp.SMTPError
	if !errors.As(err, &reply) || reply.Code == 421 {
		return false
	}
	return c.client.Reset() == nil
}

var _ engine.Provider = (*Provider)(nil)
