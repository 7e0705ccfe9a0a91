-- Chunk vectors for hybrid (dense + full-text) retrieval, stored with
-- pgvector, in schema `public` (which every connection has on its
-- search_path after groundcite's schema). Creating the extension needs a
-- superuser, or pgvector created in this database beforehand (IF NOT EXISTS
-- then makes this a no-op); `.ci/pg.sh` creates it in template1 and in the
-- test database.
--
-- `files.model_id` names the embedding model a file's chunks were embedded
-- with (NULL: ingested without a model); every chunk of such a file has one
-- row in `chunk_vectors`, deleted with its chunk. The dimension is not fixed
-- in the column type: it is the model's, and search is exact (a scan), so no
-- index needs it.
CREATE EXTENSION IF NOT EXISTS vector SCHEMA public;

ALTER TABLE files ADD COLUMN model_id text;

CREATE TABLE chunk_vectors (
    chunk_seq bigint PRIMARY KEY REFERENCES chunks (seq) ON DELETE CASCADE,
    embedding vector NOT NULL
);
