-- 0003_reserved: this number belongs to a migration written on another branch at the same time.
-- The file stands in for it so that the numbers stay without a gap; it changes nothing, and is
-- replaced by that migration when the branches meet.
SELECT 1;
