//! Searching a [`VectorStore`]: exactly, or through its approximate index
//! ([`Ann`]: the inverted file's candidates, a shortlist by estimated
//! similarity, then exact scores).

use std::collections::{BTreeMap, HashSet};

use rayon::prelude::*;

use super::{AnnSearch, DenseHit, FileVectors, VectorStore, dense_similarity, similarity};
use crate::Result;
use crate::ann::{Ivf, SignCodes};

/// Candidates estimated together ([`Ann::shortlist`]).
const ESTIMATE_BATCH: usize = 16;

/// An [`Ivf`] over a store's chunk vectors and how its rows map back.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Ann {
    pub(super) ivf: Ivf,
    /// Row `r` is chunk `rows[r].1` of the file `keys[rows[r].0]`; rows
    /// follow the files' key order, then each file's chunk order.
    pub(super) keys: Vec<String>,
    pub(super) rows: Vec<(u32, u32)>,
    /// Row `r`'s units are rows `unit_rows[r]..unit_rows[r + 1]` of
    /// `units` (the store's order: files by key, units in file order).
    pub(super) unit_rows: Vec<u64>,
    /// Each file's first unit in that order: row `r` of file `f` starts
    /// at unit `unit_rows[r] - file_units[f]` of its file.
    pub(super) file_units: Vec<u64>,
    /// Every answer unit's vector as sign codes, in the store's order;
    /// `None` in a file written before they were (format 3 files of
    /// earlier versions), where every candidate is re-ranked exactly.
    pub(super) units: Option<SignCodes>,
    /// (hash of the chunk id, row), sorted: rows of an id by binary
    /// search, the ids of equal hashes compared.
    pub(super) by_id: Vec<(u64, u32)>,
}

impl Ann {
    pub(super) fn new(
        ivf: Ivf,
        units: Option<SignCodes>,
        files: &BTreeMap<String, FileVectors>,
    ) -> Ann {
        let mut ann = Ann {
            ivf,
            keys: Vec::with_capacity(files.len()),
            rows: Vec::new(),
            unit_rows: vec![0],
            file_units: Vec::with_capacity(files.len()),
            units,
            by_id: Vec::new(),
        };
        let mut total = 0u64;
        for (f, (key, file)) in files.iter().enumerate() {
            ann.keys.push(key.clone());
            ann.file_units.push(total);
            for (i, id) in file.ids.iter().enumerate() {
                let row = ann.rows.len() as u32;
                ann.by_id.push((id_hash(id), row));
                ann.rows.push((f as u32, i as u32));
                total += u64::from(file.unit_counts.get(i).copied().unwrap_or(0));
                ann.unit_rows.push(total);
            }
        }
        ann.by_id.sort_unstable();
        ann
    }

    /// The rows worth scoring exactly for `query`: the inverted file's
    /// [`super::ANN_CANDIDATES`] from [`super::ANN_PROBES`] cells, of which, with the
    /// units' sign codes, the [`super::ANN_RERANK`] best by
    /// [`dense_similarity`] of their estimated cosines (the chunk's from
    /// its 8-bit codes, its best unit's from their sign codes); without
    /// them (a file written before they were), every candidate. Ties by
    /// row.
    fn shortlist(&self, query: &[f32], how: &AnnSearch) -> Vec<u32> {
        let candidates = self.ivf.search(query, how.probes, how.candidates);
        let Some(units) = &self.units else {
            return candidates.into_iter().map(|c| c.row).collect();
        };
        let table = units.query(query);
        // The candidates' units are scattered over the codes (279 MB at a
        // million chunks): the estimates wait on memory more than they
        // compute. So they go in batches, each candidate's range of units
        // read first for the whole batch, then each one's first unit
        // touched, so that the batch's cache misses overlap rather than
        // come one after the other.
        let mut estimated: Vec<(f32, u32)> = candidates
            .par_chunks(ESTIMATE_BATCH)
            .flat_map_iter(|batch| {
                let mut ranges = [(0u64, 0u64); ESTIMATE_BATCH];
                for (range, c) in ranges.iter_mut().zip(batch) {
                    let row = c.row as usize;
                    *range = (self.unit_rows[row], self.unit_rows[row + 1]);
                }
                std::hint::black_box(
                    ranges[..batch.len()]
                        .iter()
                        .filter(|(first, end)| first < end)
                        .map(|&(first, _)| units.touch(first as usize))
                        .fold(0u8, u8::wrapping_add),
                );
                let table = &table;
                batch.iter().zip(ranges).map(move |(c, (first, end))| {
                    let best = (first..end).map(|u| table.dot(u as usize)).reduce(f32::max);
                    (dense_similarity(c.score, best), c.row)
                })
            })
            .collect();
        let order = |a: &(f32, u32), b: &(f32, u32)| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1));
        if how.rerank < estimated.len() {
            if how.rerank > 0 {
                estimated.select_nth_unstable_by(how.rerank - 1, order);
            }
            estimated.truncate(how.rerank);
        }
        estimated.into_iter().map(|(_, row)| row).collect()
    }

    /// The rows of chunks with id `id` (one, unless two files have a chunk
    /// of the same id).
    fn rows_of<'a>(
        &'a self,
        files: &'a BTreeMap<String, FileVectors>,
        id: &'a str,
    ) -> impl Iterator<Item = u32> + 'a {
        let hash = id_hash(id);
        let from = self.by_id.partition_point(|&(h, _)| h < hash);
        self.by_id[from..]
            .iter()
            .take_while(move |&&(h, _)| h == hash)
            .map(|&(_, row)| row)
            .filter(move |&row| {
                let (f, i) = self.rows[row as usize];
                files[&self.keys[f as usize]].ids[i as usize] == id
            })
    }
}

/// A chunk scored for a query: chunk `i` of `file` (under `key`);
/// `named` when the caller asked for it whatever its rank.
struct Scored<'a> {
    cosine: f32,
    key: &'a str,
    file: &'a FileVectors,
    i: usize,
    named: bool,
}

/// A stable hash of a chunk id (SipHash with fixed keys).
fn id_hash(id: &str) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    id.hash(&mut h);
    h.finish()
}

/// The chunks the approximate index proposes for a query
/// ([`VectorStore::shortlist`]): rows of the store it came from; `None`
/// when every chunk is to be scored.
#[derive(Debug, Clone, PartialEq)]
pub struct Shortlist(pub(super) Option<Vec<u32>>);

impl VectorStore {
    /// Every chunk by its [`dense_similarity`] to `query` (dot products:
    /// the vectors are unit length), best first; ties by key and id, so
    /// the order is deterministic. Exact, whatever the store holds (a
    /// store on disk reads every row).
    pub fn rank(&self, query: &[f32]) -> Result<Vec<DenseHit>> {
        if query.len() != self.dim {
            return Ok(Vec::new());
        }
        let scored = self.score_every_chunk(query, &HashSet::new())?;
        Ok(Self::best_first(scored, usize::MAX))
    }

    /// The `depth` chunks most similar to `query` and the chunks `also`
    /// names (BM25's top, whose cosines fusion needs), by
    /// [`dense_similarity`], best first (ties by key and id). Without an
    /// approximate index every chunk is scored; with one, its shortlist
    /// (`Ann::shortlist`, sized by [`VectorStore::ann_search`]) and the
    /// chunks named. Either way only the chunks returned are copied
    /// out: materialising every chunk's key and id cost more than scoring
    /// it (`bench/ann.sh`, exact at 100,000 chunks: 240 against 61 ms p50).
    /// A store on disk reads the rows of those chunks alone.
    pub fn rank_for(&self, query: &[f32], depth: usize, also: &[&str]) -> Result<Vec<DenseHit>> {
        self.rank_shortlist(self.shortlist(query), query, depth, also)
    }

    /// The first half of [`VectorStore::rank_for`], which does not depend
    /// on the chunks named: what the approximate index proposes for
    /// `query` (nothing to do without one). Hybrid search computes it
    /// while BM25 runs.
    pub fn shortlist(&self, query: &[f32]) -> Shortlist {
        Shortlist(
            self.ann
                .as_ref()
                .filter(|_| query.len() == self.dim)
                .map(|ann| ann.shortlist(query, &self.ann_search)),
        )
    }

    /// The second half of [`VectorStore::rank_for`]: `shortlist` (of
    /// this store, for `query`) and the chunks `also` names, scored
    /// exactly.
    pub fn rank_shortlist(
        &self,
        shortlist: Shortlist,
        query: &[f32],
        depth: usize,
        also: &[&str],
    ) -> Result<Vec<DenseHit>> {
        if query.len() != self.dim {
            return Ok(Vec::new());
        }
        let (Some(ann), Some(shortlist)) = (self.ann.as_ref(), shortlist.0) else {
            let named: HashSet<&str> = also.iter().copied().collect();
            return Ok(Self::best_first(
                self.score_every_chunk(query, &named)?,
                depth,
            ));
        };
        // (row, named), in row order: the order of the rows in the file.
        // (A shortlist of another store may name rows this one lacks.)
        let mut rows: Vec<(u32, bool)> = shortlist
            .into_iter()
            .filter(|&row| (row as usize) < ann.rows.len())
            .map(|row| (row, false))
            .collect();
        for id in also {
            rows.extend(ann.rows_of(&self.files, id).map(|row| (row, true)));
        }
        rows.sort_unstable();
        let d = self.dim;
        // On all cores: a store on disk reads two rows per chunk.
        let scored = rows
            .into_par_iter()
            .map_init(
                || (vec![0.0; d], Vec::new()),
                |(chunk, units), (row, named)| {
                    let (f, i) = ann.rows[row as usize];
                    let (f, i) = (f as usize, i as usize);
                    let key = &ann.keys[f];
                    let file = &self.files[key];
                    let start = (ann.unit_rows[row as usize] - ann.file_units[f]) as usize;
                    let n = file.unit_counts[i] as usize;
                    let cosine = match &self.disk {
                        None => similarity(
                            &file.data[i * d..(i + 1) * d],
                            &file.unit_data[start * d..(start + n) * d],
                            query,
                        ),
                        Some(disk) => {
                            disk.read_chunks(f, i, chunk)?;
                            units.resize(n * d, 0.0);
                            disk.read_units(f, file.ids.len(), start, units)?;
                            similarity(chunk, units, query)
                        }
                    };
                    Ok(Scored {
                        cosine,
                        key,
                        file,
                        i,
                        named,
                    })
                },
            )
            .collect::<Result<Vec<_>>>()?;
        Ok(Self::best_first(scored, depth))
    }

    /// Every chunk scored, those whose id is in `named` marked.
    fn score_every_chunk<'a>(
        &'a self,
        query: &[f32],
        named: &HashSet<&str>,
    ) -> Result<Vec<Scored<'a>>> {
        let d = self.dim;
        let mut out = Vec::with_capacity(self.len());
        for (f, (key, file)) in self.files.iter().enumerate() {
            let read;
            let (data, unit_data) = match &self.disk {
                None => (&file.data, &file.unit_data),
                Some(disk) => {
                    read = disk.file_rows(f, file)?;
                    (&read.0, &read.1)
                }
            };
            let mut start = 0;
            for i in 0..file.ids.len() {
                let n = file.unit_counts[i] as usize;
                out.push(Scored {
                    cosine: similarity(
                        &data[i * d..(i + 1) * d],
                        &unit_data[start * d..(start + n) * d],
                        query,
                    ),
                    key,
                    file,
                    i,
                    named: !named.is_empty() && named.contains(file.ids[i].as_str()),
                });
                start += n;
            }
        }
        Ok(out)
    }

    /// The `depth` best of `scored` and every named one, best first (ties
    /// by key and id; a chunk scored twice comes out once), as hits.
    fn best_first(mut scored: Vec<Scored<'_>>, depth: usize) -> Vec<DenseHit> {
        let order = |a: &Scored<'_>, b: &Scored<'_>| {
            b.cosine
                .total_cmp(&a.cosine)
                .then_with(|| (a.key, &a.file.ids[a.i]).cmp(&(b.key, &b.file.ids[b.i])))
        };
        if depth < scored.len() {
            if depth > 0 {
                scored.select_nth_unstable_by(depth - 1, order);
            }
            let below = scored.split_off(depth);
            scored.extend(below.into_iter().filter(|s| s.named));
        }
        scored.sort_by(order);
        scored.dedup_by(|a, b| a.key == b.key && a.i == b.i);
        scored
            .into_iter()
            .map(|s| DenseHit {
                key: s.key.to_string(),
                id: s.file.ids[s.i].clone(),
                cosine: s.cosine,
            })
            .collect()
    }
}
