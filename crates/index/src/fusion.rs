//! Fusing dense (cosine) and lexical (BM25) rankings. Pure: no I/O.
//!
//! The dense side ranks every chunk by exact cosine; the lexical side is
//! BM25's top [`Fusion::lexical_depth`]. The methods measured on the
//! handbook questions (`bench/src/bin/fusion.rs`, figures in BENCHMARKS.md)
//! are all here so the measurement and the product run the same
//! code; [`Fusion::default`] is the one chosen.
//!
//! The fused value only orders hits. The score a hit carries (its
//! [`crate::Hit::score`], read by the gate) is [`hybrid_score`], a fixed
//! mix of the cosine and the lexical coverage that means the same thing for
//! every query.

use std::collections::HashMap;

use crate::vectors::DenseHit;

/// How the two rankings are combined.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Method {
    /// `w · cosine + (1 − w) · bm25 / max bm25` (0 outside BM25's top).
    Weighted {
        /// `w`, the weight of the cosine (BM25 gets `1 − w`).
        dense_weight: f32,
    },
    /// BM25's top, re-ordered by cosine (then the rest by cosine).
    Rescore,
    /// Reciprocal rank fusion: `wd / (k0 + rank_dense) + wl / (k0 + rank_bm25)`.
    Rrf {
        /// `wd`, the weight of the dense rank.
        dense_weight: f32,
        /// `wl`, the weight of the BM25 rank.
        lexical_weight: f32,
        /// `k0`, added to each rank (ranks start at 1).
        k0: f32,
    },
    /// Cosine alone.
    Dense,
}

/// A fusion method and how deep the lexical side reads.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Fusion {
    /// How the two rankings are combined.
    pub method: Method,
    /// How many BM25 hits the lexical side contributes.
    pub lexical_depth: usize,
}

impl Default for Fusion {
    /// Weighted fusion, 0.9 on the cosine, over BM25's top 100: the best
    /// of the grid of `bench/src/bin/fusion.rs` on the fitting half of the
    /// paraphrased questions (split by gold page; figures in
    /// BENCHMARKS.md).
    fn default() -> Self {
        Fusion {
            method: Method::Weighted { dense_weight: 0.9 },
            lexical_depth: 100,
        }
    }
}

/// How many chunks the dense side contributes (with the cosines of BM25's
/// hits, whatever their dense rank): fusion keeps at most `k` (50 at most
/// in the engine), and under weighted, re-scoring or dense fusion a chunk
/// outside both BM25's top and the dense top 200 is below at least 100
/// chunks that are not, so it can never be kept. Under RRF, a BM25 hit
/// below the dense top gets the dense rank of its place among the chunks
/// returned, which can only be better than its true rank.
pub const DENSE_DEPTH: usize = 200;

/// How many chunks hybrid search's lexical side ranks, about
/// ([`lexical_candidates`]): the default of both backends. Block-max WAND
/// over every chunk holding any word of a long chat-style question (a
/// dozen terms, some in a tenth of the chunks or more) was the tail of
/// hybrid search at a million chunks; PostgreSQL's `ts_rank`, which has no
/// pruning, took seconds. 0 ranks every chunk that holds a query term.
pub const LEXICAL_CANDIDATES: usize = 3_000;

/// The chunks hybrid search's lexical side ranks (each by every query
/// term), as [`lexical_candidates`] chose them from the terms' document
/// frequencies. Terms are named by their position in the query's terms.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LexicalCandidates {
    /// Every chunk holding any of the query's terms: BM25 exactly.
    Every,
    /// The chunks holding one of these terms, rarest first.
    AnyOf(Vec<usize>),
    /// The chunks holding both of these two terms, the rarer first.
    BothOf(usize, usize),
}

/// Which chunks hybrid search's lexical side ranks, from each query term's
/// document frequency `dfs` (in the query's order) and a `budget` of
/// chunks ([`LEXICAL_CANDIDATES`]): the chunks holding one of the rarest
/// terms, taken rarest first while their frequencies sum to at most
/// `budget`; when even the rarest is in more chunks than that, the chunks
/// holding both of the two rarest. Every chunk holding a query term when
/// `budget` is 0, when the terms taken are all the query has (a small
/// index), or when the query has one term only and it is in more than
/// `budget`.
///
/// A term in no chunk is the rarest: it is taken and costs nothing, so the
/// candidates are the chunks of the terms that fit beside it, none when the
/// next rarest alone is over the budget (the lexical side is then empty and
/// the dense side decides). Taking the two rarest terms found instead was
/// tried: on PostgreSQL, whose `ts_rank` does not prune, ranking the
/// chunks that hold two common words (up to 4,700 of the synthetic
/// million, from lists of up to 160,000) put hybrid p99 at 102-127 ms
/// over four runs, against 56-83 ms in five runs of six with this rule
/// (BENCHMARKS.md).
///
/// A chunk outside the candidates (holding commoner terms only) is left
/// out even when it would score more, so the lexical ranking is BM25's
/// over the candidates, not over every chunk; at a million synthetic
/// chunks the hybrid top 10 kept 98.9% of the one over every chunk
/// (`bench/src/bin/hybrid_scale`, BENCHMARKS.md). Equal
/// frequencies are taken in the query's order, so the choice is
/// deterministic.
pub fn lexical_candidates(dfs: &[u64], budget: usize) -> LexicalCandidates {
    let mut by_df: Vec<(u64, usize)> = dfs.iter().enumerate().map(|(i, &df)| (df, i)).collect();
    by_df.sort_unstable();
    let budget = budget as u64;
    let Some(&(rarest, first)) = by_df.first() else {
        return LexicalCandidates::Every;
    };
    if budget == 0 {
        return LexicalCandidates::Every;
    }
    if rarest > budget {
        return match by_df.get(1) {
            Some(&(_, second)) => LexicalCandidates::BothOf(first, second),
            None => LexicalCandidates::Every,
        };
    }
    let mut total = 0u64;
    let taken: Vec<usize> = by_df
        .iter()
        .take_while(|&&(df, _)| {
            total = total.saturating_add(df);
            total <= budget
        })
        .map(|&(_, i)| i)
        .collect();
    if taken.len() == by_df.len() {
        LexicalCandidates::Every
    } else {
        LexicalCandidates::AnyOf(taken)
    }
}

/// One BM25 hit: the chunk id and the raw score.
#[derive(Debug, Clone, PartialEq)]
pub struct LexicalHit {
    /// The chunk id ([`crate::Chunk::id`]).
    pub id: String,
    /// The raw BM25 score.
    pub raw: f32,
}

/// A fused hit: which chunk, its fused value (ordering only), its cosine
/// and its raw BM25 score (0 when outside BM25's top).
#[derive(Debug, Clone, PartialEq)]
pub struct Fused {
    /// The key of the chunk's file ([`crate::source::Source::key`]).
    pub key: String,
    /// The chunk id ([`crate::Chunk::id`]).
    pub id: String,
    /// The fused value: orders hits, comparable only within one query.
    pub fused: f32,
    /// The chunk's dense similarity to the query ([`crate::vectors::dense_similarity`]).
    pub cosine: f32,
    /// The raw BM25 score; 0 when outside BM25's top.
    pub raw: f32,
}

/// The first `k` chunks under `fusion`. `dense` ranks the chunks (best
/// first): every chunk, or the dense top and BM25's hits
/// ([`DENSE_DEPTH`]); `lexical` is BM25's order. Lexical hits are joined to dense rows
/// by chunk id. Ties keep the dense order, so the result is deterministic.
pub fn fuse(dense: &[DenseHit], lexical: &[LexicalHit], fusion: &Fusion, k: usize) -> Vec<Fused> {
    let lexical = &lexical[..lexical.len().min(fusion.lexical_depth)];
    let by_id: HashMap<&str, (usize, f32)> = lexical
        .iter()
        .enumerate()
        .rev()
        .map(|(rank, h)| (h.id.as_str(), (rank, h.raw)))
        .collect();
    let max_raw = lexical.iter().map(|h| h.raw).fold(0.0f32, f32::max);
    let mut out: Vec<Fused> = dense
        .iter()
        .enumerate()
        .map(|(dense_rank, d)| {
            let lex = by_id.get(d.id.as_str()).copied();
            let raw = lex.map_or(0.0, |(_, raw)| raw);
            let fused = match fusion.method {
                Method::Weighted { dense_weight } => {
                    let lexical = if max_raw > 0.0 { raw / max_raw } else { 0.0 };
                    dense_weight * d.cosine + (1.0 - dense_weight) * lexical
                }
                // In BM25's top: 1 + cosine, above every other chunk.
                Method::Rescore => d.cosine + if lex.is_some() { 2.0 } else { 0.0 },
                Method::Rrf {
                    dense_weight,
                    lexical_weight,
                    k0,
                } => {
                    dense_weight / (k0 + dense_rank as f32 + 1.0)
                        + lex.map_or(0.0, |(rank, _)| lexical_weight / (k0 + rank as f32 + 1.0))
                }
                Method::Dense => d.cosine,
            };
            Fused {
                key: d.key.clone(),
                id: d.id.clone(),
                fused,
                cosine: d.cosine,
                raw,
            }
        })
        .collect();
    // A stable sort: equal values keep the dense order.
    out.sort_by(|a, b| b.fused.total_cmp(&a.fused));
    out.truncate(k);
    out
}

/// The weight of the cosine in [`hybrid_score`].
pub const SCORE_DENSE_WEIGHT: f32 = 0.5;

/// The normalised score of a hybrid hit, in `0..=1`:
/// `0.5 · max(cosine, 0) + 0.5 · coverage`, where coverage is the lexical
/// score of the crate docs (IDF-weighted share of the query's terms the
/// chunk contains). Both halves are in `0..=1` and mean the same for every
/// query: how close in meaning (for all-MiniLM-L6-v2, an answering passage
/// is typically at 0.5–0.8, an unrelated one under 0.2) and how much of
/// what was asked the passage names. A paraphrase with few shared words
/// still scores on its meaning; a question on a word the corpus lacks still
/// loses its lexical half.
pub fn hybrid_score(cosine: f32, coverage: f32) -> f32 {
    (SCORE_DENSE_WEIGHT * cosine.max(0.0) + (1.0 - SCORE_DENSE_WEIGHT) * coverage).clamp(0.0, 1.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dense(list: &[(&str, f32)]) -> Vec<DenseHit> {
        list.iter()
            .map(|&(id, cosine)| DenseHit {
                key: format!("k\u{1f}{id}"),
                id: id.into(),
                cosine,
            })
            .collect()
    }

    fn lexical(list: &[(&str, f32)]) -> Vec<LexicalHit> {
        list.iter()
            .map(|&(id, raw)| LexicalHit { id: id.into(), raw })
            .collect()
    }

    fn ids(fused: &[Fused]) -> Vec<&str> {
        fused.iter().map(|f| f.id.as_str()).collect()
    }

    #[test]
    fn each_method_orders_as_documented() {
        let d = dense(&[("a", 0.9), ("b", 0.8), ("c", 0.5), ("d", 0.1)]);
        let l = lexical(&[("d", 10.0), ("c", 9.0)]);
        let with = |method| Fusion {
            method,
            lexical_depth: 10,
        };
        assert_eq!(
            ids(&fuse(&d, &l, &with(Method::Dense), 4)),
            ["a", "b", "c", "d"]
        );
        assert_eq!(
            ids(&fuse(&d, &l, &with(Method::Rescore), 4)),
            ["c", "d", "a", "b"]
        );
        // 0.5·0.5 + 0.5·0.9 = 0.7 for c beats a's 0.45.
        let weighted = fuse(&d, &l, &with(Method::Weighted { dense_weight: 0.5 }), 2);
        assert_eq!(ids(&weighted), ["c", "d"]);
        assert_eq!(weighted[0].raw, 9.0);
        let rrf = Method::Rrf {
            dense_weight: 1.0,
            lexical_weight: 1.0,
            k0: 60.0,
        };
        // d: 1/64 + 1/61 just beats c: 1/63 + 1/62; both beat a's 1/61.
        assert_eq!(ids(&fuse(&d, &l, &with(rrf), 3)), ["d", "c", "a"]);
    }

    #[test]
    fn lexical_depth_limits_what_bm25_contributes() {
        let d = dense(&[("a", 0.9), ("b", 0.1)]);
        let l = lexical(&[("a", 1.0), ("b", 5.0)]);
        let fusion = Fusion {
            method: Method::Rescore,
            lexical_depth: 1,
        };
        assert_eq!(ids(&fuse(&d, &l, &fusion, 2)), ["a", "b"]);
    }

    #[test]
    fn the_lexical_side_ranks_the_chunks_of_the_rarest_terms_within_the_budget() {
        use LexicalCandidates::*;
        // team, typo, chat, stuck.
        let dfs = [9_000, 40, 1_200, 300];
        // Rarest first: 40 + 300 + 1,200 = 1,540 fit in 2,000; team does not.
        assert_eq!(lexical_candidates(&dfs, 2_000), AnyOf(vec![1, 3, 2]));
        assert_eq!(lexical_candidates(&dfs, 340), AnyOf(vec![1, 3]));
        assert_eq!(lexical_candidates(&dfs, 339), AnyOf(vec![1]));
        // Every term fits (a small index), or no budget: BM25 exactly.
        assert_eq!(lexical_candidates(&dfs, 10_540), Every);
        assert_eq!(lexical_candidates(&dfs, 0), Every);
        // The rarest alone over the budget: both of the two rarest.
        assert_eq!(lexical_candidates(&dfs, 39), BothOf(1, 3));
        // A term in no chunk (zzz) is the rarest and costs nothing: the
        // terms that fit beside it, and never both of two common ones.
        let with_zzz = [9_000, 40, 1_200, 0, 300];
        assert_eq!(lexical_candidates(&with_zzz, 340), AnyOf(vec![3, 1, 4]));
        assert_eq!(lexical_candidates(&with_zzz, 39), AnyOf(vec![3]));
        assert_eq!(
            lexical_candidates(&[50_000, 20_000, 0, 90_000], 3_000),
            AnyOf(vec![2])
        );
        assert_eq!(lexical_candidates(&[0, 50_000], 3_000), AnyOf(vec![0]));
        // Equal frequencies in the query's order.
        assert_eq!(lexical_candidates(&[7, 7, 7], 14), AnyOf(vec![0, 1]));
        // One term, or none but terms in no chunk: nothing to cut.
        assert_eq!(lexical_candidates(&[50_000], 3_000), Every);
        assert_eq!(lexical_candidates(&[0, 0], 3_000), Every);
        assert_eq!(lexical_candidates(&[], 3_000), Every);
    }

    #[test]
    fn the_hybrid_score_stays_in_range() {
        assert_eq!(hybrid_score(-0.3, 0.0), 0.0);
        assert_eq!(hybrid_score(1.0, 1.0), 1.0);
        assert!((hybrid_score(0.6, 0.2) - 0.4).abs() < 1e-6);
    }
}
