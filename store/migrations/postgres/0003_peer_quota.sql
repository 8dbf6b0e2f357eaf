-- 0003_peer_quota: as migrations/sqlite/0003_peer_quota.sql. Every instance's envelope locks
-- its peer's row of the day (INSERT … ON CONFLICT DO UPDATE) until it commits, so the quota
-- holds across instances.
CREATE TABLE peer_inbox_daily (
    day   TEXT   COLLATE "C" NOT NULL,
    peer  TEXT   NOT NULL,
    bytes BIGINT NOT NULL,
    PRIMARY KEY (day, peer)
);
