//! # groundcite-pg
//!
//! PostgreSQL as the shared index: the same chunks as the embedded tantivy
//! index ([`groundcite_index::Index`]), searched with PostgreSQL full-text
//! search, behind the same [`ChunkIndex`] trait, so that many answering
//! nodes can share one index.
//!
//! ```no_run
//! use groundcite_index::{ChunkIndex, IngestOptions, Retriever};
//! use groundcite_pg::{PgIndex, PgOptions};
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let url = "postgres://groundcite:secret@127.0.0.1:5432/groundcite";
//! groundcite_pg::migrate(url, &PgOptions::default())?;
//! let mut index = PgIndex::connect(url, PgOptions::default())?;
//! index.ingest(&["docs".into()], &IngestOptions::default(), &mut |_| {})?;
//! for hit in index.search("how long do reimbursements take?", 5)? {
//!     if hit.score >= groundcite_pg::DEFAULT_GATE_THRESHOLD {
//!         println!("{} {:.2}", hit.chunk.id, hit.score);
//!     }
//! }
//! # Ok(()) }
//! ```
//!
//! ## Storage (see `migrations/`)
//!
//! - `files`: the manifest (per-file key, root, relative path, BLAKE3 of
//!   options fingerprint and bytes, chunk count, and the embedding model the
//!   file's chunk vectors are of, NULL without);
//! - `chunks`: id, path, title, section, url, text, byte offsets, metadata
//!   JSON, and a generated `tsvector` (`english` configuration; text weight
//!   A, section B, title C) with a GIN index;
//! - `chunk_vectors`: one pgvector `vector` per chunk of a file ingested
//!   with a model, deleted with its chunk (the `vector` extension, in schema
//!   `public`, which connections have on their search path after ours);
//!   past [`PgOptions::ann_min_chunks`] of them an ingest builds
//!   `chunk_vectors_ann_{dim}`, an HNSW index (inner product) over the
//!   vectors of the model's dimension, which PostgreSQL then keeps current;
//! - `unit_vectors`: one per answer unit of those chunks;
//! - `term_df` and `corpus_stats`: per-lexeme document frequencies and the
//!   chunk count, kept exact by statement-level triggers on `chunks`;
//! - `audit`: the service's audit log when its location is a `postgres://`
//!   URL ([`PgAuditStore`], an `AuditStore` of `groundcite-audit`; unique
//!   `request_id`, idempotent batch inserts);
//! - `schema_migrations`: applied migrations (version, name, checksum, time).
//!
//! All of it lives in one schema ([`PgOptions::schema`], default
//! `groundcite`), which is also how tests run in parallel on one database.
//!
//! ## Retrieval and the normalised score
//!
//! Chunks come from [`groundcite_index::source`] and
//! [`groundcite_index::prepare_document`], so ids, labels, URLs and offsets
//! are identical to the embedded index. A query is reduced to its topic words
//! by [`groundcite_index::query_words`] (the embedded index's question words
//! and stop words removed), then analysed by PostgreSQL's `english`
//! configuration (Snowball stemmer, the same algorithm as the embedded
//! index's). Two round trips: the query's lexemes with their document
//! frequencies, then the top k. Candidates are the chunks matching any query
//! lexeme (GIN); they are ranked by
//! `Σ idf(t) · ts_rank(weights {D 0.1, C 0.5, B 0.5, A 1}, tsv, t, 1)`, an
//! IDF-weighted sum of per-term ranks (plain `ts_rank` knows no IDF and lets
//! a common word repeated outrank a rare one). The normalised score is the
//! embedded index's, computed the same way ([`groundcite_index::score::idf`]):
//! the IDF-weighted coverage of the query's lexemes,
//! `idf = ln(1 + (N − df + 0.5) / (df + 0.5))` with `df` from `term_df` and
//! `N` from `corpus_stats`. Its gate threshold is calibrated separately:
//! [`DEFAULT_GATE_THRESHOLD`].
//!
//! ## Hybrid retrieval (with an embedding model)
//!
//! As in the embedded index ([`groundcite_index::fusion`]), and with its
//! code: [`PgIndex::set_embedder`] makes ingest compute a vector per chunk
//! ([`groundcite_index::vectors::embedding_text`]) and one per answer unit
//! of the chunk (`groundcite_core::unit::units`, in table `unit_vectors`,
//! pooled from the chunk's own pass), batched longest first
//! ([`groundcite_index::vectors::embed_chunks`],
//! reported as `Progress::Embedding`) and stored in the run's
//! transaction; unchanged files keep their vectors, a file without vectors
//! of the configured model counts as changed, and another model's vectors
//! are all dropped and the summary says so (`model_changed`).
//! [`PgIndex::check_vectors`] is the error a caller gives when the index
//! lacks the model's vectors. [`PgIndex::search_hybrid`] takes the
//! full-text ranking's top [`Fusion::lexical_depth`] (over the chunks that
//! contain the query's rarest lexemes, [`PgOptions::lexical_candidates`]),
//! computes chunks' inner products with the question's vector and their
//! best unit's (pgvector's `<#>`: the cosine of unit vectors, as the
//! embedded index computes it), ranks them by
//! [`groundcite_index::vectors::dense_similarity`] as the embedded index
//! does, fuses the two with [`groundcite_index::fusion::fuse`] and scores
//! each hit with [`groundcite_index::fusion::hybrid_score`] of its
//! similarity and this backend's lexical coverage. Which chunks are scored:
//! every one (a scan) until an ingest has built the HNSW index; then, as
//! the embedded index's approximate search does, the index's
//! [`PgOptions::ann_candidates`] (1,000) nearest by the chunk's own vector
//! are shortlisted by their similarity estimated with their units' sign
//! codes (table `unit_codes`), and the best 500 and the full-text top are
//! scored exactly. Each hit carries its chunk's unit vectors
//! (`Hit::units`), which the engine's answerability judgement reuses.
//! Four round trips (five through the HNSW index), each a pipelined pair
//! or trio of statements: the lexemes and whether the HNSW index exists;
//! the full-text top; the dense ranking (chunk ids and similarities only; through the HNSW index, the
//! candidates in a read-only transaction whose scan settings hold for it
//! alone, so that a pooler in transaction mode keeps them, then the
//! shortlist's scores: one round trip more); the k chunks and their unit
//! vectors. The code is in `index/hybrid.rs`.
//!
//! At a million chunks (`bench/scale-dense.sh` with `SCALE_DATABASE_URL`,
//! synthetic vectors, 108 questions, vector given, k = 10): p50 / p99
//! 48.8-51.0 / 70.2-72.7 ms, against 1.8 / 3.4 s when the full-text side
//! ranks every match (and seconds more when the dense side scanned every
//! vector); the full-text top 10 shares 98.1% with ranking every match.
//! The dense side's top 10 holds 66.1% of the exact dense ranking's, the
//! hybrid top 10 73.1% of the embedded index's (whose approximate search
//! holds 96-98.5%, from 5,000 candidates). In the synthetic corpus a
//! chunk's vector and its units' are independent copies, so a chunk's own
//! vector says little about its best unit, and the candidates decide:
//! 2,000 of them hold 77.8% and 85.3-85.9% at p50 / p99 68.6-83.7 /
//! 90.5-131.9 ms (over the bar in two runs of three); the 400 nearest
//! scored without the codes held 48.8% and 54.9% at 59.9-73.3 ms p99.
//! The chunk index took 305 s to build, the codes of 5.9 million units
//! (migration 7) about 10 minutes.
//!
//! [`Fusion::lexical_depth`]: groundcite_index::Fusion::lexical_depth
//!
//! ## Ingest
//!
//! One transaction per run, holding a transaction-level advisory lock so that
//! concurrent ingests into the same schema run one after the other: readers
//! see the old index until the commit, then the new one; a failed run leaves
//! the index as it was. Same semantics as the embedded index: unchanged
//! files (hash equal) skipped, changed ones deleted and re-inserted, files
//! gone from an ingested root deleted, unreadable or unparsable files
//! reported in the summary and skipped (their previous chunks removed).
//! The files a run adds are written in batches
//! ([`PgOptions::ingest_batch_chunks`], default 20,000 chunks): one
//! `INSERT` of their chunks, one of their `files` rows, so the term
//! statistics trigger runs once per batch.
//!
//! ## Connections
//!
//! A deadpool pool ([`PgOptions`]: 8 connections, 5 s to acquire or
//! connect), a private one-thread tokio runtime (usable from synchronous
//! code and, through a scoped thread, from inside another runtime), and up to
//! 3 attempts for reads on transient errors. Writes are not retried (the
//! ingest transaction is atomic: run it again). TLS is not supported yet
//! (`NoTls`): keep the database on a private network.

pub mod audit;
mod client;
mod config;
mod index;
pub mod migrate;

pub use audit::PgAuditStore;
pub use config::{PgOptions, is_postgres_url, redact_url};
pub use groundcite_index::{ChunkIndex, Retriever};
pub use index::{PgIndex, VectorStatus};
pub use migrate::{
    MIGRATIONS, MigrateReport, Migration, SchemaStatus, drop_schema, latest_version, migrate,
    status,
};

/// The gate threshold, the same for both backends: PostgreSQL's normalised
/// scores follow the embedded index's rule, and `benches/search.rs`
/// calibrates them on the handbook development questions (answerable
/// questions score 0.60–1.00 here, 15/15 kept; unanswerable ones 0.23–0.87,
/// 4/8 rejected, against 5/8 on the embedded index).
pub use groundcite_index::DEFAULT_GATE_THRESHOLD;

/// Errors of this crate, worded for the person running the binary: never a
/// password, always the next step when there is one.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The database could not be reached or refused the connection.
    #[error("cannot connect to {target}: {message}")]
    Connect {
        /// The database URL, without its password.
        target: String,
        /// Why the connection failed.
        message: String,
    },
    /// Migrations are pending: the schema is older than this binary needs.
    #[error(
        "the database schema `{schema}` at {target} is behind this binary (at version {at}, needs {needs}): run `groundcite db migrate`"
    )]
    SchemaBehind {
        /// The database URL, without its password.
        target: String,
        /// The PostgreSQL schema ([`PgOptions::schema`]).
        schema: String,
        /// The highest migration version applied.
        at: i32,
        /// The version this binary needs ([`latest_version`]).
        needs: i32,
    },
    /// A migration failed and was rolled back.
    #[error("migration {version} ({name}) failed: {message}")]
    Migration {
        /// The migration's number.
        version: i32,
        /// The migration's name.
        name: &'static str,
        /// The database's error (with a hint when pgvector is missing).
        message: String,
    },
    /// Every pooled connection stayed busy past the wait timeout; names the
    /// database (without its password).
    #[error("timed out waiting for a database connection to {0} (all pooled connections busy?)")]
    PoolTimeout(String),
    /// A transient failure (connection lost, server shutting down,
    /// serialization failure, deadlock): worth retrying.
    #[error("database unavailable: {0}")]
    Unavailable(String),
    /// Any other database error.
    #[error("database error: {0}")]
    Db(String),
    /// Invalid options or URL, or the runtime or pool could not be set up.
    #[error("{0}")]
    Config(String),
    /// The index has no vectors (or another model's) for the model given.
    #[error("{0}")]
    Vectors(String),
    /// The embedding model failed on chunk texts.
    #[error("embedding chunks: {0}")]
    Embedding(String),
}

impl From<tokio_postgres::Error> for Error {
    /// Transient failures (connection lost or refused, server shutting down,
    /// serialization failure, deadlock) become [`Error::Unavailable`], which
    /// reads retry.
    fn from(e: tokio_postgres::Error) -> Self {
        let io = e.as_db_error().is_none()
            && std::error::Error::source(&e).is_some_and(|s| s.is::<std::io::Error>());
        let transient = e.is_closed()
            || io
            || e.code().is_some_and(|c| {
                let c = c.code();
                c.starts_with("08") || c.starts_with("57P") || c == "40001" || c == "40P01"
            });
        if transient {
            Error::Unavailable(db_message(&e))
        } else {
            Error::Db(db_message(&e))
        }
    }
}

impl From<Error> for groundcite_audit::AuditError {
    fn from(e: Error) -> Self {
        groundcite_audit::AuditError::Backend(Box::new(e))
    }
}

impl From<Error> for groundcite_index::Error {
    fn from(e: Error) -> Self {
        match e {
            Error::Vectors(message) => groundcite_index::Error::Vectors(message),
            Error::Embedding(message) => groundcite_index::Error::Embedding(message),
            e => groundcite_index::Error::Backend(e.to_string()),
        }
    }
}

/// The server's message (with detail and hint) when there is one, else the
/// client's error and its cause.
pub(crate) fn db_message(e: &tokio_postgres::Error) -> String {
    if let Some(db) = e.as_db_error() {
        let mut s = format!("{}: {} ({})", db.severity(), db.message(), db.code().code());
        if let Some(d) = db.detail() {
            s.push_str(&format!("; {d}"));
        }
        if let Some(h) = db.hint() {
            s.push_str(&format!("; hint: {h}"));
        }
        return s;
    }
    match std::error::Error::source(e) {
        Some(cause) => format!("{e}: {cause}"),
        None => e.to_string(),
    }
}
