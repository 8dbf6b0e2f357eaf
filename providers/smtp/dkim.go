package smtp

import (
	"crypto"
	"fmt"

	"github.com/emersion/go-msgauth/dkim"
)

// SignedHeaders returns the header fields every DKIM signature covers, in h= order: the five
// that identify a message (From, To, Subject, Date, Message-ID), plus the two that fix how the body is read (RFC 6376 section 5.4.1
// recommends both). The slice is the caller's.
func SignedHeaders() []string {
	return []string{"From", "To", "Subject", "Date", "Message-ID", "MIME-Version", "Content-Type"}
}

// sign returns the DKIM-Signature header field (name, value and CRLF) of msg, which must have
// CRLF line endings. The caller sends it in front of msg.
func sign(d *DKIMConfig, key crypto.Signer, msg []byte) ([]byte, error) {
	signer, err := dkim.NewSigner(&dkim.SignOptions{
		Domain:                 d.Domain,
		Selector:               d.Selector,
		Signer:                 key,
		Hash:                   crypto.SHA256,
		HeaderCanonicalization: dkim.CanonicalizationRelaxed,
		BodyCanonicalization:   dkim.CanonicalizationRelaxed,
		HeaderKeys:             SignedHeaders(),
	})
	if err != nil {
		return nil, fmt.Errorf("dkim: %w", err)
	}
	if _, err := signer.Write(msg); err != nil {
		_ = signer.Close()
		return nil, fmt.Errorf("dkim: hash the message: %w", err)
	}
	if err := signer.Close(); err != nil {
		return nil, fmt.Errorf("dkim: sign: %w", err)
	}
	return []byte(signer.Signature()), nil
}
