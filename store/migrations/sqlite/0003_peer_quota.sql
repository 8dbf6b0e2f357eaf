-- 0003_peer_quota: the payload bytes each peer stored in the inbox per UTC day ('YYYY-MM-DD'),
-- counted in the transaction that stores each envelope, so that a peer's daily quota
-- (inboxQuota.bytesPerDay) survives a restart. Only the current day is read; the first
-- envelope of a day deletes the rows of earlier days. The day leads the key so that this
-- delete is a range of it.
CREATE TABLE peer_inbox_daily (
    day   TEXT    NOT NULL,
    peer  TEXT    NOT NULL,
    bytes INTEGER NOT NULL,
    PRIMARY KEY (day, peer)
) WITHOUT ROWID;
