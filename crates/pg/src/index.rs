//! [`PgIndex`]: the chunk index in PostgreSQL.

use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;

use groundcite_index::score::idf;
use groundcite_index::source::{self, Plan, Source};
use groundcite_index::vectors::{ChunkTexts, embed_chunks};
use groundcite_index::{
    Chunk, ChunkEmbedder, ChunkIndex, Hit, IngestOptions, IngestSummary, Progress, Retriever,
    query_words,
};
use tokio_postgres::{Row, Statement, Transaction};

use crate::client::Client;
use crate::migrate::{latest_version, lock_key, read_status};
use crate::{Error, PgOptions, SchemaStatus};

mod hybrid;

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

/// The per-term parameters of `n` query lexemes from parameter `$first`
/// on: each lexeme's word (as a `tsquery`) and its idf.
struct TermParams {
    first: usize,
    n: usize,
}

impl TermParams {
    fn term(&self, i: usize) -> String {
        format!("to_tsquery('english', ${})", self.first + 2 * i)
    }

    fn idf(&self, i: usize) -> String {
        format!("${}::float8", self.first + 1 + 2 * i)
    }

    /// The rank of chunk `c`: `Σ idf(t) · ts_rank(t)` (normalisation 1:
    /// divided by 1 + log length).
    fn rank(&self) -> String {
        (0..self.n)
            .map(|i| {
                format!(
                    "{} * ts_rank({WEIGHTS}, c.tsv, {}, 1)",
                    self.idf(i),
                    self.term(i)
                )
            })
            .collect::<Vec<_>>()
            .join(" + ")
    }

    /// The normalised score of the row `alias`: the IDF-weighted coverage.
    fn coverage(&self, alias: &str) -> String {
        let got: Vec<String> = (0..self.n)
            .map(|i| {
                format!(
                    "CASE WHEN {alias}.tsv @@ {} THEN {} ELSE 0 END",
                    self.term(i),
                    self.idf(i)
                )
            })
            .collect();
        let total: Vec<String> = (0..self.n).map(|i| self.idf(i)).collect();
        format!(
            "(({}) / nullif({}, 0))::float4",
            got.join(" + "),
            total.join(" + ")
        )
    }
}

/// The top-k statement for `n` query lexemes. Parameters: `$1` every topic
/// word joined by ` | ` (candidates, served by the GIN index), `$2` k, then
/// for each lexeme its word and its idf. Rank: [`TermParams::rank`]; score:
/// the IDF-weighted coverage, computed for the k rows kept. Unrolled per
/// term (no per-row subquery): half the cost of a lateral aggregate.
fn search_sql(n: usize) -> String {
    let terms = TermParams { first: 3, n };
    format!(
        "SELECT {TOP_COLUMNS}, {score} AS score, top.rank::float4
         FROM (SELECT c.*, ({rank}) AS rank
               FROM chunks c
               WHERE c.tsv @@ to_tsquery('english', $1)
               ORDER BY rank DESC, c.seq
               LIMIT $2) top
         ORDER BY top.rank DESC, top.seq",
        score = terms.coverage("top"),
        rank = terms.rank(),
    )
}

/// The vectors of chunks `$1`: row `i` is `$2[(i-1)·$3 + 1 .. i·$3]`.
const INSERT_VECTORS_SQL: &str = "
INSERT INTO chunk_vectors (chunk_seq, embedding)
SELECT s, (($2::float4[])[(i - 1) * $3::int4 + 1 : i * $3::int4])::vector
FROM unnest($1::int8[]) WITH ORDINALITY AS t(s, i)";

/// The vectors of units `($1, $2)` (chunk, position): row `i` is
/// `$3[(i-1)·$4 + 1 .. i·$4]`.
const INSERT_UNIT_VECTORS_SQL: &str = "
INSERT INTO unit_vectors (chunk_seq, ord, embedding)
SELECT s, o, (($3::float4[])[(i - 1) * $4::int4 + 1 : i * $4::int4])::vector
FROM unnest($1::int8[], $2::int4[]) WITH ORDINALITY AS t(s, o, i)";

/// [`CHUNK_COLUMNS`] of the `top` subquery.
const TOP_COLUMNS: &str = "top.id, top.path, top.title, top.section, top.url, top.text, \
     top.start_byte, top.end_byte, top.metadata";

/// The chunks of several files in one statement (the statistics trigger
/// runs once for all of them).
const INSERT_CHUNKS_SQL: &str = "
INSERT INTO chunks (file_key, id, path, title, section, url, text, start_byte, end_byte, metadata)
SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[],
                     $7::text[], $8::int8[], $9::int8[], $10::text[])
RETURNING seq";

/// The `files` rows of several files.
const INSERT_FILES_SQL: &str = "
INSERT INTO files (key, root, path, hash, chunks, model_id)
SELECT *, $6::text FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::int4[])";

/// Files added in a run are written together once they hold this many
/// chunks (the default of `PgOptions::ingest_batch_chunks`) or
/// [`FLUSH_BYTES`] of text, before any removal, and at the end of the run:
/// the term statistics trigger then runs once per batch rather than once
/// per file. It updates the `df` of a batch's lexemes, and those row
/// versions pile up until the run's one transaction commits, so fewer,
/// larger batches matter at scale (`bench/scale.sh`: file by file, 465
/// chunks/s at 10,000 chunks; a million chunks in batches of 2,000 took
/// 673 s, in batches of 20,000 188 s).
pub(crate) const FLUSH_CHUNKS: usize = 20_000;
const FLUSH_BYTES: usize = 32 * 1024 * 1024;

/// The chunk index in PostgreSQL (see the crate docs).
pub struct PgIndex {
    client: Client,
    embedder: Option<Arc<dyn ChunkEmbedder>>,
}

impl std::fmt::Debug for PgIndex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PgIndex")
            .field("target", &self.client.target.redacted)
            .field("schema", &self.client.opts.schema)
            .field("model", &self.embedder.as_ref().map(|e| e.model_id()))
            .finish()
    }
}

/// Where an index's chunk vectors stand against a model
/// ([`PgIndex::vector_status`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VectorStatus {
    /// Indexed files.
    pub files: u64,
    /// Files without vectors of the model asked about.
    pub files_without: u64,
    /// Another model some files' vectors are of, if any.
    pub other_model: Option<String>,
    /// Chunks, and chunks with a vector.
    pub chunks: u64,
    /// Chunks with a vector (of whichever model).
    pub vectors: u64,
}

impl PgIndex {
    /// Connects (one connection is opened to check the schema, the pool
    /// opens more on demand). Fails with [`Error::Connect`] when the database
    /// is unreachable and [`Error::SchemaBehind`] when migrations are pending.
    pub fn connect(url: &str, opts: PgOptions) -> Result<PgIndex, Error> {
        let index = PgIndex {
            client: Client::new(url, opts, "groundcite-pg")?,
            embedder: None,
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

    /// Ingests with this model from now on: every chunk written gets its
    /// vector, and files whose vectors are missing or of another model are
    /// re-chunked and embedded even when unchanged (as the embedded index
    /// does).
    pub fn set_embedder(&mut self, embedder: Arc<dyn ChunkEmbedder>) {
        self.embedder = Some(embedder);
    }

    /// Whether any chunk has a vector.
    pub fn has_vectors(&self) -> Result<bool, Error> {
        self.client.retry(is_transient, || async {
            let client = self.client.conn().await?;
            let row = client
                .query_one("SELECT EXISTS (SELECT 1 FROM chunk_vectors)", &[])
                .await?;
            Ok(row.get(0))
        })
    }

    /// Where the index's vectors stand against `model_id`.
    pub fn vector_status(&self, model_id: &str) -> Result<VectorStatus, Error> {
        let row = self.client.retry(is_transient, || async {
            let client = self.client.conn().await?;
            Ok(client
                .query_one(
                    "SELECT count(*),
                            count(*) FILTER (WHERE model_id IS DISTINCT FROM $1),
                            min(model_id) FILTER (WHERE model_id <> $1),
                            (SELECT chunks FROM corpus_stats),
                            (SELECT count(*) FROM chunk_vectors)
                     FROM files",
                    &[&model_id],
                )
                .await?)
        })?;
        let count = |i: usize| row.get::<_, i64>(i).max(0) as u64;
        Ok(VectorStatus {
            files: count(0),
            files_without: count(1),
            other_model: row.get(2),
            chunks: count(3),
            vectors: count(4),
        })
    }

    /// Fails with [`Error::Vectors`] unless every indexed file has vectors
    /// of `model_id`: searching such an index with that model would
    /// silently leave chunks out of the dense ranking.
    pub fn check_vectors(&self, model_id: &str) -> Result<(), Error> {
        let status = self.vector_status(model_id)?;
        if status.files_without == 0 && status.chunks == status.vectors {
            return Ok(());
        }
        let had = if let Some(other) = &status.other_model {
            groundcite_index::vectors::mismatch(other, model_id)
        } else if status.vectors == 0 {
            "it was ingested without an embedding model".to_string()
        } else {
            format!(
                "{} of {} files have no vectors",
                status.files_without, status.files
            )
        };
        Err(Error::Vectors(format!(
            "the index at {} has no vectors for the configured model {model_id}: {had}; run `groundcite ingest PATH...` again with the model configured (it embeds what is missing), or run without a model",
            self.location()
        )))
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
            let (term_words, idfs) = term_params(&client.query(&stmt, &[&words]).await?);
            if term_words.is_empty() {
                return Ok(Vec::new());
            }
            let mut params: Vec<&(dyn tokio_postgres::types::ToSql + Sync)> = vec![&any, &limit];
            for (w, f) in term_words.iter().zip(&idfs) {
                params.push(w);
                params.push(f);
            }
            let stmt = client.prepare_cached(&search_sql(term_words.len())).await?;
            Ok(client.query(&stmt, &params).await?)
        })?;
        Ok(rows
            .iter()
            .map(|row| Hit {
                chunk: chunk_from_row(row),
                score: row.get::<_, Option<f32>>(9).unwrap_or(0.0).clamp(0.0, 1.0),
                raw_score: row.get(10),
                units: None,
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
        let mut client = self.client.block(self.client.conn())?;
        let tx = self.client.block(client.transaction())?;
        let key = lock_key("ingest", &self.client.opts.schema);
        self.client
            .block(tx.execute("SELECT pg_advisory_xact_lock($1)", &[&key]))?;
        let model_id = self.embedder.as_ref().map(|e| e.model_id().to_string());
        if let Some(model_id) = &model_id {
            // Another model's vectors are never mixed with this one's: they
            // all go (as in the embedded index), and the files of this run
            // are embedded again below; files of other roots stay without
            // vectors until they are ingested with this model.
            let other: Option<String> = self
                .client
                .block(tx.query_one(
                    "SELECT min(model_id) FROM files WHERE model_id <> $1",
                    &[model_id],
                ))?
                .get(0);
            if let Some(other) = other {
                self.client.block(async {
                    tx.execute(
                        "DELETE FROM chunk_vectors v USING chunks c, files f
                         WHERE v.chunk_seq = c.seq AND c.file_key = f.key AND f.model_id <> $1",
                        &[model_id],
                    )
                    .await?;
                    tx.execute(
                        "DELETE FROM unit_vectors u USING chunks c, files f
                         WHERE u.chunk_seq = c.seq AND c.file_key = f.key AND f.model_id <> $1",
                        &[model_id],
                    )
                    .await?;
                    tx.execute(
                        "UPDATE files SET model_id = NULL WHERE model_id <> $1",
                        &[model_id],
                    )
                    .await
                })?;
                summary.model_changed = Some(other);
            }
        }
        let roots: Vec<String> = plan.roots.iter().cloned().collect();
        let known: HashMap<String, (String, Option<String>)> = self
            .client
            .block(tx.query(
                "SELECT key, hash, model_id FROM files WHERE root = ANY($1)",
                &[&roots],
            ))?
            .iter()
            .map(|r| (r.get(0), (r.get(1), r.get(2))))
            .collect();
        let insert = self.client.block(tx.prepare(INSERT_CHUNKS_SQL))?;
        let insert_files = self.client.block(tx.prepare(INSERT_FILES_SQL))?;
        let mut run = PgRun {
            client: &self.client,
            tx: &tx,
            insert: &insert,
            insert_files: &insert_files,
            known,
            model_id,
            pending: Vec::new(),
            batch: Batch::default(),
            batch_chunks: self.client.opts.ingest_batch_chunks.max(1),
        };
        plan.run(&mut run, opts, &mut summary, progress)?;
        run.flush()?;
        let pending = std::mem::take(&mut run.pending);
        if let Some(embedder) = &self.embedder {
            self.embed(&tx, embedder.as_ref(), pending, &mut summary, progress)?;
            self.index_vectors(&tx, progress)?;
        }
        progress(Progress::Committing);
        self.client.block(tx.commit())?;
        Ok(summary)
    }
}

impl PgIndex {
    /// Computes and stores the vectors of the chunks written this run and
    /// of their answer units (`vectors::embed_chunks`), in the run's
    /// transaction.
    fn embed(
        &self,
        tx: &Transaction<'_>,
        embedder: &dyn ChunkEmbedder,
        pending: Vec<PendingChunk>,
        summary: &mut IngestSummary,
        progress: &mut dyn FnMut(Progress),
    ) -> Result<(), Error> {
        let chunks: Vec<&ChunkTexts> = pending.iter().map(|p| &p.texts).collect();
        let (chunk_rows, unit_rows, dim) =
            embed_chunks(embedder, &chunks, 0, &mut |done, total| {
                progress(Progress::Embedding { done, total })
            })
            .map_err(Error::Embedding)?;
        if pending.is_empty() {
            return Ok(());
        }
        let width = dim as i32;
        let insert = self.client.block(tx.prepare(INSERT_VECTORS_SQL))?;
        let insert_units = self.client.block(tx.prepare(INSERT_UNIT_VECTORS_SQL))?;
        // Stored in steps of a few hundred chunks, chunk rows and unit rows
        // apart.
        let mut unit_rows = unit_rows.chunks_exact(dim);
        for (batch, rows) in pending.chunks(512).zip(chunk_rows.chunks(512 * dim)) {
            let seqs: Vec<i64> = batch.iter().map(|p| p.seq).collect();
            let (mut unit_seqs, mut ords, mut unit_data) = (Vec::new(), Vec::new(), Vec::new());
            for p in batch {
                for ord in 0..p.texts.units.len() {
                    unit_seqs.push(p.seq);
                    ords.push(i32::try_from(ord).unwrap_or(i32::MAX));
                    unit_data.extend_from_slice(unit_rows.next().expect("one row per unit"));
                }
            }
            self.client
                .block(tx.execute(&insert, &[&seqs, &rows, &width]))?;
            if !unit_seqs.is_empty() {
                self.client
                    .block(tx.execute(&insert_units, &[&unit_seqs, &ords, &unit_data, &width]))?;
            }
        }
        summary.embedded += pending.len();
        Ok(())
    }
}

/// A chunk written this run that still needs its vectors, and what is
/// embedded for it.
struct PendingChunk {
    seq: i64,
    texts: ChunkTexts,
}

/// The PostgreSQL half of an ingest run: statements in the run's
/// transaction, and the files of its roots as they were when it began
/// (content hash and model id).
struct PgRun<'a> {
    client: &'a Client,
    tx: &'a Transaction<'a>,
    insert: &'a Statement,
    insert_files: &'a Statement,
    known: HashMap<String, (String, Option<String>)>,
    /// The embedding model's id, when ingesting with one.
    model_id: Option<String>,
    /// Chunks written this run, to embed before the commit.
    pending: Vec<PendingChunk>,
    /// Files added and not yet written ([`PgRun::flush`]).
    batch: Batch,
    /// `PgOptions::ingest_batch_chunks`.
    batch_chunks: usize,
}

/// Files added to a run and not yet written: the columns of their chunks
/// and of their `files` rows, as the two `INSERT`s take them, filled as
/// each file is added.
#[derive(Default)]
struct Batch {
    keys: Vec<String>,
    ids: Vec<String>,
    paths: Vec<String>,
    titles: Vec<String>,
    sections: Vec<String>,
    urls: Vec<String>,
    texts: Vec<String>,
    starts: Vec<i64>,
    ends: Vec<i64>,
    metadata: Vec<String>,
    file_keys: Vec<String>,
    roots: Vec<String>,
    rels: Vec<String>,
    hashes: Vec<String>,
    counts: Vec<i32>,
    /// With a model: what is embedded for each chunk, in chunk order.
    to_embed: Vec<ChunkTexts>,
    /// The bytes of `texts`.
    text_bytes: usize,
}

impl Batch {
    fn push(&mut self, src: &Source, hash: String, chunks: &[Chunk], embed: bool) {
        for c in chunks {
            self.keys.push(src.key.clone());
            self.ids.push(c.id.clone());
            self.paths.push(c.path.clone());
            self.titles.push(c.title.clone());
            self.sections.push(c.section.clone());
            self.urls.push(c.source_url.clone());
            self.texts.push(c.text.clone());
            self.starts.push(c.start as i64);
            self.ends.push(c.end as i64);
            self.metadata.push(c.metadata.to_string());
            self.text_bytes += c.text.len();
            if embed {
                self.to_embed.push(ChunkTexts::of(&c.section, &c.text));
            }
        }
        self.file_keys.push(src.key.clone());
        self.roots.push(src.root.clone());
        self.rels.push(src.rel.clone());
        self.hashes.push(hash);
        self.counts
            .push(i32::try_from(chunks.len()).unwrap_or(i32::MAX));
    }
}

impl PgRun<'_> {
    /// Writes the batch: its chunks in one statement, its `files` rows in
    /// another; with a model, its chunks join those to embed.
    fn flush(&mut self) -> Result<(), Error> {
        if self.batch.file_keys.is_empty() {
            return Ok(());
        }
        let b = std::mem::take(&mut self.batch);
        let tx = self.tx;
        let model_id = &self.model_id;
        let seqs = self.client.block(async {
            let mut seqs: Vec<i64> = Vec::new();
            if !b.ids.is_empty() {
                seqs = tx
                    .query(
                        self.insert,
                        &[
                            &b.keys,
                            &b.ids,
                            &b.paths,
                            &b.titles,
                            &b.sections,
                            &b.urls,
                            &b.texts,
                            &b.starts,
                            &b.ends,
                            &b.metadata,
                        ],
                    )
                    .await?
                    .iter()
                    .map(|r| r.get(0))
                    .collect();
            }
            tx.execute(
                self.insert_files,
                &[
                    &b.file_keys,
                    &b.roots,
                    &b.rels,
                    &b.hashes,
                    &b.counts,
                    model_id,
                ],
            )
            .await?;
            Ok::<_, Error>(seqs)
        })?;
        if self.model_id.is_some() {
            // `seq` is drawn row by row in the order of the unnested arrays:
            // ascending seqs are the chunks in order.
            let mut seqs = seqs;
            seqs.sort_unstable();
            if seqs.len() != b.ids.len() {
                return Err(Error::Db(format!(
                    "{} chunks inserted for {} files, {} expected",
                    seqs.len(),
                    b.file_keys.len(),
                    b.ids.len()
                )));
            }
            self.pending.extend(
                seqs.into_iter()
                    .zip(b.to_embed)
                    .map(|(seq, texts)| PendingChunk { seq, texts }),
            );
        }
        Ok(())
    }
}

impl source::IngestStore for PgRun<'_> {
    type Error = Error;

    /// With a model, a file without vectors of that model counts as not
    /// indexed, so the run re-chunks and embeds it.
    fn indexed_hash(&self, key: &str) -> Option<&str> {
        let (hash, model) = self.known.get(key)?;
        if self.model_id.is_some() && *model != self.model_id {
            return None;
        }
        Some(hash.as_str())
    }

    fn remove(&mut self, key: &str) -> Result<(), Error> {
        self.remove_gone(&[key.to_owned()])?;
        self.known.remove(key);
        Ok(())
    }

    fn add(&mut self, src: &Source, hash: String, chunks: &[Chunk]) -> Result<(), Error> {
        // A file re-embedded under an unchanged hash was not removed first.
        if self.known.contains_key(&src.key) {
            self.remove(&src.key)?;
        }
        self.batch
            .push(src, hash.clone(), chunks, self.model_id.is_some());
        self.known
            .insert(src.key.clone(), (hash, self.model_id.clone()));
        if self.batch.ids.len() >= self.batch_chunks || self.batch.text_bytes >= FLUSH_BYTES {
            self.flush()?;
        }
        Ok(())
    }

    fn keys_under(&self, _roots: &BTreeSet<String>) -> Vec<String> {
        // `known` holds exactly the files of the run's roots.
        self.known.keys().cloned().collect()
    }

    fn remove_gone(&mut self, keys: &[String]) -> Result<(), Error> {
        // Files added before a removal are written before it.
        self.flush()?;
        let tx = self.tx;
        self.client.block(async {
            tx.execute("DELETE FROM chunks WHERE file_key = ANY($1)", &[&keys])
                .await?;
            tx.execute("DELETE FROM files WHERE key = ANY($1)", &[&keys])
                .await
        })?;
        Ok(())
    }
}

/// The query's lexemes as [`TERMS_SQL`] returned them: each one's word and
/// idf.
fn term_params(terms: &[Row]) -> (Vec<String>, Vec<f64>) {
    terms
        .iter()
        .map(|r| {
            let (df, n): (i64, i64) = (r.get(2), r.get(3));
            (
                r.get::<_, String>(1),
                f64::from(idf(df.max(0) as u64, n.max(0) as u64)),
            )
        })
        .unzip()
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

impl Retriever for PgIndex {
    fn search(&self, query: &str, k: usize) -> groundcite_index::Result<Vec<Hit>> {
        Ok(self.search_impl(query, k)?)
    }

    fn chunk_count(&self) -> Option<u64> {
        self.num_chunks_impl().ok()
    }

    /// Whether the database holds chunk vectors (an unreachable database
    /// counts as none; the engine checks them when it starts).
    fn has_vectors(&self) -> bool {
        PgIndex::has_vectors(self).unwrap_or(false)
    }

    /// The same fusion as the embedded index's, over PostgreSQL's rankings.
    fn search_hybrid(
        &self,
        query: &str,
        vector: &[f32],
        k: usize,
    ) -> groundcite_index::Result<Vec<Hit>> {
        Ok(PgIndex::search_hybrid(
            self,
            query,
            vector,
            k,
            &groundcite_index::Fusion::default(),
        )?)
    }
}

impl ChunkIndex for PgIndex {
    fn ingest_plan(
        &mut self,
        plan: Plan,
        opts: &IngestOptions,
        summary: IngestSummary,
        progress: &mut dyn FnMut(Progress),
    ) -> groundcite_index::Result<IngestSummary> {
        Ok(self.run(plan, opts, summary, progress)?)
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
