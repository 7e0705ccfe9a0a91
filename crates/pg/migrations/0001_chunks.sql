-- Files and their chunks. `files` is the manifest of the embedded index: one
-- row per ingested file with the BLAKE3 hash of its bytes and of the options
-- that shape chunks. `chunks` holds the same fields as the embedded index
-- plus a generated English tsvector (text weight A, section B, title C)
-- with a GIN index.
CREATE TABLE files (
    key         text PRIMARY KEY,
    root        text NOT NULL,
    path        text NOT NULL,
    hash        text NOT NULL,
    chunks      integer NOT NULL,
    ingested_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX files_root_idx ON files (root);

CREATE TABLE chunks (
    seq        bigserial PRIMARY KEY,
    file_key   text NOT NULL,
    id         text NOT NULL,
    path       text NOT NULL,
    title      text NOT NULL,
    section    text NOT NULL,
    url        text NOT NULL,
    text       text NOT NULL,
    start_byte bigint NOT NULL,
    end_byte   bigint NOT NULL,
    -- Exact JSON text as the embedded index stores it (jsonb would reorder keys).
    metadata   text NOT NULL,
    tsv        tsvector GENERATED ALWAYS AS (
                   setweight(to_tsvector('english'::regconfig, text), 'A')
                || setweight(to_tsvector('english'::regconfig, section), 'B')
                || setweight(to_tsvector('english'::regconfig, title), 'C')
               ) STORED
);
CREATE INDEX chunks_file_key_idx ON chunks (file_key);
CREATE INDEX chunks_id_idx ON chunks (id);
CREATE INDEX chunks_tsv_idx ON chunks USING gin (tsv);
