//! Chunk vectors and answer-unit vectors: what is embedded, how they are
//! stored beside the tantivy index, and exact dense search over them.
//!
//! Each chunk has a vector of its [`embedding_text`], and each of its
//! answer units (`groundcite_core::unit::units` of its section and text:
//! sentences, list items after their lead-in, table rows after their
//! header) has one too. The unit vectors are what the answerability
//! judgement compares a question with; computed once here, an `ask` only
//! embeds its question.
//!
//! The file `groundcite-vectors.bin` sits beside the manifest:
//!
//! ```text
//! b"GCVEC2\n"                      magic and format version
//! u64 LE  header length            then the header, JSON:
//!   {"model_id": "...", "dim": 384,
//!    "files": [{"key": "...", "ids": ["path#L1-L9", ...],
//!               "units": [3, 0, ...]}, ...]}   units per chunk
//! f32 LE  vectors                  per file, in header order: one row of
//!                                  `dim` per id, then one per unit (chunk
//!                                  after chunk)
//! ```
//!
//! A file of format 1 (`GCVEC1`, chunk vectors only) reads as vectors of
//! a model named `MODEL (format 1, no unit vectors)`: the next ingest
//! re-embeds everything and says the model changed; until then the engine
//! refuses the index with the hint to ingest again.
//!
//! Vectors are kept per file (the manifest's key), so an ingest keeps the
//! vectors of unchanged files, replaces those of changed files and drops
//! those of removed files. The model id is the embedder's
//! (`groundcite_embed::Embedder::model_id`): vectors of another model are
//! never mixed with the configured one's. Written like the manifest: a
//! temporary file, synced, renamed.

use std::collections::BTreeMap;
use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::{Chunk, Error, Result};

/// The file name beside the tantivy index.
pub const VECTORS_FILE: &str = "groundcite-vectors.bin";
const MAGIC: &[u8] = b"GCVEC2\n";
const MAGIC_V1: &[u8] = b"GCVEC1\n";

/// A sentence-embedding model as the index needs it. Implemented by
/// `groundcite_embed::Embedder`; tests use small deterministic doubles.
pub trait ChunkEmbedder: Send + Sync {
    /// Names the model and its settings; vectors of another id are stale.
    fn model_id(&self) -> &str;
    /// The vectors of `texts`, unit length, row after row, in input order.
    fn embed_texts(&self, texts: &[&str]) -> std::result::Result<Vec<f32>, String>;
}

#[cfg(feature = "embed")]
impl ChunkEmbedder for groundcite_embed::Embedder {
    fn model_id(&self) -> &str {
        groundcite_embed::Embedder::model_id(self)
    }

    fn embed_texts(&self, texts: &[&str]) -> std::result::Result<Vec<f32>, String> {
        self.embed(texts)
            .map(groundcite_embed::Embeddings::into_flat)
            .map_err(|e| e.to_string())
    }
}

/// How many texts one embedding call gets during an ingest (one progress
/// step each).
pub const EMBED_STEP: usize = 128;

/// The vectors of `texts`, row after row in input order, embedded in calls
/// of [`EMBED_STEP`] texts taken longest first, so each call (and each
/// batch the model pads) holds texts of similar length: chunks and their
/// short answer units mixed in one call padded the short ones to the long
/// ones' length. `progress(done, total)` is told before each call and at
/// the end. Fails when the model returns rows of another size than
/// `dim` (when known) or inconsistent ones. Returns the vectors and their
/// dimension (`dim` when there is nothing to embed).
pub fn embed_all(
    embedder: &dyn ChunkEmbedder,
    texts: &[&str],
    dim: usize,
    progress: &mut dyn FnMut(usize, usize),
) -> std::result::Result<(Vec<f32>, usize), String> {
    let total = texts.len();
    let mut order: Vec<usize> = (0..total).collect();
    order.sort_by_key(|&i| std::cmp::Reverse(texts[i].len()));
    let mut dim = dim;
    let mut out: Vec<f32> = Vec::new();
    for (step, batch) in order.chunks(EMBED_STEP).enumerate() {
        progress(step * EMBED_STEP, total);
        let strs: Vec<&str> = batch.iter().map(|&i| texts[i]).collect();
        let vectors = embedder.embed_texts(&strs)?;
        let got = vectors.len() / batch.len();
        if got == 0 || vectors.len() != got * batch.len() || (dim != 0 && dim != got) {
            return Err(format!(
                "the model returned {} values for {} texts (vectors of {dim} expected)",
                vectors.len(),
                batch.len(),
            ));
        }
        if dim == 0 {
            dim = got;
        }
        out.resize(total * dim, 0.0);
        for (&i, row) in batch.iter().zip(vectors.chunks_exact(dim)) {
            out[i * dim..(i + 1) * dim].copy_from_slice(row);
        }
    }
    if total > 0 {
        progress(total, total);
    }
    Ok((out, dim))
}

/// The text embedded for a chunk: its section label (the heading path,
/// which names the topic the chunk's own words often leave implicit) on
/// the first line, then its text. The chunk text already begins with its
/// own heading line; the label adds the headings above it. Measured on the
/// handbook questions (see `examples/fusion.rs`) against the text alone.
pub fn embedding_text(chunk: &Chunk) -> String {
    format!("{}\n{}", chunk.section, chunk.text)
}

/// The chunk embedded after its page title and section label, the title
/// left out when the label already starts with it: a candidate for
/// [`embedding_text`], measured by `examples/fusion.rs --with-title` and
/// not adopted (paraphrased questions, weighted fusion: gold page in the
/// top 1 / 3 / 5 for 37 / 49 / 54 of 60 against 38 / 48 / 53; dense alone
/// 32 / 46 / 49 against 33 / 45 / 49: within noise).
pub fn titled_text(chunk: &Chunk) -> String {
    if chunk.title.is_empty() || chunk.section.starts_with(&chunk.title) {
        embedding_text(chunk)
    } else if chunk.section.is_empty() {
        format!("{}\n{}", chunk.title, chunk.text)
    } else {
        format!("{} › {}\n{}", chunk.title, chunk.section, chunk.text)
    }
}

/// The vectors of one file's chunks and of their answer units.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FileVectors {
    /// Chunk ids, in the file's chunk order.
    pub ids: Vec<String>,
    /// `ids.len() * dim` values, row after row.
    pub data: Vec<f32>,
    /// How many answer units each chunk has, in `ids` order.
    pub unit_counts: Vec<u32>,
    /// The unit vectors, `sum(unit_counts) * dim` values: the units of the
    /// first chunk, then those of the second, and so on.
    pub unit_data: Vec<f32>,
}

/// The vectors of one chunk's answer units, in the order of
/// `groundcite_core::unit::units` over the chunk's section and text.
#[derive(Debug, Clone, PartialEq)]
pub struct UnitVectors {
    pub dim: usize,
    /// `count * dim` values, row after row.
    pub data: Vec<f32>,
}

impl UnitVectors {
    /// Number of units.
    pub fn len(&self) -> usize {
        self.data.len().checked_div(self.dim).unwrap_or(0)
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Unit `i`'s vector.
    pub fn row(&self, i: usize) -> &[f32] {
        &self.data[i * self.dim..(i + 1) * self.dim]
    }
}

/// Every chunk vector of an index, by file key, for one model.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct VectorStore {
    /// The model the vectors are of; empty for a store with no vectors.
    pub model_id: String,
    pub dim: usize,
    pub files: BTreeMap<String, FileVectors>,
}

/// A chunk and its [`dense_similarity`] to the query.
#[derive(Debug, Clone, PartialEq)]
pub struct DenseHit {
    pub key: String,
    pub id: String,
    pub cosine: f32,
}

/// A chunk's similarity to a query: the mean of the chunk's own cosine and
/// its best answer unit's (the chunk's own alone when it has no unit).
/// The chunk vector sees the topic; the best unit sees the one sentence a
/// paraphrased question asks about, which a long chunk's vector dilutes.
/// Measured on the paraphrased handbook questions (weighted fusion, gold
/// page in the top 1 / 3 / 5; split by page, README Measurements): the
/// chunk's cosine alone 15 / 21 / 24 of 30 on the fitting half, this mean
/// 20 / 23 / 28; held out 23 / 27 / 29 and 24 / 28 / 29. The mean of
/// the unit vectors in place of the chunk's was no better than the
/// chunk's (fitting half 17 / 22 / 26, held out 23 / 25 / 28).
pub fn dense_similarity(chunk: f32, best_unit: Option<f32>) -> f32 {
    match best_unit {
        Some(unit) => 0.5 * (chunk + unit),
        None => chunk,
    }
}

#[derive(Serialize, Deserialize)]
struct Header {
    model_id: String,
    dim: usize,
    files: Vec<HeaderFile>,
}

#[derive(Serialize, Deserialize)]
struct HeaderFile {
    key: String,
    ids: Vec<String>,
    /// Absent in format 1.
    #[serde(default)]
    units: Vec<u32>,
}

impl VectorStore {
    /// Number of vectors.
    pub fn len(&self) -> usize {
        self.files.values().map(|f| f.ids.len()).sum()
    }

    pub fn is_empty(&self) -> bool {
        self.files.values().all(|f| f.ids.is_empty())
    }

    /// The unit vectors of chunk `id` of the file `key`, if stored.
    pub fn units_of(&self, key: &str, id: &str) -> Option<UnitVectors> {
        let file = self.files.get(key)?;
        let at = file.ids.iter().position(|i| i == id)?;
        let before = file.unit_counts.get(..at)?;
        let start: usize = before.iter().map(|&n| n as usize).sum();
        let n = *file.unit_counts.get(at)? as usize;
        let data = file
            .unit_data
            .get(start * self.dim..(start + n) * self.dim)?;
        Some(UnitVectors {
            dim: self.dim,
            data: data.to_vec(),
        })
    }

    /// Whether `key`'s vectors are of `model_id`.
    pub fn has(&self, key: &str, model_id: &str) -> bool {
        self.model_id == model_id && self.files.contains_key(key)
    }

    /// Every chunk by its [`dense_similarity`] to `query` (dot products:
    /// the vectors are unit length), best first; ties by key and id, so
    /// the order is deterministic.
    pub fn rank(&self, query: &[f32]) -> Vec<DenseHit> {
        let mut out = Vec::with_capacity(self.len());
        if query.len() != self.dim {
            return out;
        }
        let dot = |row: &[f32]| row.iter().zip(query).map(|(a, b)| a * b).sum::<f32>();
        for (key, file) in &self.files {
            let mut units = file.unit_data.chunks_exact(self.dim);
            for (i, (id, row)) in file
                .ids
                .iter()
                .zip(file.data.chunks_exact(self.dim))
                .enumerate()
            {
                let n = file.unit_counts.get(i).copied().unwrap_or(0) as usize;
                let best_unit = units.by_ref().take(n).map(dot).reduce(f32::max);
                out.push(DenseHit {
                    key: key.clone(),
                    id: id.clone(),
                    cosine: dense_similarity(dot(row), best_unit),
                });
            }
        }
        out.sort_by(|a, b| {
            b.cosine
                .total_cmp(&a.cosine)
                .then_with(|| (&a.key, &a.id).cmp(&(&b.key, &b.id)))
        });
        out
    }

    /// Reads the store in `dir`; an empty store when there is no file.
    pub fn read(dir: &Path) -> Result<VectorStore> {
        let path = dir.join(VECTORS_FILE);
        let bytes = match fs::read(&path) {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Ok(VectorStore::default());
            }
            Err(e) => return Err(Error::Io { path, error: e }),
        };
        decode(&bytes).map_err(|message| Error::Manifest { path, message })
    }

    /// Writes the store into `dir` atomically (temporary file, sync, rename).
    pub fn write(&self, dir: &Path) -> Result<()> {
        let path = dir.join(VECTORS_FILE);
        let tmp: PathBuf = path.with_extension("bin.tmp");
        let io = |e| Error::Io {
            path: tmp.clone(),
            error: e,
        };
        let bytes = self.encode();
        {
            let mut f = fs::File::create(&tmp).map_err(io)?;
            f.write_all(&bytes).map_err(io)?;
            f.sync_all().map_err(io)?;
        }
        fs::rename(&tmp, &path).map_err(|e| Error::Io { path, error: e })
    }

    fn encode(&self) -> Vec<u8> {
        let header = Header {
            model_id: self.model_id.clone(),
            dim: self.dim,
            files: self
                .files
                .iter()
                .map(|(key, f)| HeaderFile {
                    key: key.clone(),
                    ids: f.ids.clone(),
                    units: f.unit_counts.clone(),
                })
                .collect(),
        };
        let json = serde_json::to_vec(&header).expect("a header of strings serialises");
        let mut out = Vec::with_capacity(MAGIC.len() + 8 + json.len() + self.len() * self.dim * 4);
        out.extend_from_slice(MAGIC);
        out.extend_from_slice(&(json.len() as u64).to_le_bytes());
        out.extend_from_slice(&json);
        for f in self.files.values() {
            for v in f.data.iter().chain(&f.unit_data) {
                out.extend_from_slice(&v.to_le_bytes());
            }
        }
        out
    }
}

fn decode(bytes: &[u8]) -> std::result::Result<VectorStore, String> {
    let (rest, v1) = match bytes.strip_prefix(MAGIC) {
        Some(rest) => (rest, false),
        None => (
            bytes
                .strip_prefix(MAGIC_V1)
                .ok_or("not a groundcite vectors file (bad magic)")?,
            true,
        ),
    };
    let (len, rest) = rest
        .split_first_chunk::<8>()
        .ok_or("truncated: no header length")?;
    let len = usize::try_from(u64::from_le_bytes(*len)).map_err(|_| "header too long")?;
    if rest.len() < len {
        return Err("truncated header".into());
    }
    let (json, mut data) = rest.split_at(len);
    let mut header: Header = serde_json::from_slice(json).map_err(|e| format!("header: {e}"))?;
    if v1 {
        for f in &mut header.files {
            f.units = vec![0; f.ids.len()];
        }
        header.model_id = format!("{} (format 1, no unit vectors)", header.model_id);
    }
    let mut rows = 0usize;
    for f in &header.files {
        if f.units.len() != f.ids.len() {
            return Err(format!(
                "file {:?}: {} unit counts for {} chunks",
                f.key,
                f.units.len(),
                f.ids.len()
            ));
        }
        rows += f.ids.len() + f.units.iter().map(|&n| n as usize).sum::<usize>();
    }
    if Some(data.len()) != header.dim.checked_mul(4).and_then(|b| rows.checked_mul(b)) {
        return Err(format!(
            "{} bytes of vectors for {rows} rows of {} values",
            data.len(),
            header.dim
        ));
    }
    let mut values = |rows: usize| -> Vec<f32> {
        let (mine, next) = data.split_at(rows * header.dim * 4);
        data = next;
        mine.chunks_exact(4)
            .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            .collect()
    };
    let mut files = BTreeMap::new();
    for f in header.files {
        let chunk_rows = values(f.ids.len());
        let unit_rows = values(f.units.iter().map(|&n| n as usize).sum());
        files.insert(
            f.key,
            FileVectors {
                ids: f.ids,
                data: chunk_rows,
                unit_counts: f.units,
                unit_data: unit_rows,
            },
        );
    }
    Ok(VectorStore {
        model_id: header.model_id,
        dim: header.dim,
        files,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn store() -> VectorStore {
        let mut files = BTreeMap::new();
        files.insert(
            "root\u{1f}a.md".to_string(),
            FileVectors {
                ids: vec!["a.md#L1-L2".into(), "a.md#L3-L4".into()],
                data: vec![1.0, 0.0, 0.6, 0.8],
                unit_counts: vec![1, 2],
                unit_data: vec![1.0, 0.0, 0.0, 1.0, 0.6, 0.8],
            },
        );
        files.insert(
            "root\u{1f}b.md".to_string(),
            FileVectors {
                ids: vec!["b.md#L1-L1".into()],
                data: vec![0.0, 1.0],
                unit_counts: vec![0],
                unit_data: vec![],
            },
        );
        VectorStore {
            model_id: "toy".into(),
            dim: 2,
            files,
        }
    }

    #[test]
    fn round_trips_through_the_file_format() {
        let s = store();
        assert_eq!(decode(&s.encode()).unwrap(), s);
        let empty = VectorStore::default();
        assert_eq!(decode(&empty.encode()).unwrap(), empty);
    }

    #[test]
    fn finds_the_unit_vectors_of_a_chunk() {
        let s = store();
        let units = s.units_of("root\u{1f}a.md", "a.md#L3-L4").unwrap();
        assert_eq!(units.len(), 2);
        assert_eq!(units.row(1), [0.6, 0.8]);
        assert_eq!(
            s.units_of("root\u{1f}a.md", "a.md#L1-L2").unwrap().data,
            [1.0, 0.0]
        );
        assert!(
            s.units_of("root\u{1f}b.md", "b.md#L1-L1")
                .unwrap()
                .is_empty()
        );
        assert_eq!(s.units_of("root\u{1f}b.md", "b.md#L9-L9"), None);
    }

    #[test]
    fn reads_format_1_as_another_model() {
        // Format 1: the same header without unit counts, chunk rows only.
        let json = br#"{"model_id":"toy","dim":2,"files":[{"key":"k","ids":["a#L1-L1"]}]}"#;
        let mut bytes = MAGIC_V1.to_vec();
        bytes.extend_from_slice(&(json.len() as u64).to_le_bytes());
        bytes.extend_from_slice(json);
        for v in [0.6f32, 0.8] {
            bytes.extend_from_slice(&v.to_le_bytes());
        }
        let old = decode(&bytes).unwrap();
        assert_eq!(old.model_id, "toy (format 1, no unit vectors)");
        assert!(!old.has("k", "toy"), "the next ingest re-embeds it");
        assert_eq!(old.files["k"].data, [0.6, 0.8]);
        assert!(old.units_of("k", "a#L1-L1").unwrap().is_empty());
    }

    #[test]
    fn refuses_truncated_or_foreign_files() {
        let bytes = store().encode();
        assert!(
            decode(&bytes[..bytes.len() - 1])
                .unwrap_err()
                .contains("bytes of vectors")
        );
        assert!(decode(b"{}").unwrap_err().contains("magic"));
        assert!(decode(&bytes[..MAGIC.len() + 4]).is_err());
    }

    #[test]
    fn ranks_by_the_chunk_and_its_best_unit_best_first() {
        let ranked = store().rank(&[0.0, 1.0]);
        let ids: Vec<&str> = ranked.iter().map(|h| h.id.as_str()).collect();
        // b: no unit, its own 1.0; a#L3: (0.8 + best unit 1.0) / 2;
        // a#L1: (0.0 + 0.0) / 2.
        assert_eq!(ids, ["b.md#L1-L1", "a.md#L3-L4", "a.md#L1-L2"]);
        assert!((ranked[1].cosine - 0.9).abs() < 1e-6);
        assert!(ranked[2].cosine.abs() < 1e-6);
        let ranked = store().rank(&[1.0, 0.0]);
        assert!((ranked[0].cosine - 1.0).abs() < 1e-6, "a#L1: (1 + 1) / 2");
        assert!(
            (ranked[1].cosine - 0.6).abs() < 1e-6,
            "a#L3: (0.6 + 0.6) / 2"
        );
        assert!(store().rank(&[1.0]).is_empty(), "a vector of another size");
    }
}
