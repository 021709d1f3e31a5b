-- 0018_drop_interval_slices: the ~3-hour slices of a 2.0.0 report are no longer copied into rows.
--
-- interval_slices (0007) held one row per slice and resource scalar of every 2.0.0 report (12 a
-- report on the simulator's fleet), written by the fold and read by no endpoint, report or rule.
-- Their index pages were a fifth of what the fold wrote for such a report. The slices stay in the
-- raw document every payload keeps (payload_raw): a release that answers from them folds them
-- from there (lifeline refold), as it would any new figure. PostgreSQL never stored them.
DROP TABLE interval_slices;
