-- 0175: why a hub's job runs, as its requester wrote it (notes on an execute or a bulk
-- execute at the hub), for the site's log of it; the site's log carries them back.
ALTER TABLE hub_jobs ADD COLUMN notes TEXT NOT NULL DEFAULT '';
