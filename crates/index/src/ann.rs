//! Approximate nearest neighbours over unit vectors: an inverted file.
//!
//! Exact dense search ([`crate::VectorStore::rank`]) reads every vector of
//! the index for every query; at a million chunks that is 1.5 GB of chunk
//! vectors alone. [`Ivf`] partitions the vectors into cells by spherical
//! k-means (centroids fitted on a seeded sample of the rows), keeps each
//! vector as 8-bit codes with one scale (a quarter of the memory of `f32`),
//! and answers a query by scanning only the cells whose centroids are
//! nearest to it. It returns candidates with approximate cosines; the
//! caller re-ranks them with exact scores (`vectors::dense_similarity`
//! needs each candidate's answer units, which no single vector holds).
//!
//! The answer units are estimated more coarsely still, by their signs
//! ([`SignCodes`], in `ann/sign.rs`).
//!
//! Deterministic: the sample, the first centroids and every tie follow from
//! the seed and the row order, and the parallel steps compute each row on
//! its own, so the same rows and parameters give the same index and the
//! same answers.

use rayon::prelude::*;

mod sign;

pub use sign::{SignCodes, SignQuery};

/// How an [`Ivf`] is built.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IvfParams {
    /// Number of cells (at most the number of rows).
    pub lists: usize,
    /// k-means iterations over the sample.
    pub iterations: usize,
    /// Rows sampled per cell to fit the centroids.
    pub sample_per_list: usize,
    /// Seed of the sample.
    pub seed: u64,
}

impl IvfParams {
    /// The defaults for `rows` vectors: √rows cells (1,000 at a million
    /// rows, so a cell holds about as many rows as there are cells and
    /// both scans of a query stay short), 10 iterations over 64 rows a
    /// cell.
    pub fn for_rows(rows: usize) -> IvfParams {
        IvfParams {
            lists: (rows as f64).sqrt().round().max(1.0) as usize,
            iterations: 10,
            sample_per_list: 64,
            seed: 0x9e37_79b9_7f4a_7c15,
        }
    }
}

/// An inverted file over unit vectors (see the module docs).
#[derive(Debug, Clone, PartialEq)]
pub struct Ivf {
    dim: usize,
    /// `lists * dim` values: each cell's centroid, unit length.
    centroids: Vec<f32>,
    /// Cell `c` holds positions `starts[c]..starts[c + 1]` of `rows`,
    /// `scales` and (times `dim`) `codes`.
    starts: Vec<usize>,
    /// The row number (in the input) of each position.
    rows: Vec<u32>,
    /// `dim` codes per position: the row's values divided by its scale.
    codes: Vec<i8>,
    /// Per position: the largest absolute value of the row over 127.
    scales: Vec<f32>,
}

/// A candidate row and its approximate cosine with the query.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Candidate {
    /// The row number, in the order of the rows given to [`Ivf::build`].
    pub row: u32,
    /// Approximate cosine similarity with the query (from the 8-bit codes).
    pub score: f32,
}

impl Ivf {
    /// Builds the index over `data`: `data.len() / dim` rows of `dim`
    /// values each, unit length (a remainder shorter than a row is
    /// ignored). Rows are numbered in input order; at most `u32::MAX`.
    pub fn build(data: &[f32], dim: usize, params: &IvfParams) -> Ivf {
        let n = data.len().checked_div(dim).unwrap_or(0);
        assert!(n <= u32::MAX as usize, "at most u32::MAX rows");
        if n == 0 {
            return Ivf {
                dim,
                centroids: Vec::new(),
                starts: vec![0],
                rows: Vec::new(),
                codes: Vec::new(),
                scales: Vec::new(),
            };
        }
        let row = |i: usize| &data[i * dim..(i + 1) * dim];
        let lists = params.lists.clamp(1, n);
        let sample = seeded_sample(n, lists * params.sample_per_list.max(1), params.seed);
        let centroids = fit_centroids(&sample, &row, dim, lists, params.iterations);

        let cell: Vec<u32> = (0..n)
            .into_par_iter()
            .map(|i| nearest(&centroids, dim, row(i)) as u32)
            .collect();
        // Counting sort by cell, stable in row order.
        let mut starts = vec![0usize; lists + 1];
        for &c in &cell {
            starts[c as usize + 1] += 1;
        }
        for c in 0..lists {
            starts[c + 1] += starts[c];
        }
        let mut next = starts.clone();
        let mut rows = vec![0u32; n];
        for (i, &c) in cell.iter().enumerate() {
            rows[next[c as usize]] = i as u32;
            next[c as usize] += 1;
        }
        let mut codes = vec![0i8; n * dim];
        let mut scales = vec![0f32; n];
        codes
            .par_chunks_mut(dim)
            .zip(scales.par_iter_mut())
            .zip(rows.par_iter())
            .for_each(|((out, scale), &r)| *scale = quantize(row(r as usize), out));
        Ivf {
            dim,
            centroids,
            starts,
            rows,
            codes,
            scales,
        }
    }

    /// Number of rows.
    pub fn len(&self) -> usize {
        self.rows.len()
    }

    /// Whether the index holds no rows.
    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// The vectors' dimension.
    pub fn dim(&self) -> usize {
        self.dim
    }

    /// Number of cells.
    pub fn lists(&self) -> usize {
        self.starts.len() - 1
    }

    /// Bytes the index holds (centroids, codes, scales, row numbers).
    pub fn heap_bytes(&self) -> usize {
        self.centroids.len() * 4
            + self.starts.len() * std::mem::size_of::<usize>()
            + self.rows.len() * 4
            + self.codes.len()
            + self.scales.len() * 4
    }

    /// The `k` rows with the best approximate cosine to `query` among the
    /// cells of the `probes` nearest centroids, best first (equal scores
    /// by row number). Empty when `query` is not of the index's dimension.
    pub fn search(&self, query: &[f32], probes: usize, k: usize) -> Vec<Candidate> {
        if query.len() != self.dim || self.is_empty() || k == 0 {
            return Vec::new();
        }
        let mut cells: Vec<(f32, usize)> = self
            .centroids
            .chunks_exact(self.dim)
            .map(|c| dot(c, query))
            .zip(0..)
            .collect();
        let probes = probes.clamp(1, cells.len());
        let by_cell = |a: &(f32, usize), b: &(f32, usize)| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1));
        if probes < cells.len() {
            cells.select_nth_unstable_by(probes - 1, by_cell);
            cells.truncate(probes);
        }
        // The cells are scanned on all cores (the scan is most of a
        // query's time); the candidates come out in cell order whatever
        // the threads did.
        let query = CodeQuery::new(query);
        let mut out: Vec<Candidate> = cells
            .par_iter()
            .flat_map_iter(|&(_, c)| {
                let (start, end) = (self.starts[c], self.starts[c + 1]);
                score_cell(
                    &query,
                    &self.codes[start * self.dim..end * self.dim],
                    &self.scales[start..end],
                    &self.rows[start..end],
                )
            })
            .collect();
        let by_score =
            |a: &Candidate, b: &Candidate| b.score.total_cmp(&a.score).then(a.row.cmp(&b.row));
        if k < out.len() {
            out.select_nth_unstable_by(k - 1, by_score);
            out.truncate(k);
        }
        out.sort_unstable_by(by_score);
        out
    }
}

impl Ivf {
    /// The index as bytes (little-endian): `dim`, `lists` and `len` as
    /// u64, then the centroids (f32), the cell starts (u64), the row
    /// numbers (u32), the scales (f32) and the codes (i8).
    pub fn encode(&self, out: &mut Vec<u8>) {
        for n in [self.dim, self.lists(), self.len()] {
            out.extend_from_slice(&(n as u64).to_le_bytes());
        }
        self.centroids
            .iter()
            .for_each(|v| out.extend_from_slice(&v.to_le_bytes()));
        self.starts
            .iter()
            .for_each(|&v| out.extend_from_slice(&(v as u64).to_le_bytes()));
        self.rows
            .iter()
            .for_each(|v| out.extend_from_slice(&v.to_le_bytes()));
        self.scales
            .iter()
            .for_each(|v| out.extend_from_slice(&v.to_le_bytes()));
        out.extend(self.codes.iter().map(|&c| c as u8));
    }

    /// Reads what [`Ivf::encode`] wrote, which must be all of `bytes`;
    /// checks every size and that the cells cover rows `0..len` once each.
    pub fn decode(bytes: &[u8]) -> Result<Ivf, String> {
        let (ivf, used) = Ivf::decode_prefix(bytes)?;
        if used != bytes.len() {
            return Err(format!("{} bytes after the ANN index", bytes.len() - used));
        }
        Ok(ivf)
    }

    /// [`Ivf::decode`] of the start of `bytes`: the index and the number
    /// of bytes it took.
    pub fn decode_prefix(bytes: &[u8]) -> Result<(Ivf, usize), String> {
        let mut at = 0usize;
        let mut take = |n: usize| -> Result<&[u8], String> {
            let end = at.checked_add(n).filter(|&e| e <= bytes.len());
            let end = end.ok_or("the ANN index is truncated")?;
            let out = &bytes[at..end];
            at = end;
            Ok(out)
        };
        let mut sizes = [0usize; 3];
        for s in &mut sizes {
            let b = take(8)?;
            *s = usize::try_from(u64::from_le_bytes(b.try_into().expect("8 bytes")))
                .map_err(|_| "an ANN index size too large")?;
        }
        let [dim, lists, len] = sizes;
        let too_large = || "an ANN index size too large".to_string();
        let f32s = |b: &[u8]| -> Vec<f32> {
            b.chunks_exact(4)
                .map(|c| f32::from_le_bytes(c.try_into().expect("4 bytes")))
                .collect()
        };
        let centroids = f32s(take(
            lists
                .checked_mul(dim)
                .and_then(|n| n.checked_mul(4))
                .ok_or_else(too_large)?,
        )?);
        let starts: Vec<usize> = take(
            lists
                .checked_add(1)
                .and_then(|n| n.checked_mul(8))
                .ok_or_else(too_large)?,
        )?
        .chunks_exact(8)
        .map(|c| u64::from_le_bytes(c.try_into().expect("8 bytes")) as usize)
        .collect();
        let rows: Vec<u32> = take(len.checked_mul(4).ok_or_else(too_large)?)?
            .chunks_exact(4)
            .map(|c| u32::from_le_bytes(c.try_into().expect("4 bytes")))
            .collect();
        let scales = f32s(take(len.checked_mul(4).ok_or_else(too_large)?)?);
        let codes: Vec<i8> = take(len.checked_mul(dim).ok_or_else(too_large)?)?
            .iter()
            .map(|&b| b as i8)
            .collect();
        if starts.first() != Some(&0)
            || starts.last() != Some(&len)
            || starts.windows(2).any(|w| w[0] > w[1])
        {
            return Err("the ANN index's cells do not cover its rows".into());
        }
        let mut seen = vec![false; len];
        for &r in &rows {
            match seen.get_mut(r as usize) {
                Some(s) if !*s => *s = true,
                _ => return Err(format!("the ANN index lists row {r} twice or out of range")),
            }
        }
        let ivf = Ivf {
            dim,
            centroids,
            starts,
            rows,
            codes,
            scales,
        };
        Ok((ivf, at))
    }
}

/// Up to `want` distinct row numbers below `n` in a seeded random order
/// (a partial Fisher-Yates shuffle with splitmix64).
fn seeded_sample(n: usize, want: usize, seed: u64) -> Vec<usize> {
    let mut order: Vec<usize> = (0..n).collect();
    let mut state = seed;
    let want = want.min(n);
    for i in 0..want {
        let j = i + (splitmix64(&mut state) % (n - i) as u64) as usize;
        order.swap(i, j);
    }
    order.truncate(want);
    order
}

fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// Spherical k-means over the sampled rows: the first `lists` rows of the
/// sample are the first centroids; each iteration assigns every sampled
/// row to its nearest centroid and moves each centroid to its rows' mean,
/// made unit length (a cell left empty keeps its centroid).
fn fit_centroids<'a>(
    sample: &[usize],
    row: &(impl Fn(usize) -> &'a [f32] + Sync),
    dim: usize,
    lists: usize,
    iterations: usize,
) -> Vec<f32> {
    let mut centroids: Vec<f32> = sample[..lists]
        .iter()
        .flat_map(|&i| row(i))
        .copied()
        .collect();
    for _ in 0..iterations {
        let cell: Vec<usize> = sample
            .par_iter()
            .map(|&i| nearest(&centroids, dim, row(i)))
            .collect();
        let mut sums = vec![0f64; lists * dim];
        let mut counts = vec![0usize; lists];
        for (&i, &c) in sample.iter().zip(&cell) {
            counts[c] += 1;
            for (s, v) in sums[c * dim..(c + 1) * dim].iter_mut().zip(row(i)) {
                *s += f64::from(*v);
            }
        }
        for c in 0..lists {
            let sum = &sums[c * dim..(c + 1) * dim];
            let norm = sum.iter().map(|v| v * v).sum::<f64>().sqrt();
            if counts[c] == 0 || norm == 0.0 {
                continue;
            }
            for (out, s) in centroids[c * dim..(c + 1) * dim].iter_mut().zip(sum) {
                *out = (s / norm) as f32;
            }
        }
    }
    centroids
}

/// The centroid with the largest dot product with `v` (the first of equals).
fn nearest(centroids: &[f32], dim: usize, v: &[f32]) -> usize {
    let mut best = (f32::NEG_INFINITY, 0);
    for (c, centroid) in centroids.chunks_exact(dim).enumerate() {
        let d = dot(centroid, v);
        if d > best.0 {
            best = (d, c);
        }
    }
    best.1
}

/// Writes `v`'s 8-bit codes into `out` and returns their scale.
fn quantize(v: &[f32], out: &mut [i8]) -> f32 {
    let max = v.iter().fold(0f32, |m, x| m.max(x.abs()));
    if max == 0.0 {
        out.fill(0);
        return 0.0;
    }
    let scale = max / 127.0;
    for (o, x) in out.iter_mut().zip(v) {
        *o = (x / scale).round().clamp(-127.0, 127.0) as i8;
    }
    scale
}

/// Dot product of two vectors of the same length, eight lanes at a time
/// (so the compiler vectorises it).
pub fn dot(a: &[f32], b: &[f32]) -> f32 {
    debug_assert_eq!(
        a.len(),
        b.len(),
        "dot product of vectors of different lengths"
    );
    let n = a.len().min(b.len());
    let mut lanes = [0f32; 8];
    let (a8, a_rest) = a[..n].split_at(n - n % 8);
    let (b8, b_rest) = b[..n].split_at(n - n % 8);
    for (x, y) in a8.chunks_exact(8).zip(b8.chunks_exact(8)) {
        for l in 0..8 {
            lanes[l] += x[l] * y[l];
        }
    }
    let tail: f32 = a_rest.iter().zip(b_rest).map(|(x, y)| x * y).sum();
    lanes.iter().sum::<f32>() + tail
}

/// A query as [`score_cell`] reads it: its values as 16-bit integers
/// (scaled as [`CodeQuery::new`] says) and `unit`, the factor that turns
/// a sum of their products with codes back into the query's scale.
struct CodeQuery {
    values: Vec<i16>,
    unit: f32,
}

impl CodeQuery {
    /// `query` scaled so that its largest value in magnitude is
    /// `i16::MAX`, or less (`top`) when the vector is so long that a sum
    /// of `dim` products with codes (at most 128 in magnitude) could leave
    /// an `i32`: 32,767 up to 512 values (MiniLM has 384), 21,845 at
    /// 768, 4,095 at 4,096. Each value is rounded by at most half a unit
    /// of `max|q| / top`, far under the codes' own error.
    fn new(query: &[f32]) -> CodeQuery {
        let max = query
            .iter()
            .filter(|x| x.is_finite())
            .fold(0f32, |m, x| m.max(x.abs()));
        let top = (i32::MAX as usize / (128 * query.len().max(1))).min(i16::MAX as usize);
        if max == 0.0 || top == 0 {
            return CodeQuery {
                values: vec![0; query.len()],
                unit: 0.0,
            };
        }
        let factor = top as f32 / max;
        CodeQuery {
            // `as` saturates, and maps NaN to 0.
            values: query.iter().map(|x| (x * factor).round() as i16).collect(),
            unit: factor.recip(),
        }
    }
}

/// The approximate scores of one cell's rows (`codes`, `scales` and
/// `rows` of that cell), in row order: each `scale · (query · codes)`.
/// Most of a query's time is here. The products are summed as integers
/// ([`CodeQuery`]), which the compiler may add in any order and so
/// vectorises over several registers; and it is compiled twice, for any
/// x86-64 and with AVX2, the one the CPU runs chosen at run time. An
/// integer sum is exact, so both versions give the same scores to the
/// bit.
#[multiversion::multiversion(targets("x86_64+avx2"))]
fn score_cell(query: &CodeQuery, codes: &[i8], scales: &[f32], rows: &[u32]) -> Vec<Candidate> {
    let dim = query.values.len();
    rows.iter()
        .zip(scales)
        .zip(codes.chunks_exact(dim))
        .map(|((&row, &scale), codes)| Candidate {
            row,
            score: scale * query.unit * dot_codes(&query.values, codes) as f32,
        })
        .collect()
}

/// `query · codes` as integers ([`CodeQuery`] keeps it within an `i32`).
#[inline(always)]
fn dot_codes(query: &[i16], codes: &[i8]) -> i32 {
    query
        .iter()
        .zip(codes)
        .map(|(&q, &c)| i32::from(q) * i32::from(c))
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `n` seeded unit vectors of `dim` values, in `groups` tight groups
    /// (as near-copies of a document are), row after row.
    pub(super) fn rows(n: usize, dim: usize, groups: usize, seed: u64) -> Vec<f32> {
        let mut state = seed;
        let mut uniform =
            || (splitmix64(&mut state) >> 11) as f32 / (1u64 << 53) as f32 * 2.0 - 1.0;
        let centres: Vec<Vec<f32>> = (0..groups)
            .map(|_| (0..dim).map(|_| uniform()).collect())
            .collect();
        let mut out = Vec::with_capacity(n * dim);
        for i in 0..n {
            let mut v: Vec<f32> = centres[i % groups]
                .iter()
                .map(|c| c + 0.3 * uniform())
                .collect();
            let norm = dot(&v, &v).sqrt();
            v.iter_mut().for_each(|x| *x /= norm);
            out.extend(v);
        }
        out
    }

    fn exact(data: &[f32], dim: usize, query: &[f32], k: usize) -> Vec<u32> {
        let mut all: Vec<(f32, u32)> = data
            .chunks_exact(dim)
            .map(|r| dot(r, query))
            .zip(0..)
            .collect();
        all.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
        all.into_iter().take(k).map(|(_, r)| r).collect()
    }

    #[test]
    fn every_row_lands_in_exactly_one_cell() {
        let data = rows(500, 16, 7, 1);
        let ivf = Ivf::build(&data, 16, &IvfParams::for_rows(500));
        assert_eq!(ivf.lists(), 22);
        let mut seen = ivf.rows.clone();
        seen.sort_unstable();
        assert_eq!(seen, (0..500).collect::<Vec<u32>>());
        assert_eq!(*ivf.starts.last().unwrap(), 500);
    }

    #[test]
    fn a_cell_scores_the_same_to_the_bit_whichever_version_runs() {
        // `score_cell` runs its AVX2 version on a CPU that has it; this
        // test's own `dot_codes` is compiled for any x86-64. A dimension
        // that is not a multiple of 8 covers the tail.
        for dim in [384, 37] {
            let data = rows(64, dim, 3, 9);
            let query = &rows(1, dim, 1, 10)[..];
            let mut codes = vec![0i8; data.len()];
            let scales: Vec<f32> = data
                .chunks_exact(dim)
                .zip(codes.chunks_exact_mut(dim))
                .map(|(v, out)| quantize(v, out))
                .collect();
            let row_ids: Vec<u32> = (100..164).collect();
            let query = CodeQuery::new(query);
            let got = score_cell(&query, &codes, &scales, &row_ids);
            let want: Vec<Candidate> = codes
                .chunks_exact(dim)
                .zip(&scales)
                .zip(&row_ids)
                .map(|((c, &scale), &row)| Candidate {
                    row,
                    score: scale * query.unit * dot_codes(&query.values, c) as f32,
                })
                .collect();
            assert_eq!(got.len(), 64);
            for (g, w) in got.iter().zip(&want) {
                assert_eq!((g.row, g.score.to_bits()), (w.row, w.score.to_bits()));
            }
        }
    }

    #[test]
    fn a_query_s_integer_sums_stay_in_range_and_near_the_float_ones() {
        for dim in [37, 384, 768, 4_096, 20_000] {
            // The worst case for the range: every value at the largest
            // magnitude, every code at -128.
            let query = vec![-1.0 / (dim as f32).sqrt(); dim];
            let q = CodeQuery::new(&query);
            let got = f64::from(dot_codes(&q.values, &vec![-128i8; dim])) * f64::from(q.unit);
            let want = 128.0 * (dim as f64).sqrt();
            assert!(
                (got - want).abs() < 1e-3 * want,
                "{dim}: {got} against {want}"
            );
            // Unequal values: rounding each keeps the sum near.
            let query = &rows(1, dim, 1, 11)[..];
            let codes: Vec<i8> = (0..dim).map(|i| (i % 255) as i8).collect();
            let q = CodeQuery::new(query);
            let got = f64::from(dot_codes(&q.values, &codes)) * f64::from(q.unit);
            let want: f64 = query
                .iter()
                .zip(&codes)
                .map(|(&x, &c)| f64::from(x) * f64::from(c))
                .sum();
            // Each value is off by at most half a unit.
            let bound: f64 = codes
                .iter()
                .map(|&c| 0.5 * f64::from(q.unit) * f64::from(c).abs())
                .sum();
            assert!((got - want).abs() <= bound, "{dim}: {got} against {want}");
        }
        // Nothing to scale: every score is 0.
        for query in [vec![0.0; 8], vec![f32::NAN; 8]] {
            let q = CodeQuery::new(&query);
            assert_eq!(
                f64::from(dot_codes(&q.values, &[100; 8])) * f64::from(q.unit),
                0.0
            );
        }
    }

    #[test]
    fn approximate_scores_are_close_to_exact_cosines() {
        let dim = 48;
        let data = rows(300, dim, 5, 2);
        let ivf = Ivf::build(&data, dim, &IvfParams::for_rows(300));
        let query = &data[7 * dim..8 * dim];
        for c in ivf.search(query, ivf.lists(), 300) {
            let r = c.row as usize;
            let exact = dot(&data[r * dim..(r + 1) * dim], query);
            assert!(
                (c.score - exact).abs() < 0.02,
                "row {r}: {} against {exact}",
                c.score
            );
        }
    }

    #[test]
    fn probing_every_cell_finds_the_exact_top_k_after_reranking() {
        let dim = 32;
        let data = rows(2_000, dim, 40, 3);
        let ivf = Ivf::build(&data, dim, &IvfParams::for_rows(2_000));
        for q in [0, 13, 777, 1_999] {
            let query = &data[q * dim..(q + 1) * dim];
            let mut got: Vec<(f32, u32)> = ivf
                .search(query, ivf.lists(), 50)
                .into_iter()
                .map(|c| (dot(&data[c.row as usize * dim..][..dim], query), c.row))
                .collect();
            got.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
            let got: Vec<u32> = got.into_iter().take(10).map(|(_, r)| r).collect();
            assert_eq!(got, exact(&data, dim, query, 10), "query row {q}");
        }
    }

    #[test]
    fn few_probes_still_find_a_row_s_own_group() {
        let dim = 32;
        let data = rows(2_000, dim, 40, 4);
        let ivf = Ivf::build(&data, dim, &IvfParams::for_rows(2_000));
        let query = &data[5 * dim..6 * dim];
        let hits = ivf.search(query, 2, 10);
        assert_eq!(hits.len(), 10);
        assert_eq!(hits[0].row, 5, "a row is its own nearest neighbour");
        assert!(hits.iter().all(|c| c.row % 40 == 5), "{hits:?}");
    }

    #[test]
    fn the_same_rows_give_the_same_index() {
        let data = rows(800, 24, 9, 5);
        let params = IvfParams::for_rows(800);
        assert_eq!(
            Ivf::build(&data, 24, &params),
            Ivf::build(&data, 24, &params)
        );
    }

    #[test]
    fn round_trips_through_bytes_and_refuses_damaged_ones() {
        let data = rows(300, 16, 4, 7);
        let ivf = Ivf::build(&data, 16, &IvfParams::for_rows(300));
        let mut bytes = Vec::new();
        ivf.encode(&mut bytes);
        assert_eq!(Ivf::decode(&bytes).unwrap(), ivf);
        assert!(
            Ivf::decode(&bytes[..bytes.len() - 1])
                .unwrap_err()
                .contains("truncated")
        );
        let mut longer = bytes.clone();
        longer.push(0);
        assert!(Ivf::decode(&longer).unwrap_err().contains("after"));
        // The first row number (after the sizes, centroids and starts)
        // made a copy of the second.
        let rows_at = 24 + ivf.centroids.len() * 4 + ivf.starts.len() * 8;
        let mut twice = bytes.clone();
        twice.copy_within(rows_at + 4..rows_at + 8, rows_at);
        assert!(Ivf::decode(&twice).unwrap_err().contains("twice"));
        let mut empty = Vec::new();
        Ivf::build(&[], 16, &IvfParams::for_rows(0)).encode(&mut empty);
        assert!(Ivf::decode(&empty).unwrap().is_empty());
    }

    #[test]
    fn an_index_followed_by_other_bytes_decodes_as_a_prefix() {
        let data = rows(100, 8, 3, 11);
        let ivf = Ivf::build(&data, 8, &IvfParams::for_rows(100));
        let mut bytes = Vec::new();
        ivf.encode(&mut bytes);
        let len = bytes.len();
        bytes.extend_from_slice(b"more");
        assert_eq!(Ivf::decode_prefix(&bytes).unwrap(), (ivf, len));
    }

    #[test]
    fn empty_and_mismatched_inputs_give_no_candidates() {
        let empty = Ivf::build(&[], 8, &IvfParams::for_rows(0));
        assert!(empty.is_empty());
        assert!(empty.search(&[0.0; 8], 4, 10).is_empty());
        let data = rows(10, 8, 2, 6);
        let ivf = Ivf::build(
            &data,
            8,
            &IvfParams {
                lists: 50,
                ..IvfParams::for_rows(10)
            },
        );
        assert_eq!(ivf.lists(), 10, "no more cells than rows");
        assert!(ivf.search(&[0.0; 7], 4, 10).is_empty(), "wrong dimension");
        assert!(ivf.search(&data[..8], 4, 0).is_empty());
        assert_eq!(ivf.search(&data[..8], 100, 100).len(), 10);
    }
}
