-- 0008_no_child_keys: the child rows of a message no longer carry foreign keys (PostgreSQL
-- only).
--
-- Every payload insert (one per acceptance) and every attempt insert (one per finish) checked
-- its foreign key with a query of its own that also locked the message row FOR KEY SHARE:
-- 60,000 such queries in a 30,000-message bench run. The store inserts a payload only with the
-- row id its message insert returned, in the same transaction, and an attempt only through a
-- statement that selects the message it belongs to; the one delete of messages, retention's,
-- deletes their attempts and payloads in the same statement (retentionSQL.recordsDelete).
-- Measured with `bench --messages 30000 --callers 64 --load wrk --database URL`, 2 runs each:
-- the database's CPU went from 216-221 to 199-206 µs per message.
ALTER TABLE payloads DROP CONSTRAINT payloads_message_seq_fkey;
ALTER TABLE attempts DROP CONSTRAINT attempts_message_id_fkey;
