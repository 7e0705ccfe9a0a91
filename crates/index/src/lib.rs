//! # groundcite-index
//!
//! Ingest, chunking, the on-disk BM25 index and retrieval with normalised
//! scores. The CLI, the server and the engine call [`Index`]; everything else in this
//! crate is pure and testable without I/O.
//!
//! ## Data flow
//!
//! ```text
//! file bytes ─► front matter (YAML `---` / TOML `+++`)      frontmatter.rs
//!            ─► template tags blanked in place             template.rs
//!            ─► blocks: headings, paragraphs, list items,   markdown.rs / html.rs / plain.rs
//!               table rows; each with its source range
//!            ─► chunks on sentence boundaries, heading path chunk.rs
//!            ─► id `path#Lfirst-Llast`, URL + #anchor       ingest.rs, url.rs
//!            ─► tantivy documents (one per chunk)           index.rs (searched: index/search.rs)
//! ```
//!
//! Every byte removed before parsing (front matter, `{% ... %}`, `{{ ... }}`)
//! is replaced by a space, newlines kept, so the offsets Markdown parsing
//! reports are offsets into the original file: [`Chunk::start`]..[`Chunk::end`]
//! is the region of the source file the chunk covers, and the line numbers in
//! [`Chunk::id`] are lines of the source file. Ingesting the same file twice
//! gives the same ids.
//!
//! ```no_run
//! use groundcite_index::{ChunkIndex, Index, IngestOptions};
//! # fn main() -> groundcite_index::Result<()> {
//! let mut index = Index::open_or_create(&Index::default_dir())?;
//! let summary = index.ingest(&["docs".into()], &IngestOptions::default(), &mut |_| {})?;
//! println!("{} files indexed, {} unchanged", summary.indexed, summary.unchanged);
//! for hit in index.search("how long do reimbursements take?", 5)? {
//!     if hit.score >= groundcite_index::DEFAULT_GATE_THRESHOLD {
//!         println!("{} {:.2} {}", hit.chunk.id, hit.score, hit.chunk.section);
//!     }
//! }
//! # Ok(()) }
//! ```
//!
//! ## Retrieval and the normalised score
//!
//! Text is analysed with one analyzer for indexing and queries: words,
//! lowercase, English stop words plus question words (`how`, `many`, `can`,
//! `my`…), English stemming ("reimbursed" and "reimbursement" meet at
//! `reimburs`). A query is the disjunction of its distinct analysed terms over
//! the chunk text (boost 1), section label (0.5) and page title (0.5), ranked
//! by tantivy's BM25. No query syntax is parsed, so user text can never fail.
//!
//! BM25 scores grow with the number and rarity of query terms, so a raw score
//! means nothing across queries. [`Hit::score`] is instead the **IDF-weighted
//! coverage** of the query by the hit:
//!
//! ```text
//! score = Σ idf(t) over query terms t present in the chunk (text, section or title)
//!         ───────────────────────────────────────────────────────────────
//!         Σ idf(t) over all query terms
//! idf(t) = ln(1 + (N − df + 0.5) / (df + 0.5))    (BM25's idf, N chunks)
//! ```
//!
//! Why this: it is in `[0, 1]` by construction and means the same thing for
//! every query ("how much of what was asked, weighted by how specific each
//! word is, does this passage mention"), so one threshold can gate all
//! queries. A term the corpus never contains gets the largest idf,
//! `ln(2N + 2)`, so a question about something absent ("home internet
//! **stipend**", "**dental** carrier") scores low even when its common words
//! match. The alternative, raw score divided by the score of an ideal
//! document, depends on BM25's length normalisation and term frequency
//! saturation, which measure how *much* a chunk talks about a word, not
//! *whether* it covers the question; coverage separated answerable from
//! unanswerable questions better on the development set. Ranking still uses
//! BM25 (equal scores in chunk id order, among up to k + 256 tied hits, so
//! the order does not depend on how ingest laid documents out in segments); the gate uses the best normalised
//! score among the top-k.
//! Coverage cannot tell "mentions the words" from "answers the question":
//! lexically close unanswerable questions pass the gate and must be refused
//! by a later stage.
//!
//! ## Dense + lexical (hybrid) retrieval
//!
//! With an embedding model ([`Index::set_embedder`], a [`ChunkEmbedder`]
//! such as `groundcite_embed::Embedder`), ingest also computes one vector
//! per chunk ([`vectors::embedding_text`]: the section label, then the
//! chunk text), batched and reported as [`Progress::Embedding`], and stores
//! them in `groundcite-vectors.bin` beside the manifest ([`vectors`]: per
//! file, with the model id; written before the manifest, atomically).
//! Ingest stays incremental: unchanged files keep their vectors, removed
//! files drop theirs, and a file without vectors of the configured model
//! (ingested without a model, or with another one) counts as changed, so
//! the run embeds it; [`IngestSummary::model_changed`] says when another
//! model's vectors were replaced. [`Index::check_vectors`] is the error a
//! caller gives when an index lacks the model's vectors (the engine does,
//! rather than fall back to lexical silently).
//!
//! [`Index::search_hybrid`] ranks every chunk by its dense similarity to
//! the question ([`vectors::dense_similarity`]: the mean of the chunk
//! vector's cosine and its best answer unit's, dot products of unit
//! vectors; ~2,400 chunks and ~13,000 units × 384 values at handbook size)
//! and fuses that ranking with BM25's over the chunk bodies by [`Fusion`]
//! ([`fusion`] has the measured methods; `bench/src/bin/fusion.rs` measures
//! them). Lexical search ranks by the body, the section label and the page
//! title; hybrid search's BM25 side leaves the headings out: the dense
//! side embeds the section label with the body, every chunk of a page
//! shares its title, and three scorers per term rather than one made
//! BM25 the tail of hybrid search at a million chunks (BENCHMARKS.md). That side ranks only its
//! candidates ([`fusion::lexical_candidates`]: the chunks holding one of the
//! query's rarest terms, about [`fusion::LEXICAL_CANDIDATES`] of them, each
//! scored by every term); over the handbook, each of the 108 dev
//! questions' lexical side is the same as over every chunk. The hit's
//! [`Hit::score`] is [`fusion::hybrid_score`]: half the similarity
//! (clipped at 0), half the lexical coverage above, so it stays in `0..=1`
//! and comparable across queries; `raw_score` is BM25's (0 for a chunk
//! outside BM25's top); [`Hit::units`] carries the chunk's unit vectors.
//!
//! The default fusion (weighted score fusion, 0.9 on the cosine, over
//! BM25's top 100 by the body) was fitted with `bench/src/bin/fusion.rs` on half
//! of the paraphrased handbook questions' pages and checked on the other
//! half, against BM25 alone, dense alone, BM25 re-scored by the similarity
//! and reciprocal rank fusion; the figures of each method are in
//! BENCHMARKS.md. Retrieval scores are not a gate signal for the model path:
//! they barely separate answerable from unanswerable paraphrased questions,
//! so answerability is judged over sentences (`groundcite_engine::answerability`).
//!
//! ## Defaults
//!
//! - chunks: target 800 bytes, max 1200 ([`IngestOptions`]);
//! - index location: [`Index::default_dir`] (`$GROUNDCITE_INDEX`, else
//!   `./.groundcite/index`), with `groundcite-manifest.json` beside tantivy's files;
//! - writer: 2 threads, 50 MB;
//! - gate: [`DEFAULT_GATE_THRESHOLD`] = 0.45 on the best normalised score of
//!   the top-k, calibrated by `bench/src/bin/calibrate.rs` on the handbook
//!   development questions: answerable questions score 0.58–1.00 (15/15 kept),
//!   unanswerable ones 0.29–0.87; 0.45 rejects every unanswerable question
//!   with an off-topic word (5/8) and keeps a 0.10+ margin below the lowest
//!   answerable one, since one stray word in a paraphrase ("please tell me")
//!   costs 0.1–0.2. The remaining 3 ("contractors' bereavement leave",
//!   "badge into the DC office", "personal cell phone plan") are lexically
//!   covered; refusing them is the answering stage's job.
//!
//! ## Backends
//!
//! [`ChunkIndex`] is the index as the rest of groundcite sees it: ingest,
//! search, count, list. [`Index`] (tantivy, one directory) implements it, and
//! so does `groundcite_pg::PgIndex` (PostgreSQL, shared by many nodes). Both
//! read files through [`source`] (walk, keys, hashes, chunks), so they agree
//! on ids, labels, URLs, offsets and on what is unchanged; one contract suite
//! (`crates/pg/tests/contract.rs`) runs against both.
//!
//! Two features, both on by default: `tantivy` is the embedded index
//! ([`Index`], tantivy and its analyzer) and `embed` the in-process model as a
//! [`ChunkEmbedder`] (candle). Without them the crate is the part every
//! backend shares (ingest, chunking, [`ChunkIndex`], fusion, the approximate
//! index, the vectors' formats, [`query_words`]): `groundcite-pg` builds on
//! that alone, without tantivy or candle.
//!
//! ## Incremental ingest
//!
//! The manifest maps each file (root + relative path) to a BLAKE3 hash of its
//! bytes and of the options that shape chunks. Unchanged files are skipped;
//! changed files have their chunks deleted (by a per-file key) and re-added;
//! files that disappeared from an ingested root are deleted. One tantivy
//! commit per run, then the manifest is written to a temporary file and
//! renamed. A crash between the two leaves a manifest older than the index,
//! which the next run repairs (it deletes by key before adding). A file that
//! cannot be read or parsed is reported in [`IngestSummary::errors`] and
//! skipped (its previous chunks, if any, are removed).

#[cfg(feature = "tantivy")]
mod analysis;
pub mod ann;
mod block;
pub mod chunk;
pub mod demo;
pub mod frontmatter;
pub mod fusion;
pub mod html;
#[cfg(feature = "tantivy")]
mod index;
pub mod ingest;
pub mod markdown;
pub mod plain;
mod query;
pub mod score;
pub mod source;
pub mod template;
#[cfg(feature = "test-support")]
pub mod testing;
#[cfg(feature = "tantivy")]
mod top;
pub mod url;
pub mod vectors;

use std::path::PathBuf;

pub use block::{Block, BlockKind, slugify};
pub use demo::demo_documents;
pub use fusion::Fusion;
#[cfg(feature = "tantivy")]
pub use index::Index;
pub use ingest::{Format, IngestOptions, MAX_NESTING_DEPTH, TooDeep, prepare_document};
pub use query::query_words;
pub use vectors::{ChunkEmbedder, VectorStore};

/// The audit log's file name, which groundcite may keep inside an index
/// folder (with SQLite's `-wal` and `-shm` files): a folder holding only
/// these is still an empty place for a new index.
pub const AUDIT_FILE: &str = "audit.sqlite";

/// The default retrieval gate: a question whose best hit (top-k) has a
/// normalised score below this is refused before any model call.
/// Calibrated with `cargo run --release -p groundcite-bench --bin calibrate`.
pub const DEFAULT_GATE_THRESHOLD: f32 = 0.45;

/// What answering reads from an index: search, lexical or hybrid. Every
/// [`ChunkIndex`] is one; a store of your own that groundcite does not
/// ingest into implements only this (its `search`, with scores in `0..=1`
/// so the retrieval gate can judge them) to be asked with the engine.
pub trait Retriever: Send + Sync {
    /// The top `k` chunks for `query`, best first, with normalised scores.
    /// Never fails on query syntax.
    fn search(&self, query: &str, k: usize) -> Result<Vec<Hit>>;

    /// How many chunks there are to retrieve from, when known (an empty
    /// index is not ready to answer).
    fn chunk_count(&self) -> Option<u64> {
        None
    }

    /// Whether it holds chunk vectors (of the model that embeds the
    /// questions), so [`Retriever::search_hybrid`] can run.
    fn has_vectors(&self) -> bool {
        false
    }

    /// Dense and lexical search fused, with the question's vector. Only
    /// called when [`Retriever::has_vectors`].
    fn search_hybrid(&self, query: &str, vector: &[f32], k: usize) -> Result<Vec<Hit>> {
        let _ = (query, vector, k);
        Err(Error::Vectors("this retriever holds no vectors".into()))
    }

    /// [`Retriever::search_hybrid`] with the question's vector from
    /// `embed`: embedded first by default; a retriever may embed while it
    /// searches its lexical side. `embed`'s error is returned as it is.
    fn search_hybrid_embedding(
        &self,
        query: &str,
        embed: &(dyn Fn() -> Result<Vec<f32>> + Sync),
        k: usize,
    ) -> Result<Vec<Hit>> {
        self.search_hybrid(query, &embed()?, k)
    }
}

/// An index of chunks: the embedded tantivy [`Index`] or another backend
/// (`groundcite_pg::PgIndex`). Every implementation gives the same chunks
/// (ids, labels, URLs, offsets) for the same files, the same incremental
/// semantics (per-file content hash and options fingerprint), and normalised
/// scores in `0..=1` (IDF-weighted coverage of the query's analysed terms).
/// One contract test suite runs against every implementation
/// (`crates/pg/tests/contract.rs`). Searching is its [`Retriever`] side.
pub trait ChunkIndex: Retriever {
    /// Ingests files and folders: changed files replaced, files gone from an
    /// ingested root removed, unchanged files skipped, per-file errors
    /// reported in the summary. Atomic: a failed run changes nothing.
    fn ingest(
        &mut self,
        roots: &[PathBuf],
        opts: &IngestOptions,
        progress: &mut dyn FnMut(Progress),
    ) -> Result<IngestSummary> {
        let mut summary = IngestSummary::default();
        let plan = source::walk(roots, &mut summary);
        self.ingest_plan(plan, opts, summary, progress)
    }

    /// Ingests in-memory documents `(relative_path, contents)` under the
    /// logical root `root_name`; documents of that root not given are removed,
    /// so calling it again with the same set changes nothing.
    fn ingest_documents(
        &mut self,
        root_name: &str,
        docs: &[(&str, &str)],
        opts: &IngestOptions,
        progress: &mut dyn FnMut(Progress),
    ) -> Result<IngestSummary> {
        let mut summary = IngestSummary::default();
        let plan = source::memory(root_name, docs, &mut summary);
        self.ingest_plan(plan, opts, summary, progress)
    }

    /// Runs one ingest plan atomically ([`source::Plan::run`] against this
    /// backend's store), adding to `summary` what the plan's walk counted.
    fn ingest_plan(
        &mut self,
        plan: source::Plan,
        opts: &IngestOptions,
        summary: IngestSummary,
        progress: &mut dyn FnMut(Progress),
    ) -> Result<IngestSummary>;

    /// Number of chunks.
    fn num_chunks(&self) -> Result<u64>;

    /// Every chunk, sorted by path, start offset and id.
    fn all_chunks(&self) -> Result<Vec<Chunk>>;

    /// This backend's calibrated default gate threshold.
    fn default_gate_threshold(&self) -> f32 {
        DEFAULT_GATE_THRESHOLD
    }

    /// Where the index lives, for messages (a directory, or a URL without
    /// its password).
    fn location(&self) -> String;
}

#[cfg(feature = "tantivy")]
impl ChunkIndex for Index {
    fn ingest_plan(
        &mut self,
        plan: source::Plan,
        opts: &IngestOptions,
        summary: IngestSummary,
        progress: &mut dyn FnMut(Progress),
    ) -> Result<IngestSummary> {
        Index::run(self, plan, opts, summary, progress)
    }

    fn num_chunks(&self) -> Result<u64> {
        Ok(Index::num_chunks(self))
    }

    fn all_chunks(&self) -> Result<Vec<Chunk>> {
        Index::all_chunks(self)
    }

    fn location(&self) -> String {
        self.dir().display().to_string()
    }
}

#[cfg(feature = "tantivy")]
impl Retriever for Index {
    fn search(&self, query: &str, k: usize) -> Result<Vec<Hit>> {
        Index::search(self, query, k)
    }

    fn chunk_count(&self) -> Option<u64> {
        Some(Index::num_chunks(self))
    }

    fn has_vectors(&self) -> bool {
        !self.vectors().is_empty()
    }

    fn search_hybrid(&self, query: &str, vector: &[f32], k: usize) -> Result<Vec<Hit>> {
        Index::search_hybrid(self, query, vector, k, &Fusion::default())
    }

    /// The question embedded while BM25 searches, the two sharing the
    /// cores.
    fn search_hybrid_embedding(
        &self,
        query: &str,
        embed: &(dyn Fn() -> Result<Vec<f32>> + Sync),
        k: usize,
    ) -> Result<Vec<Hit>> {
        Index::search_hybrid_with(self, query, embed, k, &Fusion::default())
    }
}

/// A passage of a source document.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Chunk {
    /// `{relative/path.md}#L{first}-L{last}`: stable across re-ingests.
    pub id: String,
    /// Path relative to its root (after `strip_prefix`).
    pub path: String,
    /// Page title (front matter, `<title>`, first `#` heading, or file stem).
    pub title: String,
    /// Heading path joined with " › ", or the title above the first heading.
    pub section: String,
    /// Page URL plus `#anchor` of the chunk's heading.
    pub source_url: String,
    /// Cleaned, readable text (heading lines first).
    pub text: String,
    /// Byte range of the source file the chunk covers.
    pub start: usize,
    /// End of the byte range in the source file (exclusive).
    pub end: usize,
    /// Front-matter keys other than title and permalink.
    pub metadata: serde_json::Value,
}

impl Chunk {
    /// The page URL without the `#anchor`: one source per document, for
    /// deduplicating citations ("one chip per document, not per chunk").
    pub fn page_url(&self) -> &str {
        self.source_url
            .split_once('#')
            .map_or(self.source_url.as_str(), |(page, _)| page)
    }
}

/// A search result.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Hit {
    /// The chunk found.
    pub chunk: Chunk,
    /// Normalised score in `0..=1`, comparable across queries (see crate docs).
    pub score: f32,
    /// Tantivy's BM25 score (ranking only).
    pub raw_score: f32,
    /// The vectors of the chunk's answer units, when the index stores
    /// them (hybrid search over the embedded index): the answerability
    /// judgement reuses them instead of embedding the passage again.
    #[serde(skip)]
    pub units: Option<crate::vectors::UnitVectors>,
}

/// What one ingest run did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct IngestSummary {
    /// Every file found (or document given), supported or not.
    pub files_seen: usize,
    /// Files (re)chunked and written this run.
    pub indexed: usize,
    /// Files whose content and options did not change.
    pub unchanged: usize,
    /// Files removed because they disappeared from an ingested root.
    pub removed: usize,
    /// Files with an unsupported extension.
    pub skipped: usize,
    /// Chunks written this run.
    pub chunks: usize,
    /// Files that could not be read or parsed; the run went on without them.
    pub errors: Vec<IngestError>,
    /// Files ingested with something dropped (a refused permalink): not
    /// errors, reported.
    pub warnings: Vec<IngestError>,
    /// Chunk vectors computed this run (ingesting with a model).
    pub embedded: usize,
    /// The model the index's vectors were of, when this run's model is
    /// another one (every file was then re-embedded).
    pub model_changed: Option<String>,
}

/// A file that could not be ingested.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IngestError {
    /// The file (or root) as the user named it.
    pub path: PathBuf,
    /// What went wrong, for the user.
    pub message: String,
}

impl std::fmt::Display for IngestError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.path.display(), self.message)
    }
}

/// Progress of an ingest run, for a progress bar.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Progress {
    /// The run starts: the files to read are known.
    Started {
        /// Supported files (or documents) this run reads.
        total_files: usize,
    },
    /// A file has been read, chunked and stored (or found unchanged, or failed).
    File {
        /// The file, as the user named it.
        path: PathBuf,
        /// Files done so far, this one included.
        done: usize,
        /// Files this run reads.
        total: usize,
    },
    /// Chunks embedded so far (each with its answer units), of `total`
    /// to embed this run.
    Embedding {
        /// Chunks embedded so far.
        done: usize,
        /// Chunks to embed this run.
        total: usize,
    },
    /// Building the approximate index over `chunks` chunk vectors (an
    /// index of `vectors::ANN_MIN_CHUNKS` or more; 40 s at a million).
    IndexingVectors {
        /// Number of chunk vectors indexed.
        chunks: usize,
    },
    /// The changes are being committed to the index.
    Committing,
}

#[cfg(feature = "tantivy")]
impl From<tantivy::TantivyError> for Error {
    fn from(e: tantivy::TantivyError) -> Self {
        Error::Tantivy(e)
    }
}

/// Errors of this crate. Per-file problems are not errors: they are reported
/// in [`IngestSummary::errors`].
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// There is no index in this folder.
    #[error("no index in {0} (run an ingest first)")]
    NotFound(PathBuf),
    /// The folder holds other files and no index: nothing is written
    /// there.
    #[error(
        "{path} is not a groundcite index and holds other files: nothing was written there; \
         use a new or empty folder for the index{hint}"
    )]
    NotAnIndex {
        /// The folder given for the index.
        path: PathBuf,
        /// ` (did you mean …?)` naming an index inside it, or empty.
        hint: String,
    },
    // Messages include the error they wrap, which is therefore not also
    // their `source`: a printer of the chain would say it twice.
    /// A file or folder could not be read or written.
    #[error("{path}: {error}")]
    Io {
        /// The file or folder.
        path: PathBuf,
        /// The I/O error.
        error: std::io::Error,
    },
    /// An error of the tantivy index.
    #[cfg(feature = "tantivy")]
    #[error("index error: {0}")]
    Tantivy(tantivy::TantivyError),
    /// The manifest or the vectors file is invalid (or could not be encoded).
    #[error("manifest {path}: {message}")]
    Manifest {
        /// The manifest or vectors file.
        path: PathBuf,
        /// What is wrong with it.
        message: String,
    },
    /// The index on disk does not have the schema this version expects.
    #[error("incompatible index: {0}")]
    Incompatible(String),
    /// The index has no vectors (or another model's) for the model given.
    #[error("{0}")]
    Vectors(String),
    /// The embedding model failed on chunk texts.
    #[error("embedding chunks: {0}")]
    Embedding(String),
    /// An error of another backend (PostgreSQL), already worded for users.
    #[error("{0}")]
    Backend(String),
}

/// This crate's result type.
pub type Result<T> = std::result::Result<T, Error>;
