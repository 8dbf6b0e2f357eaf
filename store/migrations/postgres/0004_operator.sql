-- 0004_operator: what the operator API reads and writes, as migrations/sqlite/0004_operator.sql.
CREATE INDEX messages_accepted ON messages (accepted_at, id);
CREATE INDEX messages_held ON messages (accepted_at, id) WHERE dispatch = 'unknown';
CREATE INDEX audit_message ON audit (message_id, at) WHERE message_id <> '';

CREATE TABLE operations (
    id               TEXT    NOT NULL PRIMARY KEY,
    action           TEXT    NOT NULL,
    status           TEXT    NOT NULL,
    sender_profile   TEXT    NOT NULL DEFAULT '',
    accepted_before  BIGINT  NOT NULL,
    actor            TEXT    NOT NULL,
    state            TEXT    NOT NULL,
    total            BIGINT  NOT NULL,
    done             BIGINT  NOT NULL DEFAULT 0,
    failed           BIGINT  NOT NULL DEFAULT 0,
    cursor           TEXT    NOT NULL DEFAULT '',
    error            TEXT    NOT NULL DEFAULT '',
    created_at       BIGINT  NOT NULL,
    updated_at       BIGINT  NOT NULL,
    finished_at      BIGINT,
    lease_token      TEXT,
    lease_expires_at BIGINT
);
CREATE INDEX operations_lease ON operations (lease_expires_at) WHERE state = 'running';
