//! The structural check: set arithmetic over the markers of an answer.
//!
//! Ids never sent are a hard failure (status `unverified`); factual
//! sentences without a marker are a soft signal (`unmarked`); coverage is
//! cited factual sentences over factual sentences. The report holds byte
//! offsets only, so one `Report` can be reused across answers without
//! allocating (see [`Report::recheck`]).

use crate::factual::{self, FactualReason};
use crate::marker::{Marker, Markers};
use crate::refusal::{self, Refusal};
use crate::sentence::{self, Sentence, SentenceKind};

/// Do all markers resolve?
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// Every marker names a passage that was sent.
    #[default]
    Ok,
    /// Some marker names a passage that was never sent (or is malformed).
    Unverified,
    /// The answer is the refusal.
    NoEvidence,
}

impl Status {
    /// The status's name in the JSON report: `ok`, `unverified` or `no_evidence`.
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Ok => "ok",
            Status::Unverified => "unverified",
            Status::NoEvidence => "no_evidence",
        }
    }
}

/// One sentence of the answer, with its markers and factuality.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SentenceCheck {
    /// Byte offset of the sentence's start in the answer.
    pub start: usize,
    /// Byte offset just past the sentence's end in the answer.
    pub end: usize,
    /// Prose, list item, heading or table row.
    pub kind: SentenceKind,
    /// Indices into [`Report::markers`] of this sentence's markers.
    pub markers: (u32, u32),
    /// Why the sentence is or is not factual.
    pub reason: FactualReason,
    /// Some marker of this sentence names an id never sent.
    pub has_bad_id: bool,
}

impl SentenceCheck {
    /// The sentence makes a claim (its [`reason`](Self::reason) is a factual one).
    pub fn factual(&self) -> bool {
        self.reason.is_factual()
    }

    /// The sentence carries at least one citation marker.
    pub fn has_marker(&self) -> bool {
        self.markers.1 > self.markers.0
    }

    /// The sentence's byte range in the answer.
    pub fn span(&self) -> std::ops::Range<usize> {
        self.start..self.end
    }
}

/// The structural report of one answer.
#[derive(Debug, Clone, Default)]
pub struct Report {
    /// The number of passages sent: valid ids are `1..=n_passages`.
    pub n_passages: usize,
    /// Whether every marker resolves.
    pub status: Status,
    /// Every id cited, sorted, unique.
    pub cited: Vec<u64>,
    /// Cited ids outside `1..=n_passages`, sorted, unique.
    pub bad_ids: Vec<u64>,
    /// Markers with a reversed or too wide range.
    pub malformed: usize,
    /// Cited factual sentences / factual sentences; 1.0 when there are no
    /// factual sentences (a refusal claims nothing).
    pub coverage: f64,
    /// The refusal the whole answer is; `None` when it is not one.
    pub refusal: Option<Refusal>,
    /// Every sentence of the answer, in order.
    pub sentences: Vec<SentenceCheck>,
    /// Every citation marker of the answer, in order.
    pub markers: Markers,
    scratch: Vec<Sentence>,
}

impl Report {
    /// Checks `answer` against `n_passages` passages sent.
    pub fn check(answer: &str, n_passages: usize) -> Report {
        let mut report = Report::default();
        report.recheck(answer, n_passages);
        report
    }

    /// Checks `answer`, reusing this report's buffers.
    pub fn recheck(&mut self, answer: &str, n_passages: usize) {
        self.n_passages = n_passages;
        self.cited.clear();
        self.bad_ids.clear();
        self.sentences.clear();
        self.malformed = 0;
        self.refusal = refusal::detect(answer);
        self.markers.parse_into(answer);
        sentence::segment_into(answer, &mut self.scratch);

        let n = n_passages as u64;
        for m in &self.markers.markers {
            if m.malformed {
                self.malformed += 1;
            }
            for r in self.markers.ranges_of(m) {
                if r.lo == r.hi {
                    // The common case, `[2]`: no range to expand.
                    insert_sorted(&mut self.cited, r.lo);
                    if r.lo == 0 || r.lo > n {
                        insert_sorted(&mut self.bad_ids, r.lo);
                    }
                    continue;
                }
                for id in crate::marker::expand(*r) {
                    insert_sorted(&mut self.cited, id);
                    if id == 0 || id > n {
                        insert_sorted(&mut self.bad_ids, id);
                    }
                }
            }
        }

        let any_bad = !self.bad_ids.is_empty() || self.malformed > 0;
        let (mut factual, mut covered) = (0usize, 0usize);
        let mut mi = 0usize;
        let all = &self.markers.markers;
        for s in &self.scratch {
            while mi < all.len() && all[mi].start < s.start {
                mi += 1;
            }
            let first = mi;
            while mi < all.len() && all[mi].end <= s.end {
                mi += 1;
            }
            let own = &all[first..mi];
            // A range is bad when it reaches outside 1..=n (its ids are
            // contiguous, so the endpoints decide). Without bad ids or
            // malformed markers in the answer, no sentence has one.
            let has_bad_id = any_bad
                && own.iter().any(|m| {
                    m.malformed
                        || self
                            .markers
                            .ranges_of(m)
                            .iter()
                            .any(|r| r.lo == 0 || r.lo > n || r.hi == 0 || r.hi > n)
                });
            let text = &answer[s.start..s.end];
            let reason = factual::classify(text, s.kind, s.question, own, s.start);
            if reason.is_factual() {
                factual += 1;
                if !own.is_empty() {
                    covered += 1;
                }
            }
            self.sentences.push(SentenceCheck {
                start: s.start,
                end: s.end,
                kind: s.kind,
                markers: (first as u32, mi as u32),
                reason,
                has_bad_id,
            });
        }
        self.coverage = if factual == 0 {
            1.0
        } else {
            covered as f64 / factual as f64
        };
        self.status = if self.refusal.is_some() {
            Status::NoEvidence
        } else if any_bad {
            Status::Unverified
        } else {
            Status::Ok
        };
    }

    /// The markers of one sentence.
    pub fn markers_of(&self, s: &SentenceCheck) -> &[Marker] {
        &self.markers.markers[s.markers.0 as usize..s.markers.1 as usize]
    }

    /// The ids one sentence cites, sorted, unique.
    pub fn citations_of(&self, s: &SentenceCheck) -> Vec<u64> {
        let mut ids: Vec<u64> = self
            .markers_of(s)
            .iter()
            .flat_map(|m| self.markers.ids_of(m))
            .collect();
        ids.sort_unstable();
        ids.dedup();
        ids
    }

    /// The valid passage numbers one sentence cites, sorted, unique.
    pub fn valid_citations_of(&self, s: &SentenceCheck) -> Vec<usize> {
        let n = self.n_passages as u64;
        self.citations_of(s)
            .into_iter()
            .filter(|&id| id >= 1 && id <= n)
            .map(|id| id as usize)
            .collect()
    }

    /// Factual sentences that carry no marker.
    pub fn unmarked(&self) -> impl Iterator<Item = &SentenceCheck> {
        self.sentences
            .iter()
            .filter(|s| s.factual() && !s.has_marker())
    }

    /// The number of factual sentences.
    pub fn factual_count(&self) -> usize {
        self.sentences.iter().filter(|s| s.factual()).count()
    }
}

/// Keeps a short list sorted and unique as ids arrive (answers cite a
/// handful of ids: cheaper than sorting afterwards). Ids mostly arrive in
/// order or repeat the last one, so the end of the list is tried first.
fn insert_sorted(list: &mut Vec<u64>, id: u64) {
    match list.last() {
        None => list.push(id),
        Some(&last) if last < id => list.push(id),
        Some(&last) if last == id => {}
        Some(_) => {
            if let Err(pos) = list.binary_search(&id) {
                list.insert(pos, id);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unmarked<'a>(r: &Report, a: &'a str) -> Vec<&'a str> {
        r.unmarked().map(|s| &a[s.span()]).collect()
    }

    #[test]
    fn the_finance_examples_resolve_or_name_their_bad_ids() {
        let a = "Reimbursements settle within 30 days of approval [2]. Claims for per diem are\npaid on the same schedule [2].";
        let r = Report::check(a, 3);
        assert_eq!(
            (r.cited.as_slice(), r.bad_ids.as_slice(), r.status),
            (&[2u64][..], &[][..], Status::Ok)
        );
        assert!(unmarked(&r, a).is_empty());
        assert_eq!(r.coverage, 1.0);

        let a = "Refunds take 14 days [7]. Reimbursements settle in 14 days.";
        let r = Report::check(a, 3);
        assert_eq!(
            (r.cited.as_slice(), r.bad_ids.as_slice(), r.status),
            (&[7u64][..], &[7u64][..], Status::Unverified)
        );
        assert_eq!(unmarked(&r, a), ["Reimbursements settle in 14 days."]);
        assert_eq!(r.coverage, 0.5);
    }

    #[test]
    fn refusal_is_no_evidence() {
        let r = Report::check("Not covered by the provided documents.", 3);
        assert_eq!(r.status, Status::NoEvidence);
        assert_eq!(r.factual_count(), 0);
        assert_eq!(r.coverage, 1.0);
    }

    #[test]
    fn zero_is_a_bad_id_and_recheck_reuses() {
        let mut r = Report::check("It is so [0].", 3);
        assert_eq!(r.bad_ids, [0]);
        r.recheck("It is so [1][2].", 3);
        assert_eq!((r.cited.as_slice(), r.status), (&[1u64, 2][..], Status::Ok));
        assert_eq!(r.citations_of(&r.sentences[0]), [1, 2]);
    }
}
