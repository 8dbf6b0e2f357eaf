-- 0002_retention: indexes for retention, as migrations/sqlite/0002_retention.sql.
CREATE INDEX messages_erasable ON messages (final_at)
    WHERE final_at IS NOT NULL AND payload_erased_at IS NULL;
CREATE INDEX messages_erased ON messages (final_at)
    WHERE payload_erased_at IS NOT NULL;

DROP INDEX idempotency_expiry;
CREATE INDEX idempotency_unerased ON idempotency (created_at) WHERE erased_at IS NULL;
