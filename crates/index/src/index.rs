//! The on-disk tantivy index: a thin adapter around the pure parts. This
//! file holds the schema, opening and the ingest run; `search.rs` BM25 and
//! hybrid search.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use tantivy::schema::{
    FAST, Field, INDEXED, IndexRecordOption, STORED, STRING, Schema, TextFieldIndexing,
    TextOptions, Value,
};
use tantivy::tokenizer::{LowerCaser, RemoveLongFilter, SimpleTokenizer, TextAnalyzer};
use tantivy::{IndexReader, IndexWriter, ReloadPolicy, TantivyDocument, Term};

use crate::analysis::StopStem;
use crate::fusion;
use crate::ingest::IngestOptions;
use crate::query::STOP_WORDS;
use crate::source::{self, Plan};
use crate::vectors::{ChunkEmbedder, ChunkTexts, FileVectors, VectorStore, embed_chunks};
use crate::{Chunk, Error, IngestSummary, Progress, Result};

mod search;

const TOKENIZER: &str = "groundcite_en";
const MANIFEST: &str = "groundcite-manifest.json";

/// The analyzer used for indexing and for queries: words, lowercased, stop
/// words removed, English (Porter/Snowball) stemming.
pub(crate) fn analyzer() -> TextAnalyzer {
    TextAnalyzer::builder(SimpleTokenizer::default())
        .filter(RemoveLongFilter::limit(40))
        .filter(LowerCaser)
        .filter(StopStem::new(STOP_WORDS.iter().copied()))
        .build()
}

/// Analyses text into terms (in order, with repeats).
pub(crate) fn analyse(text: &str) -> Vec<String> {
    let mut a = analyzer();
    let mut stream = a.token_stream(text);
    let mut out = Vec::new();
    while stream.advance() {
        out.push(stream.token().text.clone());
    }
    out
}

#[derive(Clone, Copy)]
struct Fields {
    id: Field,
    key: Field,
    path: Field,
    title: Field,
    section: Field,
    url: Field,
    text: Field,
    start: Field,
    end: Field,
    metadata: Field,
}

fn schema() -> (Schema, Fields) {
    let mut b = Schema::builder();
    let text_opts = TextOptions::default()
        .set_indexing_options(
            TextFieldIndexing::default()
                .set_tokenizer(TOKENIZER)
                .set_index_option(IndexRecordOption::WithFreqs),
        )
        .set_stored();
    let fields = Fields {
        id: b.add_text_field("id", STRING | STORED | FAST),
        key: b.add_text_field("key", STRING),
        path: b.add_text_field("path", STRING | STORED),
        title: b.add_text_field("title", text_opts.clone()),
        section: b.add_text_field("section", text_opts.clone()),
        url: b.add_text_field("url", STORED),
        text: b.add_text_field("text", text_opts),
        start: b.add_u64_field("start", STORED | INDEXED),
        end: b.add_u64_field("end", STORED),
        metadata: b.add_text_field("metadata", STORED),
    };
    (b.build(), fields)
}

fn fields_of(schema: &Schema) -> Result<Fields> {
    let f = |name: &str| {
        schema
            .get_field(name)
            .map_err(|_| Error::Incompatible(format!("index has no field `{name}`")))
    };
    Ok(Fields {
        id: f("id")?,
        key: f("key")?,
        path: f("path")?,
        title: f("title")?,
        section: f("section")?,
        url: f("url")?,
        text: f("text")?,
        start: f("start")?,
        end: f("end")?,
        metadata: f("metadata")?,
    })
}

/// The per-file manifest stored beside the index.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Manifest {
    version: u32,
    files: BTreeMap<String, FileEntry>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
struct FileEntry {
    root: String,
    path: String,
    hash: String,
    chunks: usize,
}

/// An on-disk index of chunks with its manifest and, when ingested with a
/// model, its chunk vectors.
pub struct Index {
    dir: PathBuf,
    index: tantivy::Index,
    reader: IndexReader,
    fields: Fields,
    manifest: Manifest,
    vectors: VectorStore,
    embedder: Option<Arc<dyn ChunkEmbedder>>,
    /// Hybrid search's lexical budget ([`fusion::lexical_candidates`]).
    lexical_candidates: usize,
}

impl std::fmt::Debug for Index {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Index")
            .field("dir", &self.dir)
            .field("chunks", &self.num_chunks())
            .finish()
    }
}

impl Index {
    /// `$GROUNDCITE_INDEX` if set, else `./.groundcite/index`.
    pub fn default_dir() -> PathBuf {
        match std::env::var_os("GROUNDCITE_INDEX") {
            Some(v) if !v.is_empty() => PathBuf::from(v),
            _ => PathBuf::from(".groundcite").join("index"),
        }
    }

    /// Opens the index in `dir`, creating the directory and an empty index
    /// if there is none.
    pub fn open_or_create(dir: &Path) -> Result<Index> {
        if dir.join("meta.json").exists() {
            return Index::open(dir);
        }
        // A folder that holds other files is not made an index: nothing
        // is written among a user's files.
        let holds_other_files = fs::read_dir(dir).is_ok_and(|mut entries| {
            entries.any(|e| {
                e.is_ok_and(|e| {
                    !e.file_name()
                        .to_str()
                        .is_some_and(|name| name.starts_with(crate::AUDIT_FILE))
                })
            })
        });
        if holds_other_files {
            let inner = dir.join("index");
            return Err(Error::NotAnIndex {
                path: dir.to_path_buf(),
                hint: if inner.join("meta.json").exists() {
                    format!(" (did you mean {}?)", inner.display())
                } else {
                    String::new()
                },
            });
        }
        fs::create_dir_all(dir).map_err(|e| Error::Io {
            path: dir.to_path_buf(),
            error: e,
        })?;
        let (schema, fields) = schema();
        let index = tantivy::Index::create_in_dir(dir, schema)?;
        Index::finish_open(dir, index, fields)
    }

    /// Opens an existing index; [`Error::NotFound`] if there is none in `dir`.
    pub fn open(dir: &Path) -> Result<Index> {
        if !dir.join("meta.json").exists() {
            return Err(Error::NotFound(dir.to_path_buf()));
        }
        let index = tantivy::Index::open_in_dir(dir)?;
        let fields = fields_of(&index.schema())?;
        Index::finish_open(dir, index, fields)
    }

    fn finish_open(dir: &Path, index: tantivy::Index, fields: Fields) -> Result<Index> {
        index.tokenizers().register(TOKENIZER, analyzer());
        let reader = index
            .reader_builder()
            .reload_policy(ReloadPolicy::Manual)
            .try_into()?;
        let manifest = read_manifest(&dir.join(MANIFEST))?;
        let vectors = VectorStore::open(dir)?;
        Ok(Index {
            dir: dir.to_path_buf(),
            index,
            reader,
            fields,
            manifest,
            vectors,
            embedder: None,
            lexical_candidates: fusion::LEXICAL_CANDIDATES,
        })
    }

    /// Ingests with this model from now on: every chunk written gets its
    /// vector, and files whose vectors are missing or of another model are
    /// re-chunked and embedded even when unchanged.
    pub fn set_embedder(&mut self, embedder: Arc<dyn ChunkEmbedder>) {
        self.embedder = Some(embedder);
    }

    /// How many chunks hybrid search's lexical side ranks, about
    /// ([`fusion::lexical_candidates`]; default
    /// [`fusion::LEXICAL_CANDIDATES`], 0 for every chunk holding a query
    /// term). Lexical search always ranks every such chunk.
    pub fn set_lexical_candidates(&mut self, budget: usize) {
        self.lexical_candidates = budget;
    }

    /// The chunk vectors (empty when ingested without a model).
    pub fn vectors(&self) -> &VectorStore {
        &self.vectors
    }

    /// How many indexed files have no vectors of `model_id`.
    pub fn files_without_vectors(&self, model_id: &str) -> usize {
        self.manifest
            .files
            .keys()
            .filter(|k| !self.vectors.has(k, model_id))
            .count()
    }

    /// Fails with [`Error::Vectors`] unless every indexed file has vectors
    /// of `model_id`: searching such an index with that model would
    /// silently leave chunks out of the dense ranking.
    pub fn check_vectors(&self, model_id: &str) -> Result<()> {
        let missing = self.files_without_vectors(model_id);
        if missing == 0 && self.num_chunks() as usize == self.vectors.len() {
            return Ok(());
        }
        let had = if self.vectors.model_id.is_empty() || self.vectors.is_empty() {
            "it was ingested without an embedding model".to_string()
        } else if self.vectors.model_id != model_id {
            crate::vectors::mismatch(&self.vectors.model_id, model_id)
        } else {
            format!(
                "{missing} of {} files have no vectors",
                self.manifest.files.len()
            )
        };
        Err(Error::Vectors(format!(
            "the index in {} has no vectors for the configured model {model_id}: {had}; run `groundcite ingest PATH...` again with the model configured (it embeds what is missing), or run without a model",
            self.dir.display()
        )))
    }

    /// The roots its files were ingested from: a folder's path as given,
    /// or [`source::memory_root`] of the name documents given in memory
    /// were ingested under.
    pub fn roots(&self) -> BTreeSet<&str> {
        self.manifest
            .files
            .values()
            .map(|f| f.root.as_str())
            .collect()
    }

    /// The directory of this index.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Number of chunks in the index (as of the last commit).
    pub fn num_chunks(&self) -> u64 {
        self.reader.searcher().num_docs()
    }

    /// One ingest run: one tantivy commit, then the manifest (the store half
    /// of [`ChunkIndex::ingest`](crate::ChunkIndex::ingest)).
    pub(crate) fn run(
        &mut self,
        plan: Plan,
        opts: &IngestOptions,
        mut summary: IngestSummary,
        progress: &mut dyn FnMut(Progress),
    ) -> Result<IngestSummary> {
        // Work on a copy of the manifest: if the run fails or panics before
        // the commit, the manifest in memory still describes the committed
        // index.
        let mut run = TantivyRun {
            index: self,
            opts,
            writer: None,
            manifest: self.manifest.clone(),
            model_id: self.embedder.as_ref().map(|e| e.model_id().to_string()),
            touched: BTreeSet::new(),
            pending: Vec::new(),
        };
        plan.run(&mut run, opts, &mut summary, progress)?;
        let TantivyRun {
            writer,
            manifest,
            touched,
            pending,
            ..
        } = run;
        if let Some(mut w) = writer {
            let mut vectors =
                self.next_vectors(&manifest, &touched, pending, &mut summary, progress)?;
            if vectors.wants_ann() {
                progress(Progress::IndexingVectors {
                    chunks: vectors.len(),
                });
            }
            vectors.refresh_ann();
            progress(Progress::Committing);
            w.commit()?;
            w.wait_merging_threads()?;
            self.reader.reload()?;
            // Vectors before the manifest: a crash between the two leaves a
            // manifest older than the vectors, and the next run redoes those
            // files.
            vectors.write(&self.dir)?;
            // A store with an approximate index searches with its rows
            // left in the file, as when the index is opened.
            self.vectors = if vectors.has_ann() {
                VectorStore::open(&self.dir)?
            } else {
                vectors
            };
            self.manifest = Manifest {
                version: 1,
                ..manifest
            };
            write_manifest(&self.dir.join(MANIFEST), &self.manifest)?;
        } else if self.vectors.has_ann() && !self.vectors.ann_has_unit_codes() {
            // Nothing changed, but the approximate index predates the
            // units' sign codes: built again, so that search reads the
            // rows of 500 candidates rather than of all of them.
            progress(Progress::IndexingVectors {
                chunks: self.vectors.len(),
            });
            let mut vectors = self.vectors.to_resident()?;
            vectors.refresh_ann();
            vectors.write(&self.dir)?;
            self.vectors = VectorStore::open(&self.dir)?;
        }
        Ok(summary)
    }

    /// The vectors after a run: those of untouched files kept (unless the
    /// model changed), those of the files written this run computed.
    fn next_vectors(
        &self,
        manifest: &Manifest,
        touched: &BTreeSet<String>,
        pending: Vec<PendingFile>,
        summary: &mut IngestSummary,
        progress: &mut dyn FnMut(Progress),
    ) -> Result<VectorStore> {
        let old = &self.vectors;
        let mut store = match &self.embedder {
            Some(embedder) if old.model_id != embedder.model_id() => {
                if !old.is_empty() {
                    summary.model_changed = Some(old.model_id.clone());
                }
                VectorStore::unchecked(embedder.model_id().to_string(), 0, BTreeMap::new())
            }
            // The rows kept are read into memory (from the file, for a
            // store on disk): the run writes them with the new ones.
            _ => old.to_resident()?,
        };
        store.retain_files(|key, _| manifest.files.contains_key(key) && !touched.contains(key));
        let Some(embedder) = &self.embedder else {
            return Ok(store);
        };
        let chunks: Vec<&ChunkTexts> = pending.iter().flat_map(|f| &f.chunks).collect();
        let (mut data, mut units, dim) =
            embed_chunks(embedder.as_ref(), &chunks, store.dim, &mut |done, total| {
                progress(Progress::Embedding { done, total })
            })
            .map_err(Error::Embedding)?;
        drop(chunks);
        store.dim = dim;
        // Each file's rows are moved out from the end, and the rows left
        // shrunk to fit, so the run holds its vectors once, not twice (a
        // million chunks' rows are 9.8 GB): shrinking a large allocation
        // returns its tail to the system.
        for file in pending.into_iter().rev() {
            summary.embedded += file.ids.len();
            let unit_counts: Vec<u32> = file
                .chunks
                .iter()
                .map(|c| u32::try_from(c.units.len()).unwrap_or(u32::MAX))
                .collect();
            let unit_count: usize = unit_counts.iter().map(|&n| n as usize).sum();
            let chunk_data = data.split_off(data.len() - file.ids.len() * dim);
            let unit_data = units.split_off(units.len() - unit_count * dim);
            for rows in [&mut data, &mut units] {
                if rows.capacity() - rows.len() >= SHRINK_BYTES / 4 {
                    rows.shrink_to_fit();
                }
            }
            store.insert_file(
                file.key,
                FileVectors {
                    ids: file.ids,
                    data: chunk_data,
                    unit_counts,
                    unit_data,
                },
            );
        }
        Ok(store)
    }

    fn writer(&self, opts: &IngestOptions) -> Result<IndexWriter> {
        let threads = opts.writer_threads.clamp(1, 2);
        let budget = opts.writer_memory_bytes.max(15_000_000 * threads);
        Ok(self.index.writer_with_num_threads(threads, budget)?)
    }

    fn to_doc(&self, key: &str, c: &Chunk) -> TantivyDocument {
        let f = &self.fields;
        let mut d = TantivyDocument::default();
        d.add_text(f.id, &c.id);
        d.add_text(f.key, key);
        d.add_text(f.path, &c.path);
        d.add_text(f.title, &c.title);
        d.add_text(f.section, &c.section);
        d.add_text(f.url, &c.source_url);
        d.add_text(f.text, &c.text);
        d.add_u64(f.start, c.start as u64);
        d.add_u64(f.end, c.end as u64);
        d.add_text(f.metadata, c.metadata.to_string());
        d
    }

    fn chunk_from_doc(&self, d: &TantivyDocument) -> Chunk {
        let f = &self.fields;
        let s = |field| {
            d.get_first(field)
                .and_then(|v| v.as_str().map(str::to_string))
                .unwrap_or_default()
        };
        let n = |field| d.get_first(field).and_then(|v| v.as_u64()).unwrap_or(0) as usize;
        Chunk {
            id: s(f.id),
            path: s(f.path),
            title: s(f.title),
            section: s(f.section),
            source_url: s(f.url),
            text: s(f.text),
            start: n(f.start),
            end: n(f.end),
            metadata: serde_json::from_str(&s(f.metadata)).unwrap_or(serde_json::Value::Null),
        }
    }

    /// Every chunk in the index, sorted by path and start offset.
    pub fn all_chunks(&self) -> Result<Vec<Chunk>> {
        let searcher = self.reader.searcher();
        let addrs = searcher.search(
            &tantivy::query::AllQuery,
            &tantivy::collector::DocSetCollector,
        )?;
        let mut out = Vec::with_capacity(addrs.len());
        for addr in addrs {
            let doc: TantivyDocument = searcher.doc(addr)?;
            out.push(self.chunk_from_doc(&doc));
        }
        out.sort_by(|a, b| (&a.path, a.start, &a.id).cmp(&(&b.path, b.start, &b.id)));
        Ok(out)
    }
}

/// Rows of vectors (in bytes) moved out of an ingest's embeddings between
/// two shrinks of what is left.
const SHRINK_BYTES: usize = 64 << 20;

/// A file written this run whose chunks still need vectors.
struct PendingFile {
    key: String,
    ids: Vec<String>,
    /// What is embedded for each chunk.
    chunks: Vec<ChunkTexts>,
}

impl PendingFile {
    fn new(key: &str, chunks: &[Chunk]) -> PendingFile {
        PendingFile {
            key: key.to_string(),
            ids: chunks.iter().map(|c| c.id.clone()).collect(),
            chunks: chunks
                .iter()
                .map(|c| ChunkTexts::of(&c.section, &c.text))
                .collect(),
        }
    }
}

fn read_manifest(path: &Path) -> Result<Manifest> {
    match fs::read(path) {
        Ok(bytes) => serde_json::from_slice(&bytes).map_err(|e| Error::Manifest {
            path: path.to_path_buf(),
            message: e.to_string(),
        }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Manifest::default()),
        Err(e) => Err(Error::Io {
            path: path.to_path_buf(),
            error: e,
        }),
    }
}

/// The tantivy half of an ingest run: a writer opened at the first change,
/// and the manifest to write after the commit.
struct TantivyRun<'a> {
    index: &'a Index,
    opts: &'a IngestOptions,
    writer: Option<IndexWriter>,
    manifest: Manifest,
    /// The embedding model's id, when ingesting with one.
    model_id: Option<String>,
    /// Files removed or rewritten this run (their old vectors go).
    touched: BTreeSet<String>,
    /// Files written this run, to embed before the commit.
    pending: Vec<PendingFile>,
}

impl TantivyRun<'_> {
    /// Deletes every chunk of `key` (the writer is opened on first use).
    fn delete(&mut self, key: &str) -> Result<&mut IndexWriter> {
        let w = match self.writer.take() {
            Some(w) => w,
            None => self.index.writer(self.opts)?,
        };
        let w = self.writer.insert(w);
        w.delete_term(Term::from_field_text(self.index.fields.key, key));
        Ok(w)
    }
}

impl source::IngestStore for TantivyRun<'_> {
    type Error = Error;

    /// With a model, a file without vectors of that model counts as not
    /// indexed, so the run re-chunks and embeds it.
    fn indexed_hash(&self, key: &str) -> Option<&str> {
        if let Some(model_id) = &self.model_id
            && !self.index.vectors.has(key, model_id)
        {
            return None;
        }
        self.manifest.files.get(key).map(|e| e.hash.as_str())
    }

    fn remove(&mut self, key: &str) -> Result<()> {
        self.delete(key)?;
        self.manifest.files.remove(key);
        self.touched.insert(key.to_string());
        Ok(())
    }

    fn add(&mut self, src: &source::Source, hash: String, chunks: &[Chunk]) -> Result<()> {
        // Delete by key even for a file the manifest does not know: a run
        // killed between the commit and the manifest write left its chunks.
        let index = self.index;
        let w = self.delete(&src.key)?;
        for chunk in chunks {
            w.add_document(index.to_doc(&src.key, chunk))?;
        }
        self.touched.insert(src.key.clone());
        if self.model_id.is_some() {
            self.pending.push(PendingFile::new(&src.key, chunks));
        }
        self.manifest.files.insert(
            src.key.clone(),
            FileEntry {
                root: src.root.clone(),
                path: src.rel.clone(),
                hash,
                chunks: chunks.len(),
            },
        );
        Ok(())
    }

    fn keys_under(&self, roots: &BTreeSet<String>) -> Vec<String> {
        self.manifest
            .files
            .iter()
            .filter(|(_, e)| roots.contains(&e.root))
            .map(|(k, _)| k.clone())
            .collect()
    }
}

/// Writes the manifest atomically: a temporary file in the same directory,
/// synced, then renamed over the old one.
fn write_manifest(path: &Path, manifest: &Manifest) -> Result<()> {
    let tmp = path.with_extension("json.tmp");
    let io = |e| Error::Io {
        path: tmp.clone(),
        error: e,
    };
    let bytes = serde_json::to_vec_pretty(manifest).map_err(|e| Error::Manifest {
        path: path.to_path_buf(),
        message: e.to_string(),
    })?;
    {
        use std::io::Write;
        let mut f = fs::File::create(&tmp).map_err(io)?;
        f.write_all(&bytes).map_err(io)?;
        f.sync_all().map_err(io)?;
    }
    fs::rename(&tmp, path).map_err(|e| Error::Io {
        path: path.to_path_buf(),
        error: e,
    })
}
