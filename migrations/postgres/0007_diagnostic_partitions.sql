-- Diagnostics and their frames partitioned by day, as the raw documents are (0001), so retention
-- drops a day's diagnostics whole instead of deleting them row by row: `day` is the day of the
-- diagnostic's payload (payloads.day); a node creates diagnostics_YYYYMMDD and
-- diagnostic_frames_YYYYMMDD with payload_raw_YYYYMMDD for days from 8 days ago to tomorrow, and
-- other days go to the default partitions. Frames and the app states of a diagnostic carry its
-- day, so a sample's frames are read from one partition. No foreign key points at the
-- partitioned diagnostics (a partition could not be dropped while one did): the writer keeps
-- frames and states with their diagnostic, and retention removes a day from all three.
-- The rows already stored move over in this migration's transaction.

CREATE TABLE diagnostics_by_day (
    day date NOT NULL,
    id bigint NOT NULL,
    payload bigint NOT NULL REFERENCES payloads (id) ON DELETE CASCADE,
    ordinal integer NOT NULL,
    kind text NOT NULL,
    app_version text NOT NULL,
    os_version text NOT NULL,
    device_type text NOT NULL,
    occurred_at bigint NOT NULL,
    exception_type bigint,
    exception_code bigint,
    signal bigint,
    termination_reason text,
    termination_category text,
    pid bigint,
    signpost_data text,
    exception_message text,
    crash_group bigint NOT NULL REFERENCES crash_groups (id),
    PRIMARY KEY (day, id),
    UNIQUE (day, payload, ordinal)
) PARTITION BY RANGE (day);
CREATE TABLE diagnostics_default PARTITION OF diagnostics_by_day DEFAULT;

CREATE TABLE diagnostic_frames_by_day (
    day date NOT NULL,
    diagnostic bigint NOT NULL,
    position integer NOT NULL,
    binary_name text,
    binary_uuid text,
    address bigint NOT NULL,
    "offset" bigint NOT NULL,
    PRIMARY KEY (day, diagnostic, position)
) PARTITION BY RANGE (day);
CREATE TABLE diagnostic_frames_default PARTITION OF diagnostic_frames_by_day DEFAULT;

INSERT INTO diagnostics_by_day
SELECT p.day, d.id, d.payload, d.ordinal, d.kind, d.app_version, d.os_version, d.device_type, d.occurred_at,
    d.exception_type, d.exception_code, d.signal, d.termination_reason, d.termination_category, d.pid,
    d.signpost_data, d.exception_message, d.crash_group
FROM diagnostics d JOIN payloads p ON p.id = d.payload;

INSERT INTO diagnostic_frames_by_day
SELECT d.day, f.diagnostic, f.position, f.binary_name, f.binary_uuid, f.address, f."offset"
FROM diagnostic_frames f JOIN diagnostics_by_day d ON d.id = f.diagnostic;

CREATE TABLE diagnostic_states_by_day (
    day date NOT NULL,
    diagnostic bigint NOT NULL,
    app_state bigint NOT NULL REFERENCES app_state_values (id),
    PRIMARY KEY (day, diagnostic, app_state)
);

INSERT INTO diagnostic_states_by_day
SELECT d.day, s.diagnostic, s.app_state FROM diagnostic_states s JOIN diagnostics_by_day d ON d.id = s.diagnostic;

-- The id sequence outlives the old table.
ALTER SEQUENCE diagnostics_id_seq OWNED BY NONE;
DROP TABLE diagnostic_states;
DROP TABLE diagnostic_frames;
DROP TABLE diagnostics;
ALTER TABLE diagnostics_by_day RENAME TO diagnostics;
ALTER TABLE diagnostic_frames_by_day RENAME TO diagnostic_frames;
ALTER TABLE diagnostic_states_by_day RENAME TO diagnostic_states;
ALTER TABLE diagnostics ALTER COLUMN id SET DEFAULT nextval('diagnostics_id_seq');
ALTER SEQUENCE diagnostics_id_seq OWNED BY diagnostics.id;

-- The sample of a crash group: its most recent diagnostic.
CREATE INDEX diagnostics_group ON diagnostics (crash_group, occurred_at);
