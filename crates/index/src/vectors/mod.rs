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
//! A store of [`ANN_MIN_CHUNKS`] chunks or more gets an approximate index
//! over its chunk vectors, with sign codes of its units, at each ingest
//! ([`VectorStore::build_ann`]), and [`VectorStore::rank_for`] then
//! re-ranks exactly only the best of the chunks it proposes (and those the
//! caller names), in place of every chunk.
//!
//! The store is kept in one file beside the manifest, [`VECTORS_FILE`];
//! its format, and how a large store is searched with its rows left in
//! it, are in `file.rs`.
//!
//! Vectors are kept per file (the manifest's key), so an ingest keeps the
//! vectors of unchanged files, replaces those of changed files and drops
//! those of removed files. The model id is the embedder's
//! (`groundcite_embed::Embedder::model_id`): vectors of another model are
//! never mixed with the configured one's.

use std::collections::BTreeMap;
use std::sync::Arc;

use crate::ann::{Ivf, IvfParams, SignCodes, dot};
use crate::{Error, Result};

mod embedding;
mod file;
mod search;

pub use embedding::{
    ChunkEmbedder, ChunkTexts, EMBED_STEP, LABEL_SHARE, Part, UnitVectorScheme, embed_chunks,
    embedding_text, mismatch, passage_text, titled_text,
};
#[cfg(feature = "embed")]
pub use embedding::{Pooled, chunk_embedder};
use file::RowFile;
use search::Ann;
pub use search::Shortlist;

/// The file name beside the tantivy index.
pub const VECTORS_FILE: &str = "groundcite-vectors.bin";

/// Stores of at least this many chunks get an approximate index at
/// ingest. Exact search (every chunk and unit scored, the top 10 kept;
/// `bench/ann.sh`, 2 cores) takes p50 / p99 6.1 / 10.2 ms at 10,000
/// chunks, 13.3 / 18.3 ms at 20,000 and 63 / 115 ms at 100,000; through
/// the approximate index 5.6 / 7.3 ms at 20,000 with recall@10 0.990
/// (measured with earlier defaults: 64 cells, 2,000 candidates, every
/// one re-ranked).
pub const ANN_MIN_CHUNKS: usize = 20_000;
/// Cells of the approximate index scanned per query (of about √chunks:
/// 1,000 at a million).
pub const ANN_PROBES: usize = 128;
/// Chunks the approximate index proposes per query (the best by their
/// 8-bit codes among those [`ANN_PROBES`] cells hold).
pub const ANN_CANDIDATES: usize = 5_000;
/// Of the [`ANN_CANDIDATES`], how many are re-ranked exactly (their rows
/// read): the best by the estimate of [`dense_similarity`] from the
/// chunk's 8-bit codes and its units' sign codes.
///
/// The three measured by `bench/ann.sh` over synthetic chunks derived
/// from the handbook's vectors, the 108 dev questions as queries split by
/// gold page into a fitting and a held-out half: recall@10 against exact
/// search 0.960 / 0.985 (fitting / held out) at a million chunks,
/// `rank_for` p50 / p99 4.8 / 7.8 ms (13.0 / 19.1 before the scan's AVX2
/// build, the estimates in batches and on both cores with the re-ranks;
/// exact: 650 / 914 ms); 1.000 /
/// 0.991 at 100,000, 7.5 / 11.2 ms. Every candidate re-ranked finds no
/// more (0.962 / 0.991) at twice the time; 200 re-ranked lose recall
/// (0.921 / 0.936); 64 cells or 2,000 candidates miss 0.95 on the fitting
/// half (0.938, 0.942). The synthetic corpus's 410 near-copies of each
/// section leave the top 10 to noise, which makes it a hard test.
pub const ANN_RERANK: usize = 500;

/// How a store with an approximate index searches: cells scanned,
/// candidates proposed, candidates re-ranked exactly. The defaults are
/// [`ANN_PROBES`], [`ANN_CANDIDATES`] and [`ANN_RERANK`]; more of each
/// finds more of the exact top at more cost (`bench/ann.sh` prints the
/// trade).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AnnSearch {
    /// Cells scanned per query (default [`ANN_PROBES`]).
    pub probes: usize,
    /// Chunks proposed per query (default [`ANN_CANDIDATES`]).
    pub candidates: usize,
    /// Of the candidates, how many are re-ranked exactly (default [`ANN_RERANK`]).
    pub rerank: usize,
}

impl Default for AnnSearch {
    fn default() -> AnnSearch {
        AnnSearch {
            probes: ANN_PROBES,
            candidates: ANN_CANDIDATES,
            rerank: ANN_RERANK,
        }
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
    /// The vectors' dimension (values per row).
    pub dim: usize,
    /// `count * dim` values, row after row.
    pub data: Vec<f32>,
}

impl UnitVectors {
    /// Number of units.
    pub fn len(&self) -> usize {
        self.data.len().checked_div(self.dim).unwrap_or(0)
    }

    /// Whether there are no units.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Unit `i`'s vector.
    pub fn row(&self, i: usize) -> &[f32] {
        &self.data[i * self.dim..(i + 1) * self.dim]
    }
}

/// Every chunk vector of an index, by file key, for one model.
///
/// Its rows are either in memory (a store built by an ingest, or read by
/// [`VectorStore::read`]) or left in the vectors file and read at need (a
/// store with an approximate index opened by [`VectorStore::open`]: a
/// query reads only its candidates' rows, so a million chunks search in
/// the memory of their approximate index, not of their 9.8 GB of rows).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct VectorStore {
    /// The model the vectors are of; empty for a store with no vectors.
    pub model_id: String,
    /// The vectors' dimension (values per row); 0 in an empty default store.
    pub dim: usize,
    /// Each file's ids and unit counts, and its rows unless `disk` is set
    /// (then `data` and `unit_data` are empty). Changed only through
    /// [`VectorStore::retain_files`] and [`VectorStore::insert_file`].
    files: BTreeMap<String, FileVectors>,
    /// The approximate index over the chunk vectors of `files`
    /// ([`VectorStore::build_ann`]). It always covers them: built from
    /// them, checked against them when read from a file, and `None` after
    /// they change, so a query never counts them to check (walking every
    /// file cost 2 ms of a query at a million chunks).
    ann: Option<Ann>,
    /// How `ann` is searched.
    ann_search: AnnSearch,
    /// Where the rows are when they stay in the file.
    disk: Option<Arc<RowFile>>,
}

/// A chunk and its [`dense_similarity`] to the query.
#[derive(Debug, Clone, PartialEq)]
pub struct DenseHit {
    /// The key of the chunk's file ([`crate::source::Source::key`]).
    pub key: String,
    /// The chunk id ([`crate::Chunk::id`]).
    pub id: String,
    /// The chunk's [`dense_similarity`] to the query.
    pub cosine: f32,
}

/// A chunk's similarity to a query: the mean of the chunk's own cosine and
/// its best answer unit's (the chunk's own alone when it has no unit).
/// The chunk vector sees the topic; the best unit sees the one sentence a
/// paraphrased question asks about, which a long chunk's vector dilutes.
/// Measured on the paraphrased handbook questions (weighted fusion, gold
/// page in the top 1 / 3 / 5; split by page, BENCHMARKS.md): the
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

impl VectorStore {
    /// A store of the rows in `files`, in memory, with no approximate
    /// index. [`Error::Vectors`] names the first file whose ids, unit
    /// counts and rows disagree (`dim` values a row).
    pub fn from_files(
        model_id: String,
        dim: usize,
        files: BTreeMap<String, FileVectors>,
    ) -> Result<VectorStore> {
        for (key, f) in &files {
            let units: usize = f.unit_counts.iter().map(|&n| n as usize).sum();
            if f.unit_counts.len() != f.ids.len()
                || f.data.len() != f.ids.len() * dim
                || f.unit_data.len() != units * dim
            {
                return Err(Error::Vectors(format!(
                    "the vectors of {key:?} disagree: {} chunk ids, {} unit counts (of {units} units), {} chunk values and {} unit values, for rows of {dim} values",
                    f.ids.len(),
                    f.unit_counts.len(),
                    f.data.len(),
                    f.unit_data.len()
                )));
            }
        }
        Ok(VectorStore::unchecked(model_id, dim, files))
    }

    /// A store of `files` as they are (their rows in memory, or none when
    /// the caller sets `disk`).
    pub(crate) fn unchecked(
        model_id: String,
        dim: usize,
        files: BTreeMap<String, FileVectors>,
    ) -> VectorStore {
        VectorStore {
            model_id,
            dim,
            files,
            ann: None,
            ann_search: AnnSearch::default(),
            disk: None,
        }
    }

    /// Each file's vectors by key, when the rows are in memory; `None` for
    /// a store whose rows stay in its file ([`VectorStore::open`]; see
    /// [`VectorStore::to_resident`]).
    pub fn files(&self) -> Option<&BTreeMap<String, FileVectors>> {
        self.disk.is_none().then_some(&self.files)
    }

    /// Whether the rows stay in the vectors file, read at need.
    pub fn is_on_disk(&self) -> bool {
        self.disk.is_some()
    }

    /// Number of vectors.
    pub fn len(&self) -> usize {
        self.files.values().map(|f| f.ids.len()).sum()
    }

    /// Whether the store holds no vectors.
    pub fn is_empty(&self) -> bool {
        self.files.values().all(|f| f.ids.is_empty())
    }

    /// The unit vectors of chunk `id` of the file `key`, if stored (read
    /// from the file for a store on disk).
    pub fn units_of(&self, key: &str, id: &str) -> Result<Option<UnitVectors>> {
        let Some(file) = self.files.get(key) else {
            return Ok(None);
        };
        let Some(at) = file.ids.iter().position(|i| i == id) else {
            return Ok(None);
        };
        let start: usize = file.unit_counts[..at].iter().map(|&n| n as usize).sum();
        let n = file.unit_counts[at] as usize;
        let d = self.dim;
        let data = match (&self.disk, &self.ann) {
            (Some(disk), Some(ann)) => {
                let Ok(f) = ann.keys.binary_search_by(|k| k.as_str().cmp(key)) else {
                    return Ok(None);
                };
                let mut data = vec![0.0; n * d];
                disk.read_units(f, file.ids.len(), start, &mut data)?;
                data
            }
            _ => match file.unit_data.get(start * d..(start + n) * d) {
                Some(data) => data.to_vec(),
                None => return Ok(None),
            },
        };
        Ok(Some(UnitVectors { dim: d, data }))
    }

    /// Whether `key`'s vectors are of `model_id`.
    pub fn has(&self, key: &str, model_id: &str) -> bool {
        self.model_id == model_id && self.files.contains_key(key)
    }

    /// The same store with every row in memory (a copy of a store on disk
    /// read from its file), as an ingest needs it to change and write it.
    pub fn to_resident(&self) -> Result<VectorStore> {
        let Some(disk) = &self.disk else {
            return Ok(self.clone());
        };
        let mut files = BTreeMap::new();
        for (f, (key, file)) in self.files.iter().enumerate() {
            let (data, unit_data) = disk.file_rows(f, file)?;
            files.insert(
                key.clone(),
                FileVectors {
                    ids: file.ids.clone(),
                    data,
                    unit_counts: file.unit_counts.clone(),
                    unit_data,
                },
            );
        }
        Ok(VectorStore {
            files,
            disk: None,
            ..self.clone()
        })
    }

    /// Builds the approximate index over the chunk vectors and the sign
    /// codes of the answer units (replacing any) of a store in memory (a
    /// store on disk keeps the one it was opened with). The ingest does so
    /// for stores of [`ANN_MIN_CHUNKS`] or more.
    pub fn build_ann(&mut self, params: &IvfParams) {
        if self.disk.is_some() {
            return;
        }
        let mut data = Vec::with_capacity(self.len() * self.dim);
        let mut units = SignCodes::new(self.dim);
        for file in self.files.values() {
            data.extend_from_slice(&file.data);
            units.push_rows(&file.unit_data);
        }
        let ivf = Ivf::build(&data, self.dim, params);
        self.ann = Some(Ann::new(ivf, Some(units), &self.files));
    }

    /// After an ingest changed the files: an approximate index built anew
    /// for a store of [`ANN_MIN_CHUNKS`] or more, none below (40 s at a
    /// million chunks on 2 cores, 2.6 s at 100,000: every ingest that
    /// changes a large index pays it).
    pub fn refresh_ann(&mut self) {
        if self.wants_ann() {
            self.build_ann(&IvfParams::for_rows(self.len()));
        } else {
            self.drop_ann();
        }
    }

    /// Whether the store is large enough for an approximate index
    /// ([`ANN_MIN_CHUNKS`]).
    pub fn wants_ann(&self) -> bool {
        self.len() >= ANN_MIN_CHUNKS
    }

    /// Drops the approximate index of a store in memory: search is exact
    /// again.
    pub fn drop_ann(&mut self) {
        if self.disk.is_none() {
            self.ann = None;
        }
    }

    /// Whether search goes through an approximate index.
    pub fn has_ann(&self) -> bool {
        self.ann.is_some()
    }

    /// Whether the approximate index holds the units' sign codes: one
    /// read from a file written before them does not, and re-ranks every
    /// candidate until it is built again (an ingest does so).
    pub fn ann_has_unit_codes(&self) -> bool {
        self.ann.as_ref().is_some_and(|a| a.units.is_some())
    }

    /// Keeps the files `keep` accepts (a store in memory; an ingest
    /// changes a copy of the store that [`VectorStore::to_resident`]
    /// made). The approximate index no longer matches: dropped until
    /// [`VectorStore::refresh_ann`].
    // Used by the embedded index's ingest (the `tantivy` feature).
    #[cfg_attr(not(feature = "tantivy"), allow(dead_code))]
    pub(crate) fn retain_files(&mut self, keep: impl FnMut(&String, &mut FileVectors) -> bool) {
        self.files.retain(keep);
        self.ann = None;
    }

    /// Adds (or replaces) the vectors of the file `key` (a store in
    /// memory); drops the approximate index, as
    /// [`VectorStore::retain_files`] does.
    // Used by the embedded index's ingest (the `tantivy` feature).
    #[cfg_attr(not(feature = "tantivy"), allow(dead_code))]
    pub(crate) fn insert_file(&mut self, key: String, file: FileVectors) {
        self.files.insert(key, file);
        self.ann = None;
    }

    /// How the approximate index is searched (the defaults unless set).
    pub fn ann_search(&self) -> AnnSearch {
        self.ann_search
    }

    /// Searches the approximate index with `how` from now on.
    pub fn set_ann_search(&mut self, how: AnnSearch) {
        self.ann_search = how;
    }
}

/// Chunk `chunk`'s [`dense_similarity`] to `query`, its units' rows in
/// `units`.
fn similarity(chunk: &[f32], units: &[f32], query: &[f32]) -> f32 {
    let best = units
        .chunks_exact(query.len())
        .map(|u| dot(u, query))
        .reduce(f32::max);
    dense_similarity(dot(chunk, query), best)
}

#[cfg(test)]
mod tests {
    use super::*;

    pub(super) fn store() -> VectorStore {
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
        VectorStore::from_files("toy".into(), 2, files).unwrap()
    }

    #[test]
    fn a_store_is_built_only_from_rows_that_agree_with_their_ids() {
        let mut files = store().files;
        files.get_mut("root\u{1f}a.md").unwrap().unit_counts = vec![1, 1];
        let err = VectorStore::from_files("toy".into(), 2, files)
            .unwrap_err()
            .to_string();
        assert!(err.contains("a.md\" disagree"), "{err}");
        assert!(err.contains("2 unit counts (of 2 units)"), "{err}");
        assert!(err.contains("6 unit values"), "{err}");
        let err = VectorStore::from_files("toy".into(), 3, store().files).unwrap_err();
        assert!(err.to_string().contains("rows of 3 values"), "{err}");
    }

    #[test]
    fn finds_the_unit_vectors_of_a_chunk() {
        let s = store();
        let units = s.units_of("root\u{1f}a.md", "a.md#L3-L4").unwrap().unwrap();
        assert_eq!(units.len(), 2);
        assert_eq!(units.row(1), [0.6, 0.8]);
        assert_eq!(
            s.units_of("root\u{1f}a.md", "a.md#L1-L2")
                .unwrap()
                .unwrap()
                .data,
            [1.0, 0.0]
        );
        assert!(
            s.units_of("root\u{1f}b.md", "b.md#L1-L1")
                .unwrap()
                .unwrap()
                .is_empty()
        );
        assert_eq!(s.units_of("root\u{1f}b.md", "b.md#L9-L9").unwrap(), None);
    }

    /// Seeded random unit vectors of `dim` values, one a call.
    fn unit_vectors(seed: u64, dim: usize) -> impl FnMut() -> Vec<f32> {
        let mut state = seed;
        move || {
            let v: Vec<f32> = (0..dim)
                .map(|_| {
                    state = state
                        .wrapping_mul(6364136223846793005)
                        .wrapping_add(1442695040888963407);
                    (state >> 40) as f32 / (1u64 << 24) as f32 - 0.5
                })
                .collect();
            let norm = dot(&v, &v).sqrt();
            v.into_iter().map(|x| x / norm).collect()
        }
    }

    /// `files` files of `chunks` chunks, each with 0 to 3 units, of
    /// seeded unit vectors of 8 values.
    pub(super) fn big_store(files: usize, chunks: usize) -> VectorStore {
        let mut unit_vector = unit_vectors(42, 8);
        let mut store = VectorStore {
            model_id: "toy".into(),
            dim: 8,
            ..VectorStore::default()
        };
        for f in 0..files {
            let mut file = FileVectors::default();
            for c in 0..chunks {
                file.ids.push(format!("f{f}.md#L{c}-L{c}"));
                file.data.extend(unit_vector());
                let n = (c % 4) as u32;
                file.unit_counts.push(n);
                for _ in 0..n {
                    file.unit_data.extend(unit_vector());
                }
            }
            store.insert_file(format!("root\u{1f}f{f}.md"), file);
        }
        store
    }

    #[test]
    fn the_approximate_index_covering_every_chunk_ranks_as_exact_search() {
        let mut s = big_store(3, 300);
        s.build_ann(&IvfParams {
            lists: 20,
            ..IvfParams::for_rows(900)
        });
        assert!(s.has_ann());
        // 20 cells (all probed) and 900 chunks (all candidates), every
        // one re-ranked.
        s.set_ann_search(AnnSearch {
            rerank: 900,
            ..AnnSearch::default()
        });
        for q in [[1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0], [0.5; 8]] {
            assert_eq!(
                s.rank_for(&q, usize::MAX, &[]).unwrap(),
                s.rank(&q).unwrap()
            );
        }
    }

    #[test]
    fn changing_the_files_drops_the_approximate_index_until_it_is_built_again() {
        let mut s = big_store(3, 1_000);
        s.build_ann(&IvfParams::for_rows(3_000));
        let q = [0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0];
        // An index over the 3,000 chunks would re-rank its 500 best
        // (see the next test); over the changed files search is exact.
        let extra = big_store(4, 1_000).files.remove("root\u{1f}f3.md").unwrap();
        s.insert_file("root\u{1f}f3.md".into(), extra);
        assert!(!s.has_ann());
        assert_eq!(
            s.rank_for(&q, usize::MAX, &[]).unwrap(),
            s.rank(&q).unwrap()
        );
        assert_eq!(s.rank(&q).unwrap().len(), 4_000);
        s.build_ann(&IvfParams::for_rows(4_000));
        assert!(s.has_ann());
        assert_eq!(s.rank_for(&q, usize::MAX, &[]).unwrap().len(), ANN_RERANK);
        s.retain_files(|key, _| key != "root\u{1f}f0.md");
        assert!(!s.has_ann());
        assert_eq!(s.rank_for(&q, usize::MAX, &[]).unwrap().len(), 3_000);
    }

    #[test]
    fn the_approximate_ranking_adds_the_chunks_named_with_their_exact_scores() {
        let mut s = big_store(3, 1_000);
        s.build_ann(&IvfParams::for_rows(3_000));
        let q = [0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0];
        let exact = s.rank(&q).unwrap();
        let approx = s.rank_for(&q, usize::MAX, &[]).unwrap();
        assert_eq!(approx.len(), ANN_RERANK, "3,000 candidates, 500 re-ranked");
        assert_eq!(approx[..10], exact[..10], "the top is found");
        let left_out = exact
            .iter()
            .rev()
            .find(|h| !approx.iter().any(|a| a.id == h.id))
            .expect("3,000 chunks, 500 re-ranked");
        let with = s
            .rank_for(&q, usize::MAX, &[left_out.id.as_str(), "no-such.md#L1-L1"])
            .unwrap();
        assert_eq!(with.len(), ANN_RERANK + 1);
        assert!(
            with.contains(left_out),
            "named, and scored as exact search does"
        );
        let mut sorted = with.clone();
        sorted.sort_by(|a, b| {
            b.cosine
                .total_cmp(&a.cosine)
                .then_with(|| (&a.key, &a.id).cmp(&(&b.key, &b.id)))
        });
        assert_eq!(with, sorted, "best first");
    }

    #[test]
    fn the_exact_ranking_to_a_depth_keeps_the_chunks_named() {
        let s = big_store(2, 100);
        let q = [0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0];
        let every = s.rank(&q).unwrap();
        assert_eq!(every.len(), 200);
        assert_eq!(s.rank_for(&q, 5, &[]).unwrap(), every[..5]);
        let last = &every[199];
        let got = s
            .rank_for(
                &q,
                5,
                &[last.id.as_str(), every[1].id.as_str(), "f9.md#L1-L1"],
            )
            .unwrap();
        assert_eq!(
            got[..5],
            every[..5],
            "a named chunk of the top comes out once"
        );
        assert_eq!(&got[5..], std::slice::from_ref(last));
        assert!(s.rank_for(&q, 0, &[]).unwrap().is_empty());
        assert!(
            s.rank_for(&[1.0], 5, &[]).unwrap().is_empty(),
            "a vector of another size"
        );
    }

    /// A store of `dim`-value random unit vectors: `chunks` chunks of
    /// three units each in one file, and the last chunk's second unit is
    /// `target`, its own vector random.
    fn store_with_a_unit(dim: usize, chunks: usize, target: &[f32]) -> VectorStore {
        let mut unit_vector = unit_vectors(7, dim);
        let mut file = FileVectors::default();
        for c in 0..chunks {
            file.ids.push(format!("a.md#L{c}-L{c}"));
            file.data.extend(unit_vector());
            file.unit_counts.push(3);
            for u in 0..3 {
                let v = unit_vector();
                if c + 1 == chunks && u == 1 {
                    file.unit_data.extend_from_slice(target);
                } else {
                    file.unit_data.extend(v);
                }
            }
        }
        VectorStore::from_files("toy".into(), dim, [("root\u{1f}a.md".into(), file)].into())
            .unwrap()
    }

    #[test]
    fn the_chunks_re_ranked_are_chosen_by_their_units_too() {
        // A dense vector, as a model's are (sign codes say little of a
        // sparse one).
        let dim = 64;
        let query: Vec<f32> = (0..dim).map(|i| (i as f32 * 1.7).sin() / 5.6).collect();
        assert!((dot(&query, &query) - 1.0).abs() < 0.05);
        let mut s = store_with_a_unit(dim, 3_000, &query);
        s.build_ann(&IvfParams::for_rows(3_000));
        // Every chunk a candidate, 50 re-ranked: the chunk whose unit is
        // the question comes first, though its own vector is as far from
        // it as any other's.
        s.set_ann_search(AnnSearch {
            probes: usize::MAX,
            candidates: usize::MAX,
            rerank: 50,
        });
        let exact = s.rank(&query).unwrap();
        assert_eq!(exact[0].id, "a.md#L2999-L2999");
        let approx = s.rank_for(&query, 10, &[]).unwrap();
        assert_eq!(approx.len(), 10);
        assert_eq!(approx[0], exact[0]);
        // Written and opened with its rows on disk: the same.
        let dir = tempfile::tempdir().unwrap();
        s.write(dir.path()).unwrap();
        let mut opened = VectorStore::open(dir.path()).unwrap();
        assert!(opened.is_on_disk());
        opened.set_ann_search(s.ann_search());
        assert_eq!(opened.rank_for(&query, 10, &[]).unwrap(), approx);
        // A file written before the unit codes (the inverted file alone in
        // its ANN section) re-ranks every candidate exactly.
        s.ann.as_mut().unwrap().units = None;
        s.write(dir.path()).unwrap();
        let mut old = VectorStore::open(dir.path()).unwrap();
        assert!(old.is_on_disk() && old.ann.as_ref().unwrap().units.is_none());
        old.set_ann_search(s.ann_search());
        assert_eq!(old.rank_for(&query, 10, &[]).unwrap(), exact[..10]);
    }

    #[test]
    fn a_shortlist_is_ranked_as_rank_for_ranks_and_never_past_its_store() {
        let mut s = big_store(3, 1_000);
        s.build_ann(&IvfParams::for_rows(3_000));
        let q = [0.2, -0.1, 0.7, 0.0, 0.3, 0.1, -0.5, 0.2];
        let named = ["f1.md#L3-L3"];
        let shortlist = s.shortlist(&q);
        assert!(
            shortlist
                .0
                .as_ref()
                .is_some_and(|rows| rows.len() == ANN_RERANK)
        );
        assert_eq!(
            s.rank_shortlist(shortlist.clone(), &q, 10, &named).unwrap(),
            s.rank_for(&q, 10, &named).unwrap()
        );
        // Another store's shortlist names rows this one lacks.
        let mut small = big_store(1, 100);
        small.build_ann(&IvfParams::for_rows(100));
        let got = small.rank_shortlist(shortlist, &q, 10, &[]).unwrap();
        assert!(got.iter().all(|h| h.key == "root\u{1f}f0.md"), "{got:?}");
        // Without an approximate index, nothing is proposed: every chunk
        // is scored.
        let exact = big_store(2, 50);
        assert_eq!(exact.shortlist(&q), Shortlist(None));
        assert_eq!(
            exact
                .rank_shortlist(exact.shortlist(&q), &q, 5, &[])
                .unwrap(),
            exact.rank(&q).unwrap()[..5]
        );
    }

    #[test]
    fn ranks_by_the_chunk_and_its_best_unit_best_first() {
        let ranked = store().rank(&[0.0, 1.0]).unwrap();
        let ids: Vec<&str> = ranked.iter().map(|h| h.id.as_str()).collect();
        // b: no unit, its own 1.0; a#L3: (0.8 + best unit 1.0) / 2;
        // a#L1: (0.0 + 0.0) / 2.
        assert_eq!(ids, ["b.md#L1-L1", "a.md#L3-L4", "a.md#L1-L2"]);
        assert!((ranked[1].cosine - 0.9).abs() < 1e-6);
        assert!(ranked[2].cosine.abs() < 1e-6);
        let ranked = store().rank(&[1.0, 0.0]).unwrap();
        assert!((ranked[0].cosine - 1.0).abs() < 1e-6, "a#L1: (1 + 1) / 2");
        assert!(
            (ranked[1].cosine - 0.6).abs() < 1e-6,
            "a#L3: (0.6 + 0.6) / 2"
        );
        assert!(
            store().rank(&[1.0]).unwrap().is_empty(),
            "a vector of another size"
        );
    }
}
