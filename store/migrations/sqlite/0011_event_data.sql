-- 0011_event_data: the data of an event written with the change it reports, for the types
-- whose data is not read from their subject when they are sent (device.unregistered: the
-- message, the provider and when, and the device token only for an access profile that opts
-- in). '' for the other types. A row and its data are erased together by the outbox's
-- retention.
ALTER TABLE webhook_events ADD COLUMN data TEXT NOT NULL DEFAULT '';
