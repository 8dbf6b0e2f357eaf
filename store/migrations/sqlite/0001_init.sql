-- 0001_init: the first schema of Switchboard's SQLite store.
--
-- Conventions: every time is an INTEGER of Unix milliseconds (UTC); NULL means "not set".
-- Payloads live apart from message metadata so that listings and page selection never read a
-- BLOB: messages.payload_bytes carries the size of the payload.
-- Enumerated columns (dispatch, report, outcome) carry no CHECK constraint: an IN list check
-- costs an ephemeral index per inserted row, and the store writes only the engine's constants.

-- messages: metadata of one accepted message, its dispatch state and its lease.
CREATE TABLE messages (
    seq                INTEGER PRIMARY KEY, -- the row id; keys the payload
    id                 TEXT    NOT NULL UNIQUE,
    dispatch           TEXT    NOT NULL,    -- queued, sending, submitted, failed, unknown, cancelled, expired
    report             TEXT    NOT NULL,    -- none, sent, delivered, undelivered, unavailable
    reported_at        INTEGER,
    channel            TEXT    NOT NULL,
    sender_profile     TEXT    NOT NULL,
    provider           TEXT    NOT NULL DEFAULT '',
    provider_ref       TEXT,               -- NULL until an attempt records a reference
    recipient_kind     TEXT    NOT NULL DEFAULT '',
    template_id        TEXT    NOT NULL DEFAULT '',
    template_version   TEXT    NOT NULL DEFAULT '',
    locale             TEXT    NOT NULL DEFAULT '',
    correlation_id     TEXT    NOT NULL DEFAULT '',
    access_profile     TEXT    NOT NULL DEFAULT '',
    caller             TEXT    NOT NULL DEFAULT '',
    accepted_at        INTEGER NOT NULL,
    not_before         INTEGER,
    expires_at         INTEGER NOT NULL,
    updated_at         INTEGER NOT NULL,
    next_attempt_at    INTEGER NOT NULL,
    generation         INTEGER NOT NULL,
    attempt            INTEGER NOT NULL,   -- ordinal of the latest attempt in this generation
    provider_attempts  INTEGER NOT NULL,
    fallback_index     INTEGER NOT NULL,
    payload_bytes      INTEGER NOT NULL,   -- size of the rendered payload
    final_at           INTEGER,
    payload_erased_at  INTEGER,
    dispatch_code      TEXT    NOT NULL DEFAULT '',
    idempotency_key    TEXT    NOT NULL DEFAULT '',
    last_outcome_class TEXT    NOT NULL DEFAULT '',
    lease_token        TEXT,               -- set while sending: fences every write of the claim
    lease_expires_at   INTEGER,
    sending_since      INTEGER             -- start of the in-progress attempt
);

-- The due query: dispatch = 'queued' AND next_attempt_at <= now AND (not_before IS NULL OR
-- not_before <= now), ordered by next_attempt_at, accepted_at, id. The trailing columns let the
-- planner filter without reading the row. Partial: it holds the queue only, so claims and
-- outcomes of sent messages do not touch it.
CREATE INDEX messages_due ON messages (next_attempt_at, accepted_at, id, not_before, payload_bytes, expires_at)
    WHERE dispatch = 'queued';
-- Counts and bytes per dispatch (Stats), and the oversized due count of a claim.
CREATE INDEX messages_size ON messages (dispatch, payload_bytes);
-- The expiry sweep, over the queue only.
CREATE INDEX messages_expiry ON messages (expires_at) WHERE dispatch = 'queued';
-- Lapsed leases: only sending messages carry a lease, so the index holds claimed messages only.
CREATE INDEX messages_lease ON messages (lease_expires_at, id) WHERE dispatch = 'sending';
-- Receipts match by (provider, provider reference).
CREATE INDEX messages_provider_ref ON messages (provider, provider_ref) WHERE provider_ref IS NOT NULL;

-- payloads: the erasable part of a message, one JSON document of engine.Payload, keyed by the
-- message's row id so that it costs one B-tree.
CREATE TABLE payloads (
    message_seq INTEGER PRIMARY KEY REFERENCES messages (seq) ON DELETE CASCADE,
    body        BLOB NOT NULL
);

-- attempts: finished attempts. The in-progress attempt of a sending message is not a row: it is
-- read from messages.sending_since.
CREATE TABLE attempts (
    message_id   TEXT    NOT NULL REFERENCES messages (id) ON DELETE CASCADE,
    generation   INTEGER NOT NULL,
    attempt      INTEGER NOT NULL,
    provider     TEXT    NOT NULL DEFAULT '',
    outcome      TEXT    NOT NULL,
    started_at   INTEGER NOT NULL,
    finished_at  INTEGER,
    code         TEXT    NOT NULL DEFAULT '',
    provider_ref TEXT    NOT NULL DEFAULT '',
    PRIMARY KEY (message_id, generation, attempt)
) WITHOUT ROWID;

-- idempotency: one record per (issuer, subject, Idempotency-Key). Erasing it clears response and
-- sets erased_at; the key stays spent.
CREATE TABLE idempotency (
    issuer       TEXT    NOT NULL,
    subject      TEXT    NOT NULL,
    key          TEXT    NOT NULL,
    request_hash BLOB    NOT NULL,
    response     BLOB,
    message_id   TEXT    NOT NULL,
    created_at   INTEGER NOT NULL,
    expires_at   INTEGER NOT NULL,
    erased_at    INTEGER,
    PRIMARY KEY (issuer, subject, key)
) WITHOUT ROWID;
CREATE INDEX idempotency_expiry ON idempotency (expires_at);

-- receipts: delivery reports whose (provider, reference) was not known when they arrived; applied
-- when an attempt records that reference.
CREATE TABLE receipts (
    id           INTEGER PRIMARY KEY,
    provider     TEXT    NOT NULL,
    provider_ref TEXT    NOT NULL,
    report       TEXT    NOT NULL,
    code         TEXT    NOT NULL DEFAULT '',
    received_at  INTEGER NOT NULL,
    applied      INTEGER NOT NULL DEFAULT 0,
    applied_at   INTEGER
);
CREATE INDEX receipts_pending ON receipts (provider, provider_ref) WHERE applied = 0;

-- profile_daily: acceptances per access profile and UTC day ('YYYY-MM-DD').
CREATE TABLE profile_daily (
    access_profile TEXT    NOT NULL,
    day            TEXT    NOT NULL,
    count          INTEGER NOT NULL,
    PRIMARY KEY (access_profile, day)
) WITHOUT ROWID;

-- audit: the journal. Each writer (one Store instance) keeps its own chain:
-- mac = HMAC-SHA256(key, prev_mac || canonical(record)).
CREATE TABLE audit (
    writer     TEXT    NOT NULL,
    seq        INTEGER NOT NULL,
    at         INTEGER NOT NULL,
    event      TEXT    NOT NULL,
    actor      TEXT    NOT NULL DEFAULT '',
    message_id TEXT    NOT NULL DEFAULT '',
    outcome    TEXT    NOT NULL DEFAULT '',
    prev_mac   BLOB    NOT NULL,
    mac        BLOB    NOT NULL,
    PRIMARY KEY (writer, seq)
) WITHOUT ROWID;

-- audit_writers: the head of each writer's chain, so that verification notices records removed
-- from the end of a chain. head_mac = HMAC-SHA256(key, canonical(head)).
CREATE TABLE audit_writers (
    writer     TEXT    NOT NULL PRIMARY KEY,
    started_at INTEGER NOT NULL,
    last_seq   INTEGER NOT NULL,
    last_mac   BLOB    NOT NULL,
    head_mac   BLOB    NOT NULL
);

-- peer_inbox: envelopes received from peers (methods come in a later migration's issue).
CREATE TABLE peer_inbox (
    id                TEXT    NOT NULL PRIMARY KEY,
    from_peer         TEXT    NOT NULL,
    protocol          TEXT    NOT NULL,
    message_id        TEXT    NOT NULL,
    ts_ms             INTEGER NOT NULL,
    received_at       INTEGER NOT NULL,
    payload_bytes     INTEGER NOT NULL,
    payload           BLOB,
    payload_erased_at INTEGER
);
CREATE INDEX peer_inbox_received ON peer_inbox (received_at, id);

-- peer_idempotency: envelopes already seen, with the cached response (at most 256 KiB).
CREATE TABLE peer_idempotency (
    peer        TEXT    NOT NULL,
    protocol    TEXT    NOT NULL,
    message_id  TEXT    NOT NULL,
    direction   TEXT    NOT NULL CHECK (direction IN ('in')),
    response    BLOB    CHECK (response IS NULL OR length(response) <= 262144),
    inbox_id    TEXT,
    received_at INTEGER NOT NULL,
    PRIMARY KEY (peer, protocol, message_id, direction)
) WITHOUT ROWID;
