-- 0005_events: events to applications (signed webhooks) and inbound messages from gateways
-- (docs/webhooks.md, docs/design/001-event-outbox.md).
--
-- messages.event_seq counts the changes of a message's status, dispatch or report, acceptance
-- being the first: every write that changes one of them adds one in the same statement. It is
-- the `sequence` of the message's events, and never goes back.
ALTER TABLE messages ADD COLUMN event_seq INTEGER NOT NULL DEFAULT 1;

-- webhook_events: the outbox. One row per (endpoint, type, subject): for message.status the
-- subject is a message id and a newer change overwrites the row's sequence while it is
-- undelivered (superseding), so an endpoint's backlog is bounded by messages, not by changes;
-- for inbox.received the subject is an inbox entry id. The payload is built when the event is
-- sent, from the message or entry as it then stands (its sequence included).
--
-- state is pending, delivered or failed. A pending row is due when next_attempt_at <= now; a
-- claimed one carries lease_token, and next_attempt_at is then its lease's expiry, so a lapsed
-- lease is simply due again. final_at is when the row became delivered or failed (retention).
CREATE TABLE webhook_events (
    id                 INTEGER PRIMARY KEY,
    endpoint           TEXT    NOT NULL,
    type               TEXT    NOT NULL,
    subject            TEXT    NOT NULL,
    sequence           INTEGER NOT NULL,
    state              TEXT    NOT NULL,
    changed_at         INTEGER NOT NULL,
    attempts           INTEGER NOT NULL DEFAULT 0,
    next_attempt_at    INTEGER NOT NULL,
    lease_token        TEXT,
    delivered_sequence INTEGER NOT NULL DEFAULT 0,
    delivered_at       INTEGER,
    last_attempt_at    INTEGER,
    last_status        INTEGER NOT NULL DEFAULT 0,
    last_error         TEXT    NOT NULL DEFAULT '',
    final_at           INTEGER,
    UNIQUE (endpoint, type, subject)
);
CREATE INDEX webhook_events_due ON webhook_events (endpoint, next_attempt_at, id) WHERE state = 'pending';
CREATE INDEX webhook_events_final ON webhook_events (final_at) WHERE state <> 'pending';
CREATE INDEX webhook_events_changed ON webhook_events (endpoint, changed_at);

-- Inbox entries come from peers and from gateways (a reply SMS, an inbound chat message).
ALTER TABLE peer_inbox ADD COLUMN channel TEXT NOT NULL DEFAULT 'peer';
ALTER TABLE peer_inbox ADD COLUMN provider TEXT NOT NULL DEFAULT '';
ALTER TABLE peer_inbox ADD COLUMN to_address TEXT NOT NULL DEFAULT '';
CREATE INDEX peer_inbox_provider ON peer_inbox (provider, id);

-- gateway_inbound: inbound items already stored, one per (provider, provider reference).
CREATE TABLE gateway_inbound (
    provider     TEXT    NOT NULL,
    provider_ref TEXT    NOT NULL,
    inbox_id     TEXT    NOT NULL,
    received_at  INTEGER NOT NULL,
    PRIMARY KEY (provider, provider_ref)
) WITHOUT ROWID;
