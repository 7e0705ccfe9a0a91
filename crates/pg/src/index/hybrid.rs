//! Hybrid search in PostgreSQL ([`PgIndex::search_hybrid`]): the
//! full-text side over the chunks holding the query's rarest lexemes, the
//! dense side exact or through the approximate (HNSW) index the ingest
//! builds ([`PgIndex::index_vectors`]), fused as the embedded index fuses.
//!
//! Through the index, as the embedded index's approximate search does:
//! the chunks nearest by their own vector
//! ([`crate::PgOptions::ann_candidates`]), a shortlist of them by their similarity estimated with their units'
//! sign codes (table `unit_codes`, migration 7; [`shortlist`]), then the
//! shortlist and the full-text top scored exactly with their units. A
//! chunk's own vector alone says too little of its best unit: scoring the
//! 400 nearest exactly found 48.8% of the exact dense top 10 at a million
//! chunks.

use std::collections::HashMap;

use groundcite_index::ann::SignCodes;
use groundcite_index::fusion::{self, Fusion, LexicalCandidates, LexicalHit};
use groundcite_index::vectors::{ANN_RERANK, DenseHit, UnitVectors, dense_similarity};
use groundcite_index::{Chunk, Hit, Progress, query_words};
use tokio_postgres::{Row, Transaction};

use super::{CHUNK_COLUMNS, TERMS_SQL, TermParams, chunk_from_row, is_transient, term_params};
use crate::{Error, PgIndex};

/// The lexical side of hybrid search: the same ranking as [`super::search_sql`]
/// (same parameters, but `$1` is the [`candidate_query`]), only
/// each chunk's `seq` and raw rank.
fn lexical_sql(n: usize) -> String {
    let terms = TermParams { first: 3, n };
    format!(
        "SELECT c.seq, ({rank})::float4 AS rank
         FROM chunks c
         WHERE c.tsv @@ to_tsquery('english', $1)
         ORDER BY rank DESC, c.seq
         LIMIT $2",
        rank = terms.rank(),
    )
}

/// The chunks `$1` (their `seq`s) with their normalised lexical score for
/// `n` query lexemes (each its word and idf, from `$2` on).
fn chunks_by_seq_sql(n: usize) -> String {
    let score = if n == 0 {
        "0::float4".to_string()
    } else {
        TermParams { first: 2, n }.coverage("c")
    };
    format!("SELECT {CHUNK_COLUMNS}, {score}, c.seq FROM chunks c WHERE c.seq = ANY($1)")
}

/// Every chunk with a vector: its file key and id, its inner product with
/// the query vector `$1` (the cosine: vectors are unit length) and its best
/// unit's (NULL without units). Ranked in Rust by
/// [`groundcite_index::vectors::dense_similarity`], as the embedded index
/// ranks.
const DENSE_SQL: &str = "
SELECT v.chunk_seq, c.file_key, c.id,
       (-(v.embedding <#> $1::float4[]::vector))::float4 AS cosine,
       u.best
FROM chunk_vectors v JOIN chunks c ON c.seq = v.chunk_seq
LEFT JOIN (SELECT chunk_seq, max(-(embedding <#> $1::float4[]::vector))::float4 AS best
           FROM unit_vectors GROUP BY chunk_seq) u ON u.chunk_seq = v.chunk_seq";

/// The name of the approximate (HNSW) index over the chunk vectors of
/// dimension `dim` ([`PgIndex::index_vectors`]).
fn ann_index_name(dim: usize) -> String {
    format!("chunk_vectors_ann_{dim}")
}

/// Whether the approximate index named `$1` exists in the index's schema.
const ANN_EXISTS_SQL: &str =
    "SELECT to_regclass(format('%I.%I', current_schema(), $1::text)) IS NOT NULL";

/// Opens the transaction of a search through the approximate index for
/// `candidates` chunks, its settings for it alone: an iterative index scan
/// (pgvector 0.8; one pass of `hnsw.ef_search` gives at most 1,000 rows)
/// that goes on until `candidates` rows, and the index preferred to a scan
/// of the table, so that the plan is the same at every size (the planner
/// would scan a small table) and what a small test index runs is what a
/// million chunks run.
fn ann_begin_sql(candidates: usize) -> String {
    format!(
        "BEGIN READ ONLY;
         SET LOCAL hnsw.ef_search = {};
         SET LOCAL hnsw.iterative_scan = relaxed_order;
         SET LOCAL enable_seqscan = off",
        candidates.clamp(1, 1_000)
    )
}

/// The `$2` chunks ([`crate::PgOptions::ann_candidates`]) whose vector (of
/// dimension `dim`) is nearest the query `$1` by inner product (the
/// index's order, relaxed: nearly best first), each with its cosine and
/// its units' codes (NULL without units; the layout of `unit_code` in
/// migration 7: per unit, its signs in `dim / 8` bytes, first value in the
/// high bit, then its mean absolute value as a big-endian float4).
fn near_sql(dim: usize) -> String {
    format!(
        "WITH near AS (
             SELECT chunk_seq, embedding::vector({dim}) <#> $1::float4[]::vector({dim}) AS ip
             FROM chunk_vectors
             WHERE vector_dims(embedding) = {dim}
             ORDER BY embedding::vector({dim}) <#> $1::float4[]::vector({dim})
             LIMIT $2::int8)
         SELECT near.chunk_seq, (-near.ip)::float4, u.codes
         FROM near LEFT JOIN unit_codes u ON u.chunk_seq = near.chunk_seq"
    )
}

/// The chunks `$2` (the shortlist of the approximate index's candidates and
/// the full-text top), each with its file key and id, its cosine with the
/// query `$1` and its best unit's (NULL without units), as [`DENSE_SQL`]
/// returns every chunk.
const SCORE_SQL: &str = "
SELECT v.chunk_seq, c.file_key, c.id,
       (-(v.embedding <#> $1::float4[]::vector))::float4,
       (SELECT max(-(u.embedding <#> $1::float4[]::vector))::float4
        FROM unit_vectors u WHERE u.chunk_seq = v.chunk_seq)
FROM chunk_vectors v JOIN chunks c ON c.seq = v.chunk_seq
WHERE v.chunk_seq = ANY($2::int8[])";

/// Adds to `codes` every unit's code in `stored`, a `unit_codes` row (see
/// [`near_sql`] for its layout). Fails, adding nothing, when `stored` is
/// not whole units of the codes' dimension.
fn push_unit_codes(stored: &[u8], codes: &mut SignCodes) -> Result<(), String> {
    let width = codes.dim().div_ceil(8);
    if !stored.len().is_multiple_of(width + 4) {
        return Err(format!(
            "{} bytes, not whole units of {} values ({} bytes each)",
            stored.len(),
            codes.dim(),
            width + 4
        ));
    }
    let mut bits = vec![0u8; width];
    for unit in stored.chunks_exact(width + 4) {
        // pgvector puts the first value in the high bit; the codes want it
        // in the low bit.
        for (b, &s) in bits.iter_mut().zip(&unit[..width]) {
            *b = s.reverse_bits();
        }
        let scale = f32::from_be_bytes(unit[width..].try_into().expect("4 bytes"));
        codes.push_code(&bits, scale)?;
    }
    Ok(())
}

/// Of the approximate index's candidates (rows of [`near_sql`]), the
/// [`ANN_RERANK`] best by [`dense_similarity`] of their cosine and their
/// best unit's estimate from its sign code (as the embedded index
/// shortlists its candidates); ties by `seq`. A candidate without codes
/// (a chunk without units) is estimated by its cosine alone. Fails on
/// codes that are not whole units of the query's dimension.
fn shortlist(rows: &[Row], query: &[f32]) -> Result<Vec<i64>, Error> {
    let mut codes = SignCodes::new(query.len());
    // Each candidate's seq, cosine and rows in `codes`.
    let mut candidates = Vec::with_capacity(rows.len());
    for row in rows {
        let (seq, cosine): (i64, f32) = (row.get(0), row.get(1));
        let stored: Option<&[u8]> = row.get(2);
        let stored = stored.unwrap_or_default();
        let first = codes.len();
        push_unit_codes(stored, &mut codes)
            .map_err(|e| Error::Vectors(format!("the unit codes of chunk {seq}: {e}")))?;
        candidates.push((seq, cosine, first..codes.len()));
    }
    let table = codes.query(query);
    let mut estimated: Vec<(f32, i64)> = candidates
        .into_iter()
        .map(|(seq, cosine, units)| {
            let best = units.map(|u| table.dot(u)).reduce(f32::max);
            (dense_similarity(cosine, best), seq)
        })
        .collect();
    estimated.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    estimated.truncate(ANN_RERANK);
    Ok(estimated.into_iter().map(|(_, seq)| seq).collect())
}

/// The unit vectors of chunks `$1`, chunk by chunk in unit order.
const UNITS_SQL: &str = "
SELECT chunk_seq, embedding::float4[] FROM unit_vectors
WHERE chunk_seq = ANY($1) ORDER BY chunk_seq, ord";

/// The chunks hybrid search's full-text side ranks, as a `tsquery` of the
/// query's lexemes as [`TERMS_SQL`] returned them (each its document
/// frequency and word), chosen by the embedded index's rule
/// ([`fusion::lexical_candidates`]): one of the rarest while their
/// frequencies fit in `budget` (a lexeme in no chunk first: it costs
/// nothing), or both of the two rarest, or every lexeme (budget 0, or all
/// of them fit).
fn candidate_query(terms: &[(i64, &str)], budget: usize) -> String {
    let dfs: Vec<u64> = terms.iter().map(|&(df, _)| df.max(0) as u64).collect();
    match fusion::lexical_candidates(&dfs, budget) {
        LexicalCandidates::Every => terms.iter().map(|t| t.1).collect::<Vec<_>>().join(" | "),
        LexicalCandidates::AnyOf(taken) => taken
            .iter()
            .map(|&i| terms[i].1)
            .collect::<Vec<_>>()
            .join(" | "),
        LexicalCandidates::BothOf(a, b) => format!("{} & {}", terms[a].1, terms[b].1),
    }
}

impl PgIndex {
    /// Hybrid search: the top `k` chunks by `fusion` of the dense ranking
    /// (the query's vector `vector`, of the model the index was ingested
    /// with; exact, or through the approximate index once it is built: see
    /// the module docs) and the full-text ranking, fused by the embedded
    /// index's [`fusion::fuse`]; each hit's score is
    /// [`fusion::hybrid_score`] of its cosine and lexical coverage, and its
    /// raw score the full-text rank (0 outside the lexical top).
    pub fn search_hybrid(
        &self,
        query: &str,
        vector: &[f32],
        k: usize,
        fusion: &Fusion,
    ) -> Result<Vec<Hit>, Error> {
        if k == 0 {
            return Ok(Vec::new());
        }
        let words = query_words(query);
        let depth = i64::try_from(fusion.lexical_depth).unwrap_or(i64::MAX);
        let query_vector = vector.to_vec();
        let dim = vector.len();
        let ann_name = ann_index_name(dim);
        let (dense, lexical, term_words, idfs) = self.client.retry(is_transient, || async {
            let client = self.client.conn().await?;
            // The query's lexemes and whether the approximate index exists,
            // sent together (one round trip).
            let (terms, ann) = tokio::try_join!(
                async {
                    if words.is_empty() {
                        return Ok(Vec::new());
                    }
                    let stmt = client.prepare_cached(TERMS_SQL).await?;
                    client.query(&stmt, &[&words]).await
                },
                async {
                    let stmt = client.prepare_cached(ANN_EXISTS_SQL).await?;
                    Ok(client
                        .query_one(&stmt, &[&ann_name])
                        .await?
                        .get::<_, bool>(0))
                },
            )?;
            let (term_words, idfs) = term_params(&terms);
            let dfs: Vec<(i64, &str)> = terms.iter().map(|r| (r.get(2), r.get(1))).collect();
            let any = candidate_query(&dfs, self.client.opts.lexical_candidates);
            let mut lexical = Vec::new();
            let mut lexical_seqs: Vec<i64> = Vec::new();
            if !term_words.is_empty() {
                let mut params: Vec<&(dyn tokio_postgres::types::ToSql + Sync)> =
                    vec![&any, &depth];
                for (w, f) in term_words.iter().zip(&idfs) {
                    params.push(w);
                    params.push(f);
                }
                let stmt = client
                    .prepare_cached(&lexical_sql(term_words.len()))
                    .await?;
                let rows = client.query(&stmt, &params).await?;
                lexical_seqs = rows.iter().map(|r| r.get(0)).collect();
                lexical = rows
                    .iter()
                    .map(|r| LexicalHit {
                        id: r.get::<_, i64>(0).to_string(),
                        raw: r.get(1),
                    })
                    .collect();
            }
            // With the approximate index, its candidates' shortlist and the
            // full-text top are scored; without it (fewer than
            // `ann_min_chunks` chunks when last ingested), every chunk.
            let rows = if ann {
                let near = client.prepare_cached(&near_sql(dim)).await?;
                let candidates = self.client.opts.ann_candidates;
                let limit = i64::try_from(candidates).unwrap_or(i64::MAX);
                let params: [&(dyn tokio_postgres::types::ToSql + Sync); 2] =
                    [&query_vector, &limit];
                let begin = ann_begin_sql(candidates);
                // The scan's settings hold for this statement's transaction
                // alone (a pooler in transaction mode keeps them with the
                // statement), the three sent together (one round trip,
                // `biased`: in this order). All three complete, so the
                // connection never goes back to the pool inside the
                // transaction.
                let (begin, near, commit) = tokio::join!(
                    biased;
                    client.batch_execute(&begin),
                    client.query(&near, &params),
                    client.batch_execute("COMMIT"),
                );
                begin?;
                commit?;
                let mut seqs = shortlist(&near?, &query_vector)?;
                seqs.extend(&lexical_seqs);
                let stmt = client.prepare_cached(SCORE_SQL).await?;
                client.query(&stmt, &[&query_vector, &seqs]).await?
            } else {
                let stmt = client.prepare_cached(DENSE_SQL).await?;
                client.query(&stmt, &[&query_vector]).await?
            };
            let mut ranked: Vec<(f32, String, String, i64)> = rows
                .iter()
                .map(|r| {
                    let similarity = dense_similarity(r.get(3), r.get(4));
                    (similarity, r.get(1), r.get(2), r.get(0))
                })
                .collect();
            // Best first; ties by file key and chunk id in byte order, as
            // the embedded index's exact search orders them.
            ranked.sort_by(|a, b| {
                b.0.total_cmp(&a.0)
                    .then_with(|| (&a.1, &a.2).cmp(&(&b.1, &b.2)))
            });
            let dense: Vec<DenseHit> = ranked
                .into_iter()
                .map(|(cosine, _, _, seq)| DenseHit {
                    key: String::new(),
                    id: seq.to_string(),
                    cosine,
                })
                .collect();
            Ok((dense, lexical, term_words, idfs))
        })?;
        let fused = fusion::fuse(&dense, &lexical, fusion, k);
        let seqs: Vec<i64> = fused.iter().filter_map(|f| f.id.parse().ok()).collect();
        let (rows, unit_rows) = self.client.retry(is_transient, || async {
            let client = self.client.conn().await?;
            let mut params: Vec<&(dyn tokio_postgres::types::ToSql + Sync)> = vec![&seqs];
            for (w, f) in term_words.iter().zip(&idfs) {
                params.push(w);
                params.push(f);
            }
            // Sent together: one round trip.
            Ok(tokio::try_join!(
                async {
                    let sql = chunks_by_seq_sql(term_words.len());
                    let stmt = client.prepare_cached(&sql).await?;
                    client.query(&stmt, &params).await
                },
                async {
                    let stmt = client.prepare_cached(UNITS_SQL).await?;
                    client.query(&stmt, &[&seqs]).await
                },
            )?)
        })?;
        // Every hit has its chunk's unit vectors (none for a chunk without
        // units), as the embedded index stores them.
        let mut units: HashMap<String, UnitVectors> = seqs
            .iter()
            .map(|s| {
                (
                    s.to_string(),
                    UnitVectors {
                        dim,
                        data: Vec::new(),
                    },
                )
            })
            .collect();
        for row in &unit_rows {
            let seq: i64 = row.get(0);
            let values: Vec<f32> = row.get(1);
            if let Some(u) = units.get_mut(&seq.to_string()) {
                u.data.extend(values);
            }
        }
        let mut by_seq: HashMap<String, (Chunk, f32)> = rows
            .iter()
            .map(|row| {
                let coverage = row.get::<_, Option<f32>>(9).unwrap_or(0.0).clamp(0.0, 1.0);
                let seq: i64 = row.get(10);
                (seq.to_string(), (chunk_from_row(row), coverage))
            })
            .collect();
        Ok(fused
            .into_iter()
            .filter_map(|f| {
                let (chunk, coverage) = by_seq.remove(&f.id)?;
                Some(Hit {
                    chunk,
                    score: fusion::hybrid_score(f.cosine, coverage),
                    raw_score: f.raw,
                    units: units.remove(&f.id),
                })
            })
            .collect())
    }
}

impl PgIndex {
    /// Builds the approximate index over the chunk vectors (HNSW, inner
    /// product, over vectors of the model's dimension: [`ann_index_name`])
    /// once there are [`crate::PgOptions::ann_min_chunks`] of them, as the
    /// embedded index does; from then on PostgreSQL keeps it current on
    /// every insert and delete, and hybrid search reads its candidates
    /// rather than every vector.
    pub(super) fn index_vectors(
        &self,
        tx: &Transaction<'_>,
        progress: &mut dyn FnMut(Progress),
    ) -> Result<(), Error> {
        let dim: Option<i32> = self
            .client
            .block(tx.query_opt(
                "SELECT vector_dims(embedding) FROM chunk_vectors LIMIT 1",
                &[],
            ))?
            .map(|r| r.get(0));
        let Some(dim) = dim.and_then(|d| usize::try_from(d).ok()) else {
            return Ok(());
        };
        let name = ann_index_name(dim);
        let exists: bool = self
            .client
            .block(tx.query_one(ANN_EXISTS_SQL, &[&name]))?
            .get(0);
        if exists {
            return Ok(());
        }
        let min = i64::try_from(self.client.opts.ann_min_chunks).unwrap_or(i64::MAX);
        let enough: i64 = self
            .client
            .block(tx.query_one(
                "SELECT count(*) FROM (SELECT 1 FROM chunk_vectors LIMIT $1) v",
                &[&min],
            ))?
            .get(0);
        if enough < min {
            return Ok(());
        }
        let chunks: i64 = self
            .client
            .block(tx.query_one("SELECT count(*) FROM chunk_vectors", &[]))?
            .get(0);
        progress(Progress::IndexingVectors {
            chunks: usize::try_from(chunks).unwrap_or(usize::MAX),
        });
        self.client.block(tx.batch_execute(&format!(
            "CREATE INDEX {name} ON chunk_vectors
             USING hnsw ((embedding::vector({dim})) vector_ip_ops)
             WHERE vector_dims(embedding) = {dim}"
        )))?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use groundcite_index::ann::SignCodes;

    use super::{candidate_query, push_unit_codes};

    /// A `unit_codes` row of `units` as migration 7's `unit_code` writes
    /// it: per unit, the signs with the first value in the high bit, then
    /// the mean absolute value, big-endian.
    fn stored(units: &[f32], dim: usize) -> Vec<u8> {
        let mut out = Vec::new();
        for unit in units.chunks_exact(dim) {
            let mut bits = vec![0u8; dim.div_ceil(8)];
            for (i, &x) in unit.iter().enumerate() {
                if x > 0.0 {
                    bits[i / 8] |= 0x80 >> (i % 8);
                }
            }
            out.extend(bits);
            let mean = unit.iter().map(|x| x.abs()).sum::<f32>() / dim as f32;
            out.extend(mean.to_be_bytes());
        }
        out
    }

    #[test]
    fn stored_unit_codes_read_as_the_codes_of_their_vectors() {
        for dim in [12, 16] {
            let units: Vec<f32> = (0..3 * dim)
                .map(|i| ((i * 7 + 3) % 11) as f32 - 5.0)
                .collect();
            let mut want = SignCodes::new(dim);
            want.push_rows(&units);
            let mut got = SignCodes::new(dim);
            push_unit_codes(&stored(&units, dim), &mut got).unwrap();
            assert_eq!(got, want, "dim {dim}");
            // Not whole units: refused.
            let mut short = stored(&units, dim);
            short.pop();
            let err = push_unit_codes(&short, &mut SignCodes::new(dim)).unwrap_err();
            assert!(err.contains("not whole units"), "{err}");
        }
        // No units (a chunk without any): nothing added.
        let mut none = SignCodes::new(8);
        push_unit_codes(&[], &mut none).unwrap();
        assert!(none.is_empty());
    }

    #[test]
    fn candidates_come_from_the_rarest_lexemes_within_the_budget() {
        let terms = [
            (9_000, "team"),
            (40, "typo"),
            (1_200, "chat"),
            (0, "zzz"),
            (300, "stuck"),
        ];
        // Rarest first: zzz (in no chunk) costs nothing, 40 + 300 + 1,200
        // = 1,540 fit in 2,000; team does not.
        assert_eq!(candidate_query(&terms, 2_000), "zzz | typo | stuck | chat");
        assert_eq!(candidate_query(&terms, 340), "zzz | typo | stuck");
        // 0, or every lexeme within the budget: every lexeme.
        let every = "team | typo | chat | zzz | stuck";
        assert_eq!(candidate_query(&terms, 0), every);
        assert_eq!(candidate_query(&terms, 20_000), every);
        // The rarest alone over the budget: the chunks with both of the two rarest.
        let common = [(50_000, "leave"), (20_000, "annual"), (90_000, "pay")];
        assert_eq!(candidate_query(&common, 3_000), "annual & leave");
        // Unless a lexeme is in no chunk: it is the rarest, and nothing
        // else fits beside it.
        let offsites = [(50_000, "leave"), (0, "offsit"), (20_000, "annual")];
        assert_eq!(candidate_query(&offsites, 3_000), "offsit");
        // One lexeme over the budget is still ranked.
        assert_eq!(candidate_query(&[(50_000, "leave")], 3_000), "leave");
        assert_eq!(candidate_query(&[], 3_000), "");
    }
}
