-- Answer-unit vectors: one row per answer unit of a chunk
-- (`groundcite_core::unit::units` of its section and text: sentences, list
-- items after their lead-in, table rows after their header), in unit
-- order, embedded at ingest with the chunk's vector. Dense ranking reads
-- each chunk's best unit; the answerability judgement reuses them so an
-- `ask` embeds only its question.
CREATE TABLE unit_vectors (
    chunk_seq bigint NOT NULL REFERENCES chunks (seq) ON DELETE CASCADE,
    ord integer NOT NULL,
    embedding vector NOT NULL,
    PRIMARY KEY (chunk_seq, ord)
);

-- Files embedded before this migration have chunk vectors and no unit
-- vectors: they now read as embedded with another model, so the engine
-- asks for an ingest and the next ingest re-embeds them (and says so).
UPDATE files SET model_id = model_id || ' (format 1, no unit vectors)'
WHERE model_id IS NOT NULL;
