-- 0007_messages_tuning: room for HOT updates in messages, and a receipt index whose order the
-- planner cannot misuse (PostgreSQL only). Both were found in a 20,000-message bench run, with
-- pg_stat_user_tables and auto_explain.
--
-- A PostgreSQL update writes a new version of the row. When no indexed column changes (the
-- columns of partial index predicates count) and the new version fits on the same page, the
-- update is HOT: no index gets a new entry. A receipt changes only report, reported_at,
-- updated_at and event_seq, none of them indexed, so its update can be HOT; but on a page
-- filled to 100% there is no room, and the update then adds an entry to every index whose
-- predicate the row matches. The run made 37,460 updates of messages, 4,174 of them HOT
-- (10,507 of 48,685 with the pages written from now on filled to 80%). Claims and finishes
-- change dispatch and are never HOT; the space their old versions leave is reclaimed on the
-- page.
ALTER TABLE messages SET (fillfactor = 80);

-- A batch matches the references of all its receipts at once (provider = $1 AND provider_ref
-- IN (...)). With statistics that lagged the table, the planner used (provider, provider_ref)
-- for the provider alone and filtered every message of the provider by reference: 1,001 index
-- entries and 4 to 6 ms for 61 receipts. With the reference first, the list is the index
-- condition. The one-receipt match and the stranded-receipt join read it as well either way.
DROP INDEX messages_provider_ref;
CREATE INDEX messages_provider_ref ON messages (provider_ref, provider) WHERE provider_ref IS NOT NULL;
