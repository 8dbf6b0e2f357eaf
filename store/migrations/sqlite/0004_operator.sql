-- 0004_operator: what the operator API reads and writes (docs/api.md, "Operator API").
--
-- Newest-first listings (GET /v1/messages) page by (accepted_at, id) and walk this index
-- backwards; a time window is a range of it.
CREATE INDEX messages_accepted ON messages (accepted_at, id);
-- The held messages (dispatch unknown) are what an operator looks for first, and few among
-- many: their listing reads this partial index only. Accept never touches it.
CREATE INDEX messages_held ON messages (accepted_at, id) WHERE dispatch = 'unknown';
-- A message's journal, oldest first (GET /v1/messages/{id}/audit). Records that name no
-- message (retention batches, operations) stay out of it.
CREATE INDEX audit_message ON audit (message_id, at) WHERE message_id <> '';

-- operations: bulk operator actions started over the API, with their progress. A running
-- operation is held under a lease by the instance that works on it; once the lease lapses (the
-- instance died) another instance takes it over and goes on after cursor.
CREATE TABLE operations (
    id               TEXT    NOT NULL PRIMARY KEY,
    action           TEXT    NOT NULL,   -- retry, cancel, settle-sent, settle-not-sent
    status           TEXT    NOT NULL,   -- the selection: messages in this status …
    sender_profile   TEXT    NOT NULL DEFAULT '', -- … of this sender profile ('' = any) …
    accepted_before  INTEGER NOT NULL,   -- … accepted before this time
    actor            TEXT    NOT NULL,   -- journal actor of every change: the operator's pseudonym
    state            TEXT    NOT NULL,   -- running, done, failed
    total            INTEGER NOT NULL,   -- messages matched when it started
    done             INTEGER NOT NULL DEFAULT 0,
    failed           INTEGER NOT NULL DEFAULT 0,
    cursor           TEXT    NOT NULL DEFAULT '', -- where the next batch starts (ScanOrder)
    error            TEXT    NOT NULL DEFAULT '', -- why a failed operation stopped
    created_at       INTEGER NOT NULL,
    updated_at       INTEGER NOT NULL,
    finished_at      INTEGER,
    lease_token      TEXT,
    lease_expires_at INTEGER
);
CREATE INDEX operations_lease ON operations (lease_expires_at) WHERE state = 'running';
