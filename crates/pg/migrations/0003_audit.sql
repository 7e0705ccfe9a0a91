-- The audit log of the answering nodes: one row per served answer (and per
-- checked report), the same columns as the SQLite audit log
-- (groundcite-server's `audit` module). `request_id` is unique: writers
-- insert with ON CONFLICT (request_id) DO NOTHING, so a batch retried after
-- an ambiguous commit (connection lost while committing) never duplicates a
-- record.
CREATE TABLE audit (
    id           bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,  -- insertion order
    request_id   text NOT NULL UNIQUE,    -- the x-request-id of the HTTP request
    ts           timestamptz NOT NULL,    -- when the answer was served
    kind         text NOT NULL,           -- ask | check
    question     text,
    status       text NOT NULL,           -- ok | unverified | no_evidence
    grounded     boolean NOT NULL,
    refusal      text,                    -- refusal cause, or the refusal form for checks
    regenerated  boolean NOT NULL,
    contradicted integer NOT NULL,
    unsupported  integer NOT NULL,
    uncited      integer NOT NULL,
    bad_ids      jsonb NOT NULL,          -- ids never sent, cited by any attempt
    passage_ids  jsonb NOT NULL,          -- ids of the passages sent, in order
    attempts     json NOT NULL,           -- [{raw, bad_ids, error}] per generation attempt
    timings      json NOT NULL,           -- {retrieve_ms, generate_ms, check_ms, total_ms}
    report       json NOT NULL            -- the answer object or check report, exactly as served
);

CREATE INDEX audit_ts ON audit (ts);
CREATE INDEX audit_incidents ON audit (id)
    WHERE status = 'unverified' OR bad_ids <> '[]'::jsonb OR refusal = 'validation'
       OR contradicted + unsupported > 0;
