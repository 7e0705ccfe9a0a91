//! Hybrid search in PostgreSQL ([`PgIndex::search_hybrid`]): the
//! full-text side over the chunks holding the query's rarest lexemes, the
//! dense side exact or through the approximate (HNSW) index the ingest
//! builds ([`PgIndex::index_vectors`]), fused as the embedded index fuses.

use std::collections::HashMap;

use groundcite_index::fusion::{self, Fusion, LexicalHit};
use groundcite_index::vectors::{DenseHit, UnitVectors, dense_similarity};
use groundcite_index::{Chunk, Hit, Progress, query_words};
use tokio_postgres::Transaction;

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

/// How many chunks the approximate index proposes to a hybrid search
/// (`hnsw.ef_search` is set to it): twice [`fusion::DENSE_DEPTH`], every
/// one then scored exactly with its units.
const ANN_CANDIDATES: usize = 2 * fusion::DENSE_DEPTH;

/// Opens the transaction of a search through the approximate index, with
/// `hnsw.ef_search` at [`ANN_CANDIDATES`] for it alone, and the index
/// preferred to a scan of the table: the plan is the same at every size
/// (the planner would scan a small table), so what a small test index runs
/// is what a million chunks run.
fn ann_begin_sql() -> String {
    format!(
        "BEGIN READ ONLY; SET LOCAL hnsw.ef_search = {ANN_CANDIDATES}; SET LOCAL enable_seqscan = off"
    )
}

/// The dense side of hybrid search through the approximate index over
/// vectors of dimension `dim`: the [`ANN_CANDIDATES`] chunks whose own
/// vector is nearest the query `$1` (by inner product, the index's order)
/// and the chunks `$2` (the full-text top, whose cosines fusion needs), each with
/// its file key and id, its cosine and its best unit's (NULL without
/// units), as [`DENSE_SQL`] returns every chunk.
fn dense_ann_sql(dim: usize) -> String {
    format!(
        "WITH near AS (
             SELECT chunk_seq FROM chunk_vectors
             WHERE vector_dims(embedding) = {dim}
             ORDER BY embedding::vector({dim}) <#> $1::float4[]::vector({dim})
             LIMIT {ANN_CANDIDATES}),
         cand AS (SELECT chunk_seq FROM near UNION SELECT unnest($2::int8[]))
         SELECT v.chunk_seq, c.file_key, c.id,
                (-(v.embedding <#> $1::float4[]::vector))::float4,
                (SELECT max(-(u.embedding <#> $1::float4[]::vector))::float4
                 FROM unit_vectors u WHERE u.chunk_seq = v.chunk_seq)
         FROM cand
         JOIN chunk_vectors v ON v.chunk_seq = cand.chunk_seq
         JOIN chunks c ON c.seq = v.chunk_seq"
    )
}

/// The unit vectors of chunks `$1`, chunk by chunk in unit order.
const UNITS_SQL: &str = "
SELECT chunk_seq, embedding::float4[] FROM unit_vectors
WHERE chunk_seq = ANY($1) ORDER BY chunk_seq, ord";

/// The chunks hybrid search's full-text side ranks, as a `tsquery` of the
/// query's lexemes as [`TERMS_SQL`] returned them: the rarest first while
/// their document frequencies sum to at most `budget`, as alternatives
/// (every lexeme when `budget` is 0); when even the rarest is in more
/// chunks than that, the chunks with both of the two rarest. `terms` are
/// each lexeme's document frequency and word; ties keep their order.
fn candidate_query(terms: &[(i64, &str)], budget: usize) -> String {
    let mut by_df = terms.to_vec();
    by_df.sort_by_key(|&(df, _)| df);
    let budget = i64::try_from(budget).unwrap_or(i64::MAX);
    if budget > 0 && by_df.len() >= 2 && by_df[0].0 > budget {
        return format!("{} & {}", by_df[0].1, by_df[1].1);
    }
    let mut total = 0i64;
    let mut words = Vec::new();
    for (df, word) in by_df {
        total = total.saturating_add(df.max(0));
        if budget > 0 && total > budget && !words.is_empty() {
            break;
        }
        words.push(word);
    }
    words.join(" | ")
}

impl PgIndex {
    /// Hybrid search: the top `k` chunks by `fusion` of the exact dense
    /// ranking (the query's vector `vector`, of the model the index was
    /// ingested with) and the full-text ranking, fused by the embedded
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
            // With the approximate index, its candidates and the full-text
            // top are scored; without it (fewer than `ann_min_chunks` chunks
            // when last ingested), every chunk.
            let rows = if ann {
                let stmt = client.prepare_cached(&dense_ann_sql(dim)).await?;
                let params: [&(dyn tokio_postgres::types::ToSql + Sync); 2] =
                    [&query_vector, &lexical_seqs];
                let begin_sql = ann_begin_sql();
                // The index's breadth is set for this statement's
                // transaction alone (a pooler in transaction mode keeps it
                // with the statement), the three sent together (one round
                // trip, `biased`: in this order). All three complete, so the
                // connection never goes back to the pool inside the
                // transaction.
                let (begin, rows, commit) = tokio::join!(
                    biased;
                    client.batch_execute(&begin_sql),
                    client.query(&stmt, &params),
                    client.batch_execute("COMMIT"),
                );
                begin?;
                commit?;
                rows?
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
    use super::candidate_query;

    #[test]
    fn candidates_come_from_the_rarest_lexemes_within_the_budget() {
        let terms = [
            (9_000, "team"),
            (40, "typo"),
            (1_200, "chat"),
            (0, "zzz"),
            (300, "stuck"),
        ];
        // Rarest first: 0 + 40 + 300 + 1,200 = 1,540 fit in 2,000; team does not.
        assert_eq!(candidate_query(&terms, 2_000), "zzz | typo | stuck | chat");
        assert_eq!(candidate_query(&terms, 340), "zzz | typo | stuck");
        // 0: every lexeme, rarest first.
        assert_eq!(
            candidate_query(&terms, 0),
            "zzz | typo | stuck | chat | team"
        );
        // The rarest alone over the budget: the chunks with both of the two rarest.
        let common = [(50_000, "leave"), (20_000, "annual"), (90_000, "pay")];
        assert_eq!(candidate_query(&common, 3_000), "annual & leave");
        // One lexeme over the budget is still ranked.
        assert_eq!(candidate_query(&[(50_000, "leave")], 3_000), "leave");
        assert_eq!(candidate_query(&[], 3_000), "");
    }
}
