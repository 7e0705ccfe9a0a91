//! The candidates for a top `k` whose ties are decided later, by another
//! key (a chunk's id, read from its stored document). Pure: scores and
//! positions in, candidates out.
//!
//! Hits are offered in position order (for BM25: segment, then document).
//! [`TopWithTies::finish`] gives the first `read` hits by score, then
//! position, of those scoring the `k`-th best score or more: every hit
//! scoring more than the `k`-th (fewer than `k` of them), then the hits
//! tied with it, the earliest first. A caller that orders the ties by its
//! own key gets the same top `k` on any layout as long as the tie fits in
//! `read`; past that, the earliest positions are the ones read, which
//! bounds the work of a query whose every hit ties.
//!
//! [`TopWithTies::threshold`] is the score a hit must beat to be worth
//! offering (what block-max WAND prunes below), carried from one segment
//! to the next.

/// See the module docs.
#[derive(Debug)]
pub(crate) struct TopWithTies<A> {
    k: usize,
    read: usize,
    hits: Vec<(f32, A)>,
    /// The `k`-th best score so far: a hit below it can never be kept.
    floor: Option<f32>,
    /// Hits kept scoring `floor` or more (all of them, since the last
    /// compaction); from `read` of them on, a hit equal to the floor comes
    /// after `read` others in the final order and is not wanted.
    at_floor_or_more: usize,
    /// The number of hits kept that triggers the next compaction: twice
    /// what the last one kept (`2k` at first), so the floor rises early
    /// and compaction costs a constant per offer.
    compact_at: usize,
}

impl<A: Copy + Ord> TopWithTies<A> {
    /// Candidates for the top `k`, `read` (at least `k`) of them at most.
    pub fn new(k: usize, read: usize) -> TopWithTies<A> {
        let k = k.max(1);
        TopWithTies {
            k,
            read: read.max(k),
            hits: Vec::new(),
            floor: None,
            at_floor_or_more: 0,
            compact_at: 2 * k,
        }
    }

    /// [`TopWithTies::new`] for hits known to need `floor` or more to be
    /// kept (the `k`-th best score of other hits, which these join).
    pub fn with_floor(k: usize, read: usize, floor: Option<f32>) -> TopWithTies<A> {
        TopWithTies {
            floor,
            ..TopWithTies::new(k, read)
        }
    }

    /// The candidates of several [`TopWithTies`] over disjoint positions,
    /// as one would have given them: the same definition over all their
    /// hits.
    pub fn merge(
        k: usize,
        read: usize,
        parts: impl IntoIterator<Item = Vec<(f32, A)>>,
    ) -> Vec<(f32, A)> {
        TopWithTies {
            hits: parts.into_iter().flatten().collect(),
            ..TopWithTies::new(k, read)
        }
        .finish()
    }

    /// The score a hit must exceed to be offered: just below the floor
    /// while ties at the floor are still wanted, the floor once `read` hits
    /// score it or more.
    pub fn threshold(&self) -> f32 {
        match self.floor {
            None => f32::MIN,
            Some(floor) if self.at_floor_or_more >= self.read => floor,
            Some(floor) => floor.next_down(),
        }
    }

    /// Offers the hit at `position` (after every position offered before)
    /// with `score`; returns the new [`TopWithTies::threshold`].
    pub fn offer(&mut self, score: f32, position: A) -> f32 {
        if let Some(floor) = self.floor {
            if score < floor || (score == floor && self.at_floor_or_more >= self.read) {
                return self.threshold();
            }
            self.at_floor_or_more += 1;
        }
        self.hits.push((score, position));
        if self.hits.len() >= self.compact_at {
            self.compact();
            self.compact_at = (2 * self.hits.len()).max(2 * self.k);
        }
        self.threshold()
    }

    /// Keeps the hits that can still be among the first `read`: those at
    /// or above the `k`-th best score, then the first `read` of them in
    /// the final order.
    fn compact(&mut self) {
        if self.hits.len() < self.k {
            return;
        }
        let k = self.k;
        let (_, kth, _) = self
            .hits
            .select_nth_unstable_by(k - 1, |a, b| b.0.total_cmp(&a.0));
        let floor = kth.0;
        self.hits.retain(|h| h.0 >= floor);
        if self.hits.len() > self.read {
            self.hits.sort_unstable_by(final_order);
            self.hits.truncate(self.read);
        }
        self.floor = Some(floor);
        self.at_floor_or_more = self.hits.len();
    }

    /// The candidates, best first, equal scores in position order.
    pub fn finish(mut self) -> Vec<(f32, A)> {
        self.compact();
        self.hits.sort_unstable_by(final_order);
        self.hits
    }
}

/// Best score first, equal scores in position order.
fn final_order<A: Ord>(a: &(f32, A), b: &(f32, A)) -> std::cmp::Ordering {
    b.0.total_cmp(&a.0).then(a.1.cmp(&b.1))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What `finish` must give, by definition: sort everything, keep the
    /// hits at or above the `k`-th score, the first `read` of them.
    fn expected(hits: &[(f32, u32)], k: usize, read: usize) -> Vec<(f32, u32)> {
        let mut all = hits.to_vec();
        all.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
        if let Some(&(kth, _)) = all.get(k - 1) {
            all.retain(|h| h.0 >= kth);
        }
        all.truncate(read.max(k));
        all
    }

    /// Offers every hit to `top` as a pruning search would: only those
    /// above the threshold returned last. Returns the candidates and how
    /// many hits were offered.
    fn offer_all(mut top: TopWithTies<u32>, hits: &[(f32, u32)]) -> (Vec<(f32, u32)>, usize) {
        let mut threshold = top.threshold();
        let mut offered = 0;
        for &(score, position) in hits {
            if score > threshold {
                offered += 1;
                threshold = top.offer(score, position);
            }
        }
        (top.finish(), offered)
    }

    fn run(hits: &[(f32, u32)], k: usize, read: usize) -> (Vec<(f32, u32)>, usize) {
        offer_all(TopWithTies::new(k, read), hits)
    }

    /// A random case: up to 3,000 hits in position order whose scores take
    /// at most `values` values (so ties are everywhere), `k` and `read`.
    fn random_case(state: &mut u64, values: u64) -> (Vec<(f32, u32)>, usize, usize) {
        let n = (splitmix(state) % 3_000) as u32;
        let values = 1 + splitmix(state) % values;
        let hits = (0..n)
            .map(|p| ((splitmix(state) % values) as f32 * 0.25, p))
            .collect();
        let k = 1 + (splitmix(state) % 120) as usize;
        let read = k + (splitmix(state) % 300) as usize;
        (hits, k, read)
    }

    fn splitmix(state: &mut u64) -> u64 {
        *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = *state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Hits split in parts (as segments searched apart), each part's
    /// candidates gathered with the `k`-th score of the first part as its
    /// floor, then merged: the definition's answer over all of them.
    #[test]
    fn parts_with_a_floor_merge_to_the_definitions() {
        let mut state = 11;
        for round in 0..300 {
            let (hits, k, read) = random_case(&mut state, 30);
            let n = hits.len();
            let cuts = [0, n / 3, n / 2, n];
            let first = run(&hits[..cuts[1]], k, read).0;
            let floor = (first.len() >= k).then(|| first[k - 1].0);
            let mut parts = vec![first];
            for w in cuts[1..].windows(2) {
                let top = TopWithTies::with_floor(k, read, floor);
                parts.push(offer_all(top, &hits[w[0]..w[1]]).0);
            }
            assert_eq!(
                TopWithTies::merge(k, read, parts),
                expected(&hits, k, read),
                "round {round}: n {n}, k {k}, read {read}"
            );
        }
    }

    /// Random scores drawn from few values (so ties are everywhere), many
    /// sizes of `k` and `read`: always the definition's answer.
    #[test]
    fn the_candidates_are_the_definitions_on_random_ties() {
        let mut state = 7;
        for round in 0..400 {
            let (hits, k, read) = random_case(&mut state, 40);
            let n = hits.len();
            let (got, _) = run(&hits, k, read);
            assert_eq!(
                got,
                expected(&hits, k, read),
                "round {round}: n {n}, k {k}, read {read}"
            );
        }
    }

    /// Fewer hits than `k`: all of them, best first.
    #[test]
    fn fewer_hits_than_k_are_all_kept() {
        let hits = [(1.0, 0), (3.0, 1), (2.0, 2), (3.0, 3)];
        assert_eq!(
            run(&hits, 10, 20).0,
            vec![(3.0, 1), (3.0, 3), (2.0, 2), (1.0, 0)]
        );
    }

    /// Once the floor is known the threshold rises with it, and once
    /// `read` hits score the floor or more, hits equal to it are no longer
    /// asked for: a long tie costs `read` offers, not one per hit.
    #[test]
    fn a_long_tie_stops_being_offered() {
        let mut hits: Vec<(f32, u32)> = (0..10_000).map(|p| (1.0, p)).collect();
        hits.push((5.0, 10_000));
        let (got, offered) = run(&hits, 10, 50);
        assert_eq!(got.len(), 50);
        assert_eq!(got[0], (5.0, 10_000), "a better hit after the tie is kept");
        assert_eq!(got[1], (1.0, 0));
        assert_eq!(
            offered,
            50 + 1,
            "the first 50 of the tie and the better hit"
        );
    }
}
