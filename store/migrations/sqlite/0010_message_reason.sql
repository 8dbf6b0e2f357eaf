-- 0010_message_reason: why a message did not end delivered or submitted (docs/api.md, "Why a
-- message failed"). reason_code is the code of what ended it: the provider's (its adapter's or
-- gateway's) where it gave one, else one of Switchboard's own; reason_by says who gave it
-- (provider, switchboard or operator). Both are '' while a message has no reason (queued,
-- sending, submitted, delivered), and they are written by the statement that makes the final
-- move (a finish, a receipt, a cancel, the expiry sweep), in its transaction; an operator's
-- retry or settle clears them. They hold no recipient and no content: retention erases them
-- with the message's record, not with its payload. Messages that ended before this migration
-- have no reason.
ALTER TABLE messages ADD COLUMN reason_code TEXT NOT NULL DEFAULT '';
ALTER TABLE messages ADD COLUMN reason_by TEXT NOT NULL DEFAULT '';
