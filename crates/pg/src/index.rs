//! [`PgIndex`]: the chunk index in PostgreSQL.

use std::collections::{HashMap, HashSet};
use std::path::PathBuf;

use groundcite_index::score::idf;
use groundcite_index::source::{self, Plan};
use groundcite_index::{
    Chunk, ChunkIndex, Hit, IngestError, IngestOptions, IngestSummary, Progress, query_words,
};
use tokio_postgres::Row;

use crate::client::Client;
use crate::migrate::{latest_version, lock_key, read_status};
use crate::{Error, PgOptions, SchemaStatus};

/// Chunk columns, in the order [`chunk_from_row`] reads them.
const CHUNK_COLUMNS: &str =
    "c.id, c.path, c.title, c.section, c.url, c.text, c.start_byte, c.end_byte, c.metadata";

/// The query's lexemes: each topic word analysed by the `english`
/// configuration (stop words vanish; words with the same stem meet), one
/// representative word per lexeme, its document frequency, and the number of
/// chunks.
const TERMS_SQL: &str = "
SELECT DISTINCT ON (x.lexeme) x.lexeme, x.word, coalesce(d.df, 0)::int8, s.chunks
FROM (SELECT w AS word, (tsvector_to_array(to_tsvector('english', w)))[1] AS lexeme
      FROM unnest($1::text[]) AS w) x
CROSS JOIN corpus_stats s
LEFT JOIN term_df d ON d.lexeme = x.lexeme
WHERE x.lexeme IS NOT NULL
ORDER BY x.lexeme, x.word";

/// Field weights for `ts_rank`, in its order {D, C, B, A}: title (C) and
/// section (B) count half as much as the text (A), as in the embedded index.
const WEIGHTS: &str = "'{0.1, 0.5, 0.5, 1.0}'";

/// The top-k statement for `n` query lexemes. Parameters: `$1` every topic
/// word joined by ` | ` (candidates, served by the GIN index), `$2` k, then
/// for each lexeme its word and its idf. Rank: `Σ idf(t) · ts_rank(t)`
/// (normalisation 1: divided by 1 + log length); score: the IDF-weighted
/// coverage, computed for the k rows kept. Unrolled per term (no per-row
/// subquery): half the cost of a lateral aggregate.
fn search_sql(n: usize) -> String {
    let term = |i: usize| format!("to_tsquery('english', ${})", 3 + 2 * i);
    let idf = |i: usize| format!("${}::float8", 4 + 2 * i);
    let rank: Vec<String> = (0..n)
        .map(|i| format!("{} * ts_rank({WEIGHTS}, c.tsv, {}, 1)", idf(i), term(i)))
        .collect();
    let got: Vec<String> = (0..n)
        .map(|i| {
            format!(
                "CASE WHEN top.tsv @@ {} THEN {} ELSE 0 END",
                term(i),
                idf(i)
            )
        })
        .collect();
    let total: Vec<String> = (0..n).map(idf).collect();
    format!(
        "SELECT {TOP_COLUMNS}, (({got}) / nullif({total}, 0))::float4 AS score, top.rank::float4
         FROM (SELECT c.*, ({rank}) AS rank
               FROM chunks c
               WHERE c.tsv @@ to_tsquery('english', $1)
               ORDER BY rank DESC, c.seq
               LIMIT $2) top
         ORDER BY top.rank DESC, top.seq",
        got = got.join(" + "),
        total = total.join(" + "),
        rank = rank.join(" + "),
    )
}

/// [`CHUNK_COLUMNS`] of the `top` subquery.
const TOP_COLUMNS: &str = "top.id, top.path, top.title, top.section, top.url, top.text, \
     top.start_byte, top.end_byte, top.metadata";

const INSERT_CHUNKS_SQL: &str = "
INSERT INTO chunks (file_key, id, path, title, section, url, text, start_byte, end_byte, metadata)
SELECT $1, * FROM unnest($2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[],
                         $8::int8[], $9::int8[], $10::text[])";

/// The chunk index in PostgreSQL (see the crate docs).
pub struct PgIndex {
    client: Client,
}

impl std::fmt::Debug for PgIndex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PgIndex")
            .field("target", &self.client.target.redacted)
            .field("schema", &self.client.opts.schema)
            .finish()
    }
}

impl PgIndex {
    /// Connects (one connection is opened to check the schema, the pool
    /// opens more on demand). Fails with [`Error::Connect`] when the database
    /// is unreachable and [`Error::SchemaBehind`] when migrations are pending.
    pub fn connect(url: &str, opts: PgOptions) -> Result<PgIndex, Error> {
        let index = PgIndex {
            client: Client::new(url, opts, "groundcite-pg")?,
        };
        let status = index.schema_status()?;
        if status.is_behind() {
            return Err(Error::SchemaBehind {
                at: status.version(),
                target: status.target,
                schema: status.schema,
                needs: latest_version(),
            });
        }
        Ok(index)
    }

    /// The database URL without its password.
    pub fn target(&self) -> &str {
        &self.client.target.redacted
    }

    /// The options this index was opened with.
    pub fn options(&self) -> &PgOptions {
        &self.client.opts
    }

    /// The schema's migration status.
    pub fn schema_status(&self) -> Result<SchemaStatus, Error> {
        self.client.retry(is_transient, || async {
            let client = self.client.conn().await?;
            read_status(&client, &self.client.target, &self.client.opts).await
        })
    }

    /// Pool statistics: `(open connections, idle connections, max size)`.
    pub fn pool_status(&self) -> (usize, usize, usize) {
        let s = self.client.pool.status();
        (s.size, s.available, s.max_size)
    }

    fn search_impl(&self, query: &str, k: usize) -> Result<Vec<Hit>, Error> {
        let words = query_words(query);
        if words.is_empty() || k == 0 {
            return Ok(Vec::new());
        }
        let any = words.join(" | ");
        let limit = i64::try_from(k).unwrap_or(i64::MAX);
        let rows = self.client.retry(is_transient, || async {
            let client = self.client.conn().await?;
            let stmt = client.prepare_cached(TERMS_SQL).await?;
            let terms = client.query(&stmt, &[&words]).await?;
            if terms.is_empty() {
                return Ok(Vec::new());
            }
            let term_words: Vec<String> = terms.iter().map(|r| r.get(1)).collect();
            let idfs: Vec<f64> = terms
                .iter()
                .map(|r| {
                    let (df, n): (i64, i64) = (r.get(2), r.get(3));
                    f64::from(idf(df.max(0) as u64, n.max(0) as u64))
                })
                .collect();
            let mut params: Vec<&(dyn tokio_postgres::types::ToSql + Sync)> = vec![&any, &limit];
            for (w, f) in term_words.iter().zip(&idfs) {
                params.push(w);
                params.push(f);
            }
            let stmt = client.prepare_cached(&search_sql(terms.len())).await?;
            Ok(client.query(&stmt, &params).await?)
        })?;
        Ok(rows
            .iter()
            .map(|row| Hit {
                chunk: chunk_from_row(row),
                score: row.get::<_, Option<f32>>(9).unwrap_or(0.0).clamp(0.0, 1.0),
                raw_score: row.get(10),
            })
            .collect())
    }

    fn num_chunks_impl(&self) -> Result<u64, Error> {
        self.client.retry(is_transient, || async {
            let client = self.client.conn().await?;
            let n: i64 = client
                .query_one("SELECT chunks FROM corpus_stats", &[])
                .await?
                .get(0);
            Ok(n.max(0) as u64)
        })
    }

    fn all_chunks_impl(&self) -> Result<Vec<Chunk>, Error> {
        let sql =
            format!("SELECT {CHUNK_COLUMNS} FROM chunks c ORDER BY c.path, c.start_byte, c.id");
        let rows = self.client.retry(is_transient, || async {
            let client = self.client.conn().await?;
            client.query(sql.as_str(), &[]).await.map_err(Error::from)
        })?;
        Ok(rows.iter().map(chunk_from_row).collect())
    }

    /// One ingest run in one transaction (see the crate docs).
    fn run(
        &mut self,
        plan: Plan,
        opts: &IngestOptions,
        mut summary: IngestSummary,
        progress: &mut dyn FnMut(Progress),
    ) -> Result<IngestSummary, Error> {
        let Plan { sources, roots } = plan;
        let total = sources.len();
        progress(Progress::Started { total_files: total });
        let mut client = self.client.block(self.client.conn())?;
        let tx = self.client.block(client.transaction())?;
        let key = lock_key("ingest", &self.client.opts.schema);
        self.client
            .block(tx.execute("SELECT pg_advisory_xact_lock($1)", &[&key]))?;
        let roots_vec: Vec<String> = roots.iter().cloned().collect();
        let known: HashMap<String, String> = self
            .client
            .block(tx.query(
                "SELECT key, hash FROM files WHERE root = ANY($1)",
                &[&roots_vec],
            ))?
            .iter()
            .map(|r| (r.get(0), r.get(1)))
            .collect();
        let insert = self.client.block(tx.prepare(INSERT_CHUNKS_SQL))?;
        let mut seen = HashSet::new();
        for (done, src) in sources.into_iter().enumerate() {
            seen.insert(src.key.clone());
            let file_done = |progress: &mut dyn FnMut(Progress), path| {
                progress(Progress::File {
                    path,
                    done: done + 1,
                    total,
                })
            };
            let bytes = match src.read() {
                Ok(b) => b,
                Err(message) => {
                    summary.errors.push(IngestError {
                        path: src.report_path.clone(),
                        message,
                    });
                    file_done(progress, src.report_path);
                    continue;
                }
            };
            let hash = source::content_hash(opts, &bytes);
            let previous = known.get(&src.key);
            if previous == Some(&hash) {
                summary.unchanged += 1;
                file_done(progress, src.report_path);
                continue;
            }
            // Whatever happens next, the old chunks of this file go.
            if previous.is_some() {
                self.client.block(async {
                    tx.execute("DELETE FROM chunks WHERE file_key = $1", &[&src.key])
                        .await?;
                    tx.execute("DELETE FROM files WHERE key = $1", &[&src.key])
                        .await
                })?;
            }
            if let Some(message) = src.permalink_warning(&bytes) {
                summary.warnings.push(IngestError {
                    path: src.report_path.clone(),
                    message,
                });
            }
            match src.chunks(bytes, opts) {
                Ok(chunks) => {
                    let col = |f: fn(&Chunk) -> String| chunks.iter().map(f).collect::<Vec<_>>();
                    let ids = col(|c| c.id.clone());
                    let paths = col(|c| c.path.clone());
                    let titles = col(|c| c.title.clone());
                    let sections = col(|c| c.section.clone());
                    let urls = col(|c| c.source_url.clone());
                    let texts = col(|c| c.text.clone());
                    let metadata = col(|c| c.metadata.to_string());
                    let starts: Vec<i64> = chunks.iter().map(|c| c.start as i64).collect();
                    let ends: Vec<i64> = chunks.iter().map(|c| c.end as i64).collect();
                    let n_chunks = chunks.len() as i32;
                    self.client.block(async {
                        if n_chunks > 0 {
                            tx.execute(
                                &insert,
                                &[
                                    &src.key, &ids, &paths, &titles, &sections, &urls, &texts,
                                    &starts, &ends, &metadata,
                                ],
                            )
                            .await?;
                        }
                        tx.execute(
                            "INSERT INTO files (key, root, path, hash, chunks)
                             VALUES ($1, $2, $3, $4, $5)",
                            &[&src.key, &src.root, &src.rel, &hash, &n_chunks],
                        )
                        .await
                    })?;
                    summary.indexed += 1;
                    summary.chunks += chunks.len();
                }
                Err(message) => {
                    let message = if previous.is_some() {
                        format!("{message}; its previous chunks were removed")
                    } else {
                        message
                    };
                    summary.errors.push(IngestError {
                        path: src.report_path.clone(),
                        message,
                    });
                }
            }
            file_done(progress, src.report_path);
        }
        // Files that disappeared from an ingested root.
        let gone: Vec<String> = known
            .keys()
            .filter(|k| !seen.contains(*k))
            .cloned()
            .collect();
        if !gone.is_empty() {
            self.client.block(async {
                tx.execute("DELETE FROM chunks WHERE file_key = ANY($1)", &[&gone])
                    .await?;
                tx.execute("DELETE FROM files WHERE key = ANY($1)", &[&gone])
                    .await
            })?;
            summary.removed += gone.len();
        }
        progress(Progress::Committing);
        self.client.block(tx.commit())?;
        Ok(summary)
    }
}

fn chunk_from_row(row: &Row) -> Chunk {
    let metadata: String = row.get(8);
    Chunk {
        id: row.get(0),
        path: row.get(1),
        title: row.get(2),
        section: row.get(3),
        source_url: row.get(4),
        text: row.get(5),
        start: row.get::<_, i64>(6).max(0) as usize,
        end: row.get::<_, i64>(7).max(0) as usize,
        metadata: serde_json::from_str(&metadata).unwrap_or(serde_json::Value::Null),
    }
}

/// Worth another attempt: the connection failed or dropped, the server is
/// shutting down, or the transaction lost a serialization race.
fn is_transient(e: &Error) -> bool {
    matches!(e, Error::Connect { .. } | Error::Unavailable(_))
}

impl ChunkIndex for PgIndex {
    fn ingest(
        &mut self,
        roots: &[PathBuf],
        opts: &IngestOptions,
        progress: &mut dyn FnMut(Progress),
    ) -> groundcite_index::Result<IngestSummary> {
        let mut summary = IngestSummary::default();
        let plan = source::walk(roots, &mut summary);
        Ok(self.run(plan, opts, summary, progress)?)
    }

    fn ingest_documents(
        &mut self,
        root_name: &str,
        docs: &[(&str, &str)],
        opts: &IngestOptions,
        progress: &mut dyn FnMut(Progress),
    ) -> groundcite_index::Result<IngestSummary> {
        let mut summary = IngestSummary::default();
        let plan = source::memory(root_name, docs, &mut summary);
        Ok(self.run(plan, opts, summary, progress)?)
    }

    fn search(&self, query: &str, k: usize) -> groundcite_index::Result<Vec<Hit>> {
        Ok(self.search_impl(query, k)?)
    }

    fn num_chunks(&self) -> groundcite_index::Result<u64> {
        Ok(self.num_chunks_impl()?)
    }

    fn all_chunks(&self) -> groundcite_index::Result<Vec<Chunk>> {
        Ok(self.all_chunks_impl()?)
    }

    fn default_gate_threshold(&self) -> f32 {
        crate::DEFAULT_GATE_THRESHOLD
    }

    fn location(&self) -> String {
        format!(
            "{} (schema {})",
            self.client.target.redacted, self.client.opts.schema
        )
    }
}
