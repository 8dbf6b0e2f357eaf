-- 0002_retention: indexes for retention (docs/operations.md, "Retention and erasure"), so that every sweep batch reads only
-- what it erases instead of scanning the journal of every message ever kept.
--
-- Messages enter messages_erasable when they become final (final_at is set only for the final
-- states submitted, failed, cancelled and expired) and leave it when their payload is erased;
-- they are in messages_erased from then until their record is deleted. Queued, sending and
-- unknown messages are in neither. Accept never touches these partial indexes.
CREATE INDEX messages_erasable ON messages (final_at)
    WHERE final_at IS NOT NULL AND payload_erased_at IS NULL;
CREATE INDEX messages_erased ON messages (final_at)
    WHERE payload_erased_at IS NOT NULL;

-- Submission receipts are erased submissionReceiptDays after acceptance (created_at), following
-- the retention in force. The index holds the records not erased yet, so a sweep never walks the
-- erased ones again; it replaces idempotency_expiry, which no statement used, so that an
-- acceptance still maintains one secondary index of idempotency.
DROP INDEX idempotency_expiry;
CREATE INDEX idempotency_unerased ON idempotency (created_at) WHERE erased_at IS NULL;
