//! What an ingest run reads: the files under the given roots (or in-memory
//! documents), their content hashes and their chunks. Shared by every index
//! backend so that they agree on keys, ids, URLs, offsets and on what counts
//! as "unchanged".

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};

use rayon::prelude::*;

use crate::ingest::{Format, IngestOptions, prepare_document};
use crate::{Chunk, IngestError, IngestSummary, url};

/// One file (or in-memory document) to ingest.
#[derive(Debug, Clone)]
pub struct Source {
    /// `{root}\u{1f}{rel}`: the per-file key backends delete and replace by.
    pub key: String,
    /// Canonical root path, or `mem:{name}` for in-memory documents.
    pub root: String,
    /// Path relative to the root (forward slashes, before `strip_prefix`).
    pub rel: String,
    /// Where to report errors (as the user named it).
    pub report_path: PathBuf,
    /// The absolute file path; `None` for in-memory documents.
    pub abs: Option<PathBuf>,
    /// In-memory contents; `None` for files.
    pub memory: Option<String>,
}

/// The sources of one run and the roots it covers (files of these roots not
/// among the sources are removed by the run).
#[derive(Debug, Default)]
pub struct Plan {
    /// The files (or documents) to ingest, in order.
    pub sources: Vec<Source>,
    /// The roots covered ([`Source::root`] values): their files not in
    /// `sources` are removed from the index.
    pub roots: BTreeSet<String>,
}

/// Walks `roots` (files or folders; hidden files and folders skipped), in
/// file-name order. Counts seen and unsupported files in `summary` and
/// reports unreadable roots and entries in `summary.errors`.
pub fn walk(roots: &[PathBuf], summary: &mut IngestSummary) -> Plan {
    let mut plan = Plan::default();
    for root in roots {
        let canon = match root.canonicalize() {
            Ok(c) => c,
            Err(e) => {
                summary.errors.push(IngestError {
                    path: root.clone(),
                    message: format!("cannot open: {e}"),
                });
                continue;
            }
        };
        let root_key = canon.to_string_lossy().into_owned();
        if !plan.roots.insert(root_key.clone()) {
            continue;
        }
        let base = if canon.is_file() {
            canon.parent().map(Path::to_path_buf).unwrap_or_default()
        } else {
            canon.clone()
        };
        let walker = walkdir::WalkDir::new(&canon)
            .sort_by_file_name()
            .into_iter()
            .filter_entry(|e| e.depth() == 0 || !e.file_name().to_string_lossy().starts_with('.'));
        for entry in walker {
            let entry = match entry {
                Ok(e) => e,
                Err(e) => {
                    let path = e
                        .path()
                        .map(Path::to_path_buf)
                        .unwrap_or_else(|| root.clone());
                    summary.errors.push(IngestError {
                        path,
                        message: e.to_string(),
                    });
                    continue;
                }
            };
            if !entry.file_type().is_file() {
                continue;
            }
            summary.files_seen += 1;
            let abs = entry.path().to_path_buf();
            let rel = abs
                .strip_prefix(&base)
                .unwrap_or(&abs)
                .to_string_lossy()
                .replace('\\', "/");
            if Format::from_path(&rel).is_none() {
                summary.skipped += 1;
                continue;
            }
            let report_path = root.join(abs.strip_prefix(&canon).unwrap_or(&abs));
            plan.sources.push(Source {
                key: format!("{root_key}\u{1f}{rel}"),
                root: root_key.clone(),
                rel,
                report_path,
                abs: Some(abs),
                memory: None,
            });
        }
    }
    plan
}

/// The root an index records for in-memory documents ingested under the
/// logical root `root_name` (as [`crate::Index::roots`] lists it).
pub fn memory_root(root_name: &str) -> String {
    format!("mem:{root_name}")
}

/// In-memory documents `(relative_path, contents)` under the logical root
/// `root_name` (stored as [`memory_root`]).
pub fn memory(root_name: &str, docs: &[(&str, &str)], summary: &mut IngestSummary) -> Plan {
    let root_key = memory_root(root_name);
    let mut sources = Vec::new();
    for (rel, contents) in docs {
        summary.files_seen += 1;
        let rel = rel.replace('\\', "/");
        if Format::from_path(&rel).is_none() {
            summary.skipped += 1;
            continue;
        }
        sources.push(Source {
            key: format!("{root_key}\u{1f}{rel}"),
            root: root_key.clone(),
            report_path: PathBuf::from(root_name).join(&rel),
            rel,
            abs: None,
            memory: Some(contents.to_string()),
        });
    }
    Plan {
        sources,
        roots: BTreeSet::from([root_key]),
    }
}

impl Source {
    /// The bytes of the document; the error is a message for the summary.
    pub fn read(&self) -> Result<Vec<u8>, String> {
        match &self.memory {
            Some(s) => Ok(s.clone().into_bytes()),
            None => fs::read(self.abs.as_deref().unwrap_or(&self.report_path))
                .map_err(|e| format!("cannot read: {e}")),
        }
    }

    /// A warning for the summary when the document's front-matter
    /// permalink is refused (not `http`, `https` or relative: see
    /// [`url::unsafe_permalink`]); the page then uses its template or file
    /// url.
    pub fn permalink_warning(&self, bytes: &[u8]) -> Option<String> {
        if Format::from_path(&self.rel) == Some(Format::Html) {
            return None;
        }
        let text = std::str::from_utf8(bytes).ok()?;
        let permalink = crate::frontmatter::parse(text).ok()?.permalink?;
        url::unsafe_permalink(&permalink).then(|| {
            format!(
                "front-matter permalink {permalink:?} not used: only http, https and relative links are"
            )
        })
    }

    /// The document's chunks; the error is a message for the summary.
    pub fn chunks(&self, bytes: Vec<u8>, opts: &IngestOptions) -> Result<Vec<Chunk>, String> {
        let text = String::from_utf8(bytes)
            .map_err(|e| format!("not valid UTF-8 (at byte {})", e.utf8_error().valid_up_to()))?;
        let abs = self.abs.clone();
        let (root, rel) = (self.root.clone(), self.rel.clone());
        prepare_document(&self.rel, &text, opts, move || match abs {
            Some(a) => url::file_url(&a),
            None => format!("doc://{}/{}", root.trim_start_matches("mem:"), rel),
        })
    }
}

/// BLAKE3 of the options fingerprint and the bytes: equal hashes mean equal
/// chunks, so the file can be skipped.
pub fn content_hash(opts: &IngestOptions, bytes: &[u8]) -> String {
    let mut h = blake3::Hasher::new();
    h.update(opts.fingerprint().as_bytes());
    h.update(&[0]);
    h.update(bytes);
    h.finalize().to_hex().to_string()
}

/// The backend half of an ingest run: what a store does with each file.
/// [`Plan::run`] is the other half, shared, so every backend agrees on what
/// is unchanged, what is replaced, what a failed file loses and what is
/// gone.
pub trait IngestStore {
    /// The store's error, which stops the run.
    type Error;
    /// The content hash recorded for `key`, if that file is indexed.
    fn indexed_hash(&self, key: &str) -> Option<&str>;
    /// Removes a file's chunks and its entry.
    fn remove(&mut self, key: &str) -> Result<(), Self::Error>;
    /// Adds a file's chunks and its entry (hash and chunk count).
    fn add(&mut self, src: &Source, hash: String, chunks: &[Chunk]) -> Result<(), Self::Error>;
    /// The keys of the indexed files under `roots`.
    fn keys_under(&self, roots: &BTreeSet<String>) -> Vec<String>;
    /// Removes the files that disappeared from an ingested root; one at a
    /// time unless the store can do better.
    fn remove_gone(&mut self, keys: &[String]) -> Result<(), Self::Error> {
        keys.iter().try_for_each(|k| self.remove(k))
    }
}

impl Plan {
    /// Runs the plan against `store`: unchanged files (same
    /// [`content_hash`]) are skipped, changed ones replaced, files that
    /// cannot be read or chunked reported in `summary.errors` (losing their
    /// previous chunks, which the message says), and files gone from an
    /// ingested root removed. The caller opens and commits the store's
    /// transaction around it.
    pub fn run<S: IngestStore>(
        self,
        store: &mut S,
        opts: &IngestOptions,
        summary: &mut IngestSummary,
        progress: &mut dyn FnMut(crate::Progress),
    ) -> Result<(), S::Error> {
        let Plan { sources, roots } = self;
        let total = sources.len();
        progress(crate::Progress::Started { total_files: total });
        let gone: Vec<String> = {
            let keys: BTreeSet<&str> = sources.iter().map(|s| s.key.as_str()).collect();
            store
                .keys_under(&roots)
                .into_iter()
                .filter(|k| !keys.contains(k.as_str()))
                .collect()
        };
        let mut done = 0;
        for window in sources.chunks(PREPARE_WINDOW) {
            // Read, hashed and chunked on all cores; stored in order.
            let previous: Vec<Option<String>> = window
                .iter()
                .map(|src| store.indexed_hash(&src.key).map(str::to_owned))
                .collect();
            let prepared: Vec<Prepared> = window
                .par_iter()
                .zip(&previous)
                .map(|(src, previous)| prepare(src, opts, previous.as_deref()))
                .collect();
            for ((src, previous), prepared) in window.iter().zip(&previous).zip(prepared) {
                store_file(store, src, prepared, previous.is_some(), summary)?;
                done += 1;
                progress(crate::Progress::File {
                    path: src.report_path.clone(),
                    done,
                    total,
                });
            }
        }
        if !gone.is_empty() {
            store.remove_gone(&gone)?;
            summary.removed += gone.len();
        }
        Ok(())
    }
}

/// Files prepared at once (read, hashed and chunked in parallel) before
/// they are stored, in order: enough to keep every core busy, few enough
/// that memory stays bounded.
const PREPARE_WINDOW: usize = 64;

/// One file read, hashed and, when it changed, chunked: the part of
/// [`Plan::run`] that needs no store, so it runs in parallel.
enum Prepared {
    /// The file could not be read (its previous chunks, if any, stay).
    Unreadable(String),
    /// Same content hash as indexed.
    Unchanged,
    Changed {
        hash: String,
        warning: Option<String>,
        chunks: Result<Vec<Chunk>, String>,
    },
}

fn prepare(src: &Source, opts: &IngestOptions, previous: Option<&str>) -> Prepared {
    let bytes = match src.read() {
        Ok(b) => b,
        Err(message) => return Prepared::Unreadable(message),
    };
    let hash = content_hash(opts, &bytes);
    if previous == Some(hash.as_str()) {
        return Prepared::Unchanged;
    }
    let warning = src.permalink_warning(&bytes);
    Prepared::Changed {
        hash,
        warning,
        chunks: src.chunks(bytes, opts),
    }
}

/// One file of [`Plan::run`], prepared: stored, or counted as unchanged or
/// failed. `indexed`: the file has chunks in the store.
fn store_file<S: IngestStore>(
    store: &mut S,
    src: &Source,
    prepared: Prepared,
    indexed: bool,
    summary: &mut IngestSummary,
) -> Result<(), S::Error> {
    let note = |list: &mut Vec<IngestError>, message: String| {
        list.push(IngestError {
            path: src.report_path.clone(),
            message,
        })
    };
    let (hash, warning, chunks) = match prepared {
        Prepared::Unreadable(message) => {
            note(&mut summary.errors, message);
            return Ok(());
        }
        Prepared::Unchanged => {
            summary.unchanged += 1;
            return Ok(());
        }
        Prepared::Changed {
            hash,
            warning,
            chunks,
        } => (hash, warning, chunks),
    };
    // Whatever happens next, the old chunks of this file go.
    if indexed {
        store.remove(&src.key)?;
    }
    if let Some(message) = warning {
        note(&mut summary.warnings, message);
    }
    match chunks {
        Ok(chunks) => {
            store.add(src, hash, &chunks)?;
            summary.indexed += 1;
            summary.chunks += chunks.len();
        }
        Err(message) if indexed => note(
            &mut summary.errors,
            format!("{message}; its previous chunks were removed"),
        ),
        Err(message) => note(&mut summary.errors, message),
    }
    Ok(())
}
