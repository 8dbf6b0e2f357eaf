-- 0006_queue_indexes: the queue's indexes hold only the queued messages (PostgreSQL only).
--
-- Every change of a message's dispatch state rewrites its row, and on PostgreSQL a row whose
-- indexed columns change (dispatch is one of them) gets a new entry in every index of the table
-- that covers it: a message changes its row four times on its way (accept, claim, finish,
-- receipt). messages_due and messages_size are read only for queued messages (the claim, the
-- oversized count, the oldest due, the peer recipient's wake-up), so as partial indexes they
-- take one entry per message and its retries instead of one per change. SQLite rewrites only
-- the indexes whose columns change, and reads messages_size for the figures of every state: its
-- indexes stay as they are.
DROP INDEX messages_due;
CREATE INDEX messages_due ON messages (next_attempt_at, accepted_at, id, not_before, payload_bytes, expires_at)
    WHERE dispatch = 'queued';
DROP INDEX messages_size;
CREATE INDEX messages_size ON messages (payload_bytes) WHERE dispatch = 'queued';
