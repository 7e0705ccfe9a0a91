//! How much one check may be asked to read. Reading the answer and the
//! passages is linear in their bytes; the support check aligns each sentence
//! with the passages it may cite, which costs sentences × passage bytes, so
//! that product is a limit of its own. Together they bound the work of a
//! request (and the size of its report and audit record); over any of them
//! the request is refused as bad input, before any work is done.

use serde::{Deserialize, Serialize};

use crate::passage::Passage;

/// The most a check reads. The defaults are far above what any generator
/// answers (a long answer is a few KB with a few dozen markers) and below
/// what a 1 MiB request can hold.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Limits {
    /// Bytes of the answer. Default 256 KiB.
    pub max_answer_bytes: usize,
    /// Citation markers in the answer (`[1][2]` is two). Default 4,096.
    pub max_markers: usize,
    /// Sentences in the answer. Default 4,096.
    pub max_sentences: usize,
    /// Passages sent. Default 100.
    pub max_passages: usize,
    /// Bytes of one passage. Default 256 KiB.
    pub max_passage_bytes: usize,
    /// Sentences of the answer × bytes of all the passages: what the support check may align
    /// (a sentence is read against the passages it cites and, when they do not support it,
    /// against the others). Default 128 MiB: about 0.4 s of one core (`bench/worst-check.sh`);
    /// 128 sentences over 1 MiB of passages, 1,300 over 100 KiB.
    pub max_aligned_bytes: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_answer_bytes: 256 * 1024,
            max_markers: 4096,
            max_sentences: 4096,
            max_passages: 100,
            max_passage_bytes: 256 * 1024,
            max_aligned_bytes: 128 * 1024 * 1024,
        }
    }
}

/// Which limit a request is over, and by how much: a message for the
/// person who sent it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LimitExceeded {
    /// What was counted, in words (`answer bytes`, `bytes of passage [3]`, `sentences`, ...).
    pub what: String,
    /// How many the request has.
    pub found: usize,
    /// The most allowed.
    pub limit: usize,
}

impl std::fmt::Display for LimitExceeded {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}: {} (the limit is {})",
            self.what, self.found, self.limit
        )
    }
}

impl std::error::Error for LimitExceeded {}

impl Limits {
    /// Checks a request's size before it is checked. Cheap: the answer is
    /// parsed for markers and sentences only when its byte size is within
    /// bounds, and both counts are linear.
    pub fn admit(&self, passages: &[Passage], answer: &str) -> Result<(), LimitExceeded> {
        let over = |what: &str, found, limit| {
            (found > limit).then(|| LimitExceeded {
                what: what.to_string(),
                found,
                limit,
            })
        };
        if let Some(e) = over("answer bytes", answer.len(), self.max_answer_bytes) {
            return Err(e);
        }
        if let Some(e) = over("passages", passages.len(), self.max_passages) {
            return Err(e);
        }
        if let Some((i, p)) = passages
            .iter()
            .enumerate()
            .find(|(_, p)| p.text.len() > self.max_passage_bytes)
        {
            return Err(LimitExceeded {
                what: format!("bytes of passage [{}]", i + 1),
                found: p.text.len(),
                limit: self.max_passage_bytes,
            });
        }
        let markers = crate::marker::Markers::parse(answer).markers.len();
        if let Some(e) = over("citation markers", markers, self.max_markers) {
            return Err(e);
        }
        let sentences = crate::sentence::segment(answer).len();
        if let Some(e) = over("sentences", sentences, self.max_sentences) {
            return Err(e);
        }
        let passage_bytes: usize = passages.iter().map(|p| p.text.len()).sum();
        if let Some(e) = over(
            "sentences × passage bytes",
            sentences.saturating_mul(passage_bytes),
            self.max_aligned_bytes,
        ) {
            return Err(e);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn passage(text: &str) -> Passage {
        Passage {
            id: "p".into(),
            text: text.into(),
            source_url: String::new(),
            section: String::new(),
            score: None,
        }
    }

    #[test]
    fn each_limit_names_itself() {
        let limits = Limits {
            max_answer_bytes: 100,
            max_markers: 3,
            max_sentences: 2,
            max_passages: 2,
            max_passage_bytes: 10,
            max_aligned_bytes: 1000,
        };
        let ok = [passage("short")];
        assert_eq!(limits.admit(&ok, "A fact [1]. Another [1]."), Ok(()));
        let err = |p: &[Passage], a: &str| limits.admit(p, a).unwrap_err().to_string();
        assert_eq!(
            err(&ok, &"x".repeat(101)),
            "answer bytes: 101 (the limit is 100)"
        );
        assert_eq!(
            err(&[passage("a"), passage("b"), passage("c")], "x"),
            "passages: 3 (the limit is 2)"
        );
        assert_eq!(
            err(&[passage("a"), passage("eleven byte")], "x"),
            "bytes of passage [2]: 11 (the limit is 10)"
        );
        assert_eq!(
            err(&ok, "A fact [1][1][1][1]."),
            "citation markers: 4 (the limit is 3)"
        );
        assert_eq!(
            err(&ok, "One. Two. Three."),
            "sentences: 3 (the limit is 2)"
        );
    }

    #[test]
    fn the_support_checks_work_is_bounded_by_sentences_times_passage_bytes() {
        let limits = Limits {
            max_aligned_bytes: 100,
            ..Limits::default()
        };
        let p = |n: usize| passage(&"x".repeat(n));
        assert_eq!(limits.admit(&[p(25), p(25)], "One [1]. Two [2]."), Ok(()));
        assert_eq!(
            limits
                .admit(&[p(25), p(26)], "One [1]. Two [2].")
                .unwrap_err()
                .to_string(),
            "sentences × passage bytes: 102 (the limit is 100)"
        );
        // The default admits a long answer over a full request's passages.
        let big = [p(250_000), p(250_000), p(250_000), p(250_000)];
        let answer = "A fact [1]. ".repeat(128);
        assert_eq!(Limits::default().admit(&big, &answer), Ok(()));
    }
}
