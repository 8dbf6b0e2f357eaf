-- 0008_no_child_keys: the child rows of a message no longer carry foreign keys; a trigger
-- deletes them with their message (PostgreSQL only).
--
-- Every payload insert (one per acceptance) and every attempt insert (one per finish) checked
-- its foreign key with a query of its own that also locked the message row FOR KEY SHARE:
-- 60,000 such queries in a 30,000-message bench run. The store inserts a payload only with the
-- row id its message insert returned, in the same transaction, and an attempt only through a
-- statement that selects the message it belongs to, so the inserts need no check. What the keys
-- also did, deleting a message's attempts and payload with it (ON DELETE CASCADE), a
-- statement-level trigger now does: it costs nothing on the hot path (messages are deleted only
-- by retention), and every delete keeps it, whoever issues it (an instance of an earlier
-- version during an upgrade, an operator at a SQL prompt). Measured with
-- `bench --messages 30000 --callers 64 --load wrk --database URL`, 2 runs each: the database's
-- CPU went from 216-221 to 199-206 µs per message.
ALTER TABLE payloads DROP CONSTRAINT payloads_message_seq_fkey;
ALTER TABLE attempts DROP CONSTRAINT attempts_message_id_fkey;

CREATE FUNCTION messages_delete_children() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM attempts WHERE message_id IN (SELECT id FROM gone);
    DELETE FROM payloads WHERE message_seq IN (SELECT seq FROM gone);
    RETURN NULL;
END
$$;
-- The tables it names are this schema's, whatever the search path of the session deleting.
ALTER FUNCTION messages_delete_children() SET search_path FROM CURRENT;

CREATE TRIGGER messages_children AFTER DELETE ON messages
    REFERENCING OLD TABLE AS gone FOR EACH STATEMENT EXECUTE FUNCTION messages_delete_children();
