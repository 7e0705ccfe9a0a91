-- Corpus statistics for the normalised score: the number of chunks and, per
-- lexeme, the number of chunks containing it (document frequency), kept
-- exact by statement-level triggers on every insert and delete of chunks.
-- Chunks are never updated in place (ingest deletes and re-inserts).
CREATE TABLE term_df (
    lexeme text PRIMARY KEY,
    df     bigint NOT NULL CHECK (df >= 0)
);

CREATE TABLE corpus_stats (
    singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton),
    chunks    bigint NOT NULL CHECK (chunks >= 0)
);

INSERT INTO corpus_stats (singleton, chunks) SELECT true, count(*) FROM chunks;
INSERT INTO term_df (lexeme, df)
    SELECT l, count(*) FROM chunks, unnest(tsvector_to_array(tsv)) AS l GROUP BY l;

CREATE FUNCTION chunks_stats_insert() RETURNS trigger
LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
BEGIN
    INSERT INTO term_df (lexeme, df)
        SELECT l, count(*) FROM new_rows, unnest(tsvector_to_array(new_rows.tsv)) AS l GROUP BY l
    ON CONFLICT (lexeme) DO UPDATE SET df = term_df.df + EXCLUDED.df;
    UPDATE corpus_stats SET chunks = chunks + (SELECT count(*) FROM new_rows);
    RETURN NULL;
END $$;

CREATE FUNCTION chunks_stats_delete() RETURNS trigger
LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
BEGIN
    UPDATE term_df SET df = term_df.df - gone.n
    FROM (SELECT l, count(*) AS n FROM old_rows, unnest(tsvector_to_array(old_rows.tsv)) AS l
          GROUP BY l) AS gone
    WHERE term_df.lexeme = gone.l;
    DELETE FROM term_df WHERE df = 0;
    UPDATE corpus_stats SET chunks = chunks - (SELECT count(*) FROM old_rows);
    RETURN NULL;
END $$;

CREATE FUNCTION chunks_forbid_update() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'chunks are immutable: delete and re-insert (term statistics depend on it)';
END $$;

CREATE TRIGGER chunks_stats_insert AFTER INSERT ON chunks
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION chunks_stats_insert();
CREATE TRIGGER chunks_stats_delete AFTER DELETE ON chunks
    REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION chunks_stats_delete();
CREATE TRIGGER chunks_forbid_update BEFORE UPDATE ON chunks
    FOR EACH ROW EXECUTE FUNCTION chunks_forbid_update();
