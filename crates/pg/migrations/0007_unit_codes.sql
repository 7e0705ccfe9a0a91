-- Sign codes of the answer units: per chunk with units, one row holding
-- every unit's code, each `dim / 8` bytes of signs (pgvector's
-- `binary_quantize`: a bit per value, set when positive, first value in
-- the high bit) then the unit's mean absolute value (a big-endian float4).
-- Hybrid search through the approximate index estimates each candidate's
-- best unit from them (as the embedded index does from the same codes)
-- and scores exactly only the best estimates: 52 bytes a unit of 384
-- values, where reading the unit's vector takes a 1.5 kB row. Order
-- within a row does not matter (the estimate is a maximum).
--
-- Kept by statement-level triggers on `unit_vectors`: an insert appends
-- its units' codes to their chunks' rows, a delete drops the rows of its
-- chunks (their units are all written again after). Needs pgvector 0.8:
-- 0.7 for `binary_quantize`, 0.8 for the iterative index scans the search
-- runs.
DO $$
DECLARE
    version text := (SELECT extversion FROM pg_extension WHERE extname = 'vector');
BEGIN
    IF string_to_array(version, '.')::int[] < '{0,8}' THEN
        RAISE EXCEPTION 'the pgvector extension is version %, older than 0.8', version;
    END IF;
END $$;

CREATE FUNCTION unit_code(v vector) RETURNS bytea
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT substring(varbit_send(binary_quantize(v)::varbit) FROM 5)
        || float4send((SELECT avg(abs(x)) FROM unnest(v::real[]) AS x)::real)
$$;

CREATE TABLE unit_codes (
    chunk_seq bigint PRIMARY KEY REFERENCES chunks (seq) ON DELETE CASCADE,
    codes bytea NOT NULL
);

INSERT INTO unit_codes (chunk_seq, codes)
    SELECT chunk_seq, string_agg(unit_code(embedding), ''::bytea ORDER BY ord)
    FROM unit_vectors GROUP BY chunk_seq;

CREATE FUNCTION unit_codes_insert() RETURNS trigger
LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
BEGIN
    INSERT INTO unit_codes (chunk_seq, codes)
        SELECT chunk_seq, string_agg(unit_code(embedding), ''::bytea ORDER BY ord)
        FROM new_rows GROUP BY chunk_seq
    ON CONFLICT (chunk_seq) DO UPDATE SET codes = unit_codes.codes || EXCLUDED.codes;
    RETURN NULL;
END $$;

CREATE FUNCTION unit_codes_delete() RETURNS trigger
LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
BEGIN
    DELETE FROM unit_codes WHERE chunk_seq IN (SELECT chunk_seq FROM old_rows);
    RETURN NULL;
END $$;

CREATE TRIGGER unit_codes_insert AFTER INSERT ON unit_vectors
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION unit_codes_insert();
CREATE TRIGGER unit_codes_delete AFTER DELETE ON unit_vectors
    REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION unit_codes_delete();
