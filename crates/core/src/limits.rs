//! How much one check may be asked to read. Every step of a check is linear
//! in its input, so these bound the work of a request (and the size of its
//! report and audit record); over any of them the request is refused as bad
//! input, before any work is done.

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
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_answer_bytes: 256 * 1024,
            max_markers: 4096,
            max_sentences: 4096,
            max_passages: 100,
            max_passage_bytes: 256 * 1024,
        }
    }
}

/// Which limit a request is over, and by how much: a message for the
/// person who sent it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LimitExceeded {
    pub what: String,
    pub found: usize,
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
}
