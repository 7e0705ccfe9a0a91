//! Streaming with hold-back: text arrives token by token, and a sentence is
//! released only once it is complete and its markers are validated. A
//! sentence with an unresolvable marker is never released as checked.

use crate::marker::Markers;
use crate::sentence::segment;

/// One complete sentence of a streamed answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReadySentence {
    /// Byte span into the whole streamed text.
    pub start: usize,
    /// Byte offset just past the sentence's end in the whole streamed text.
    pub end: usize,
    /// The sentence, `&hold_back.text()[start..end]`.
    pub text: String,
    /// Ids cited, sorted, unique.
    pub citations: Vec<u64>,
    /// The sentence's markers, byte spans into the whole streamed text.
    pub markers: Vec<crate::check::MarkerOut>,
    /// Cited ids never sent (non-empty: do not show as checked).
    pub bad_ids: Vec<u64>,
}

/// Accumulates streamed text and releases complete sentences.
#[derive(Debug, Clone, Default)]
pub struct HoldBack {
    text: String,
    released: usize,
    n_passages: usize,
}

impl HoldBack {
    /// An empty buffer for an answer over `n_passages` passages sent (valid ids `1..=n_passages`).
    pub fn new(n_passages: usize) -> Self {
        HoldBack {
            text: String::new(),
            released: 0,
            n_passages,
        }
    }

    /// Everything received so far.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// Adds a delta; returns the sentences it completed. The last sentence
    /// of the buffer is held back: more text (a marker after its period)
    /// may still belong to it.
    pub fn push(&mut self, delta: &str) -> Vec<ReadySentence> {
        self.text.push_str(delta);
        self.release(false)
    }

    /// The stream ended: releases what is left.
    pub fn finish(&mut self) -> Vec<ReadySentence> {
        self.release(true)
    }

    fn release(&mut self, all: bool) -> Vec<ReadySentence> {
        let mut tail = &self.text[self.released..];
        if !all {
            // A marker still arriving (`… 30 days. [2`) must not be read
            // as the start of the next sentence: look only before it.
            if let Some(open) = tail.rfind('[') {
                let rest = &tail[open + 1..];
                if rest
                    .chars()
                    .all(|c| c.is_ascii_digit() || matches!(c, ' ' | ',' | '-' | '–' | '—'))
                {
                    tail = &tail[..open];
                }
            }
        }
        let sentences = segment(tail);
        let keep = if all {
            sentences.len()
        } else {
            sentences.len().saturating_sub(1)
        };
        let mut out = Vec::with_capacity(keep);
        let base = self.released;
        for s in &sentences[..keep] {
            let text = &tail[s.start..s.end];
            let markers = Markers::parse(text);
            let mut citations: Vec<u64> = markers
                .markers
                .iter()
                .flat_map(|m| markers.ids_of(m))
                .collect();
            citations.sort_unstable();
            citations.dedup();
            let bad_ids = citations
                .iter()
                .copied()
                .filter(|&id| id == 0 || id > self.n_passages as u64)
                .collect();
            let mut marker_spans =
                crate::check::MarkerOut::within(&markers, &markers.markers, 0..text.len());
            for m in &mut marker_spans {
                m.start += base + s.start;
                m.end += base + s.start;
            }
            out.push(ReadySentence {
                start: base + s.start,
                end: base + s.end,
                text: text.to_string(),
                citations,
                markers: marker_spans,
                bad_ids,
            });
        }
        if let Some(last) = sentences[..keep].last() {
            self.released = base + last.end;
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn releases_sentences_only_when_complete() {
        let mut h = HoldBack::new(3);
        assert!(h.push("Reimbursements settle within 30 ").is_empty());
        assert!(h.push("days. [2").is_empty());
        // The next sentence has started: the first is complete, with the
        // marker that followed its period.
        let ready = h.push("] Per diem");
        assert_eq!(ready.len(), 1);
        assert_eq!(ready[0].text, "Reimbursements settle within 30 days. [2]");
        assert_eq!(ready[0].citations, [2]);
        let ready = h.push(" claims follow [2]. Refunds [7]");
        assert_eq!(ready.len(), 1);
        assert_eq!(ready[0].text, "Per diem claims follow [2].");
        let rest = h.finish();
        assert_eq!(rest.len(), 1);
        assert_eq!(rest[0].bad_ids, [7]);
        assert_eq!(&h.text()[rest[0].start..rest[0].end], "Refunds [7]");
        // Markers are spans of the whole streamed text, with their ids.
        let m = &rest[0].markers;
        assert_eq!(m.len(), 1);
        assert_eq!(&h.text()[m[0].start..m[0].end], "[7]");
        assert_eq!(m[0].ids, [7]);
    }
}
