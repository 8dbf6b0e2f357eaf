package store

import (
	"database/sql"
	"database/sql/driver"
	"errors"

	"switchboard/engine"
)

// messageRow is one row of messages as selected by messageColumns.
type messageRow struct {
	Seq              int64          `db:"seq"`
	ID               string         `db:"id"`
	Dispatch         string         `db:"dispatch"`
	Report           string         `db:"report"`
	ReportedAt       sql.NullInt64  `db:"reported_at"`
	Channel          string         `db:"channel"`
	SenderProfile    string         `db:"sender_profile"`
	Provider         string         `db:"provider"`
	ProviderRef      sql.NullString `db:"provider_ref"`
	RecipientKind    string         `db:"recipient_kind"`
	TemplateID       string         `db:"template_id"`
	TemplateVersion  string         `db:"template_version"`
	Locale           string         `db:"locale"`
	CorrelationID    string         `db:"correlation_id"`
	AccessProfile    string         `db:"access_profile"`
	Caller           string         `db:"caller"`
	AcceptedAt       int64          `db:"accepted_at"`
	NotBefore        sql.NullInt64  `db:"not_before"`
	ExpiresAt        int64          `db:"expires_at"`
	UpdatedAt        int64          `db:"updated_at"`
	NextAttemptAt    int64          `db:"next_attempt_at"`
	Generation       int            `db:"generation"`
	Attempt          int            `db:"attempt"`
	ProviderAttempts int            `db:"provider_attempts"`
	FallbackIndex    int            `db:"fallback_index"`
	PayloadBytes     int64          `db:"payload_bytes"`
	FinalAt          sql.NullInt64  `db:"final_at"`
	PayloadErasedAt  sql.NullInt64  `db:"payload_erased_at"`
	DispatchCode     string         `db:"dispatch_code"`
	IdempotencyKey   string         `db:"idempotency_key"`
	LastOutcomeClass string         `db:"last_outcome_class"`
	LeaseToken       sql.NullString `db:"lease_token"`
	LeaseExpiresAt   sql.NullInt64  `db:"lease_expires_at"`
	SendingSince     sql.NullInt64  `db:"sending_since"`
	EventSeq         int64          `db:"event_seq"`
	ReasonCode       string         `db:"reason_code"`
	ReasonBy         string         `db:"reason_by"`
}

// fields are the addresses of the row's columns in messageColumns order: a scan through them
// costs none of sqlx's reflection, which took a third of the Go side of a claim's read of its
// page (TestMessageRowFields keeps the two orders one).
func (r *messageRow) fields() []any {
	return []any{&r.Seq, &r.ID, &r.Dispatch, &r.Report, &r.ReportedAt, &r.Channel, &r.SenderProfile,
		&r.Provider, &r.ProviderRef, &r.RecipientKind, &r.TemplateID, &r.TemplateVersion, &r.Locale,
		&r.CorrelationID, &r.AccessProfile, &r.Caller, &r.AcceptedAt, &r.NotBefore, &r.ExpiresAt,
		&r.UpdatedAt, &r.NextAttemptAt, &r.Generation, &r.Attempt, &r.ProviderAttempts, &r.FallbackIndex,
		&r.PayloadBytes, &r.FinalAt, &r.PayloadErasedAt, &r.DispatchCode, &r.IdempotencyKey,
		&r.LastOutcomeClass, &r.LeaseToken, &r.LeaseExpiresAt, &r.SendingSince, &r.EventSeq,
		&r.ReasonCode, &r.ReasonBy}
}

// message converts the row to the engine's view, without attempts.
func (r *messageRow) message() engine.Message {
	return engine.Message{
		ID:               r.ID,
		Sequence:         r.EventSeq,
		Dispatch:         engine.Dispatch(r.Dispatch),
		Report:           engine.Report(r.Report),
		ReportedAt:       timePtr(r.ReportedAt),
		Channel:          engine.Channel(r.Channel),
		SenderProfile:    r.SenderProfile,
		Provider:         r.Provider,
		ProviderRef:      r.ProviderRef.String,
		RecipientKind:    r.RecipientKind,
		TemplateID:       r.TemplateID,
		TemplateVersion:  r.TemplateVersion,
		Locale:           r.Locale,
		CorrelationID:    r.CorrelationID,
		AccessProfile:    r.AccessProfile,
		Caller:           r.Caller,
		AcceptedAt:       fromMs(r.AcceptedAt),
		NotBefore:        timePtr(r.NotBefore),
		ExpiresAt:        fromMs(r.ExpiresAt),
		UpdatedAt:        fromMs(r.UpdatedAt),
		NextAttemptAt:    fromMs(r.NextAttemptAt),
		Generation:       r.Generation,
		Attempt:          r.Attempt,
		ProviderAttempts: r.ProviderAttempts,
		FallbackIndex:    r.FallbackIndex,
		PayloadBytes:     r.PayloadBytes,
		FinalAt:          timePtr(r.FinalAt),
		PayloadErasedAt:  timePtr(r.PayloadErasedAt),
		DispatchCode:     r.DispatchCode,
		IdempotencyKey:   r.IdempotencyKey,
		LastOutcomeClass: engine.OutcomeClass(r.LastOutcomeClass),
		Reason:           engine.Reason{Code: r.ReasonCode, By: engine.ReasonBy(r.ReasonBy)},
	}
}

// inProgress synthesizes the attempt a sending message is making: it is not a row until
// Finish closes it.
func (r *messageRow) inProgress() (engine.Attempt, bool) {
	if engine.Dispatch(r.Dispatch) != engine.DispatchSending || !r.SendingSince.Valid {
		return engine.Attempt{}, false
	}
	return engine.Attempt{
		Generation: r.Generation,
		Attempt:    r.Attempt,
		Provider:   r.Provider,
		Outcome:    engine.AttemptInProgress,
		StartedAt:  fromMs(r.SendingSince.Int64),
	}, true
}

// attemptRow is one row of attempts.
type attemptRow struct {
	Generation  int           `db:"generation"`
	Attempt     int           `db:"attempt"`
	Provider    string        `db:"provider"`
	Outcome     string        `db:"outcome"`
	StartedAt   int64         `db:"started_at"`
	FinishedAt  sql.NullInt64 `db:"finished_at"`
	Code        string        `db:"code"`
	ProviderRef string        `db:"provider_ref"`
}

func (r *attemptRow) attempt() engine.Attempt {
	return engine.Attempt{
		Generation:  r.Generation,
		Attempt:     r.Attempt,
		Provider:    r.Provider,
		Outcome:     engine.AttemptOutcome(r.Outcome),
		StartedAt:   fromMs(r.StartedAt),
		FinishedAt:  timePtr(r.FinishedAt),
		Code:        r.Code,
		ProviderRef: r.ProviderRef,
	}
}

// messageInsertArgs are the values of messageSQL.insert for m, in its column order.
func messageInsertArgs(m *engine.Message, payloadBytes int64) []any {
	return []any{
		m.ID, string(m.Dispatch), string(m.Report), nullable(msPtr(m.ReportedAt)), string(m.Channel),
		m.SenderProfile, m.Provider, nullable(nullString(m.ProviderRef)), m.RecipientKind, m.TemplateID,
		m.TemplateVersion, m.Locale, m.CorrelationID, m.AccessProfile, m.Caller,
		ms(m.AcceptedAt), nullable(msPtr(m.NotBefore)), ms(m.ExpiresAt), ms(m.UpdatedAt), ms(m.NextAttemptAt),
		int64(m.Generation), int64(m.Attempt), int64(m.ProviderAttempts), int64(m.FallbackIndex), payloadBytes,
		nullable(msPtr(m.FinalAt)), m.DispatchCode, m.IdempotencyKey, string(m.LastOutcomeClass),
	}
}

// nullable turns a sql.Null* value into what the driver takes directly (nil or the value),
// which spares database/sql a Valuer call per argument on the hot insert.
func nullable(v interface{ Value() (driver.Value, error) }) any {
	d, _ := v.Value() // the Null* types of database/sql never fail
	return d
}

// isNoRows reports whether err means a query found nothing.
func isNoRows(err error) bool { return errors.Is(err, sql.ErrNoRows) }
