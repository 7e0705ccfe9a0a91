//! Sentence spans of a passage: sentence punctuation (not after an abbreviation or an
//! initial), glued sentences ("century.First"), blank lines, headings, list items and table
//! rows.

use crate::abbrev::{Abbrev, abbreviation};

/// The next byte at or after `from` that can end a sentence: a newline, `.`, `?` or `!`.
fn next_stop(bytes: &[u8], from: usize) -> Option<usize> {
    let rest = &bytes[from..];
    let stop = memchr::memchr3(b'\n', b'.', b'?', rest);
    let bang = memchr::memchr(b'!', stop.map_or(rest, |k| &rest[..k]));
    bang.or(stop).map(|k| from + k)
}

/// Sentence (or table row, heading, list item) spans of a passage, trimmed, into `out`.
pub fn sentence_spans(text: &str, out: &mut Vec<(u32, u32)>) {
    let bytes = text.as_bytes();
    let n = bytes.len();
    let mut start = 0usize;
    // `text[a..b]`, trimmed, unless nothing is left.
    let push = |out: &mut Vec<(u32, u32)>, a: usize, b: usize| {
        let span = &text[a..b];
        let trimmed = span.trim();
        if !trimmed.is_empty() {
            let start = a + span.len() - span.trim_start().len();
            out.push((start as u32, (start + trimmed.len()) as u32));
        }
    };
    let mut from = 0usize;
    while from < n {
        let Some(i) = next_stop(bytes, from) else {
            break;
        };
        from = i + 1;
        let b = bytes[i];
        if b == b'\n' {
            // Look at the next non-space byte of the following line.
            let mut j = i + 1;
            while j < n && (bytes[j] == b' ' || bytes[j] == b'\t' || bytes[j] == b'\r') {
                j += 1;
            }
            let breaks = j >= n
                || bytes[j] == b'\n'
                || bytes[j] == b'|'
                || bytes[j] == b'#'
                || (matches!(bytes[j], b'-' | b'*' | b'+') && j + 1 < n && bytes[j + 1] == b' ')
                || {
                    let mut k = j;
                    while k < n && bytes[k].is_ascii_digit() {
                        k += 1;
                    }
                    k > j && k + 1 < n && bytes[k] == b'.' && bytes[k + 1] == b' '
                }
                || (i > 0 && bytes[i - 1] == b'|');
            if breaks {
                push(out, start, i);
                start = i + 1;
            }
            continue;
        }
        // `.`, `!` or `?`.
        let split = match bytes.get(i + 1).copied() {
            None => false,
            Some(b' ' | b'\t' | b'\r' | b'\n') => !is_abbreviation(text, start, i),
            Some(c) if c.is_ascii_uppercase() || c == b'"' => {
                // "century.First": glued sentences (common in scraped text).
                i >= 2
                    && bytes[i - 1].is_ascii_lowercase()
                    && bytes[i - 2].is_ascii_lowercase()
                    && b == b'.'
            }
            _ => false,
        };
        if split {
            push(out, start, i + 1);
            start = i + 1;
        }
    }
    push(out, start, n);
}

/// Whether the word ending at byte `dot` is an abbreviation or an initial ("Dr.", "J.").
fn is_abbreviation(text: &str, from: usize, dot: usize) -> bool {
    let bytes = text.as_bytes();
    let mut k = dot;
    let mut has_dot = false;
    for &b in bytes[from..dot].iter().rev() {
        if !b.is_ascii_alphabetic() {
            if b != b'.' {
                break;
            }
            has_dot = true;
        }
        k -= 1;
    }
    let word = &text[k..dot];
    if word.len() == 1 && word.as_bytes()[0].is_ascii_uppercase() {
        return true;
    }
    has_dot || abbreviation(word.as_bytes()) != Abbrev::None // "e.g", "U.S"
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sentences_split_on_glued_periods_and_table_rows() {
        let t =
            "Arthur's Magazine was published in the 19th century.First for Women is a magazine.";
        let mut s = Vec::new();
        sentence_spans(t, &mut s);
        assert_eq!(s.len(), 2);
        let t = "Header\n\n| a | b |\n| c | d |\nDr. Smith said so. Then it ended.";
        s.clear();
        sentence_spans(t, &mut s);
        let parts: Vec<&str> = s.iter().map(|&(a, b)| &t[a as usize..b as usize]).collect();
        assert_eq!(
            parts,
            [
                "Header",
                "| a | b |",
                "| c | d |",
                "Dr. Smith said so.",
                "Then it ended."
            ]
        );
    }
}

/// Where the passage splitter and the answer segmenter ([`crate::segment`]) part ways: each
/// case is one rule that differs, with both outputs. Putting passages on the answer segmenter
/// (or answers on this splitter) would change these spans, and with them verdicts.
#[cfg(test)]
mod differences_from_the_answer_segmenter {
    use super::sentence_spans;
    use crate::segment::segment;

    fn passage(text: &str) -> Vec<&str> {
        let mut spans = Vec::new();
        sentence_spans(text, &mut spans);
        spans
            .iter()
            .map(|&(a, b)| &text[a as usize..b as usize])
            .collect()
    }

    fn answer(text: &str) -> Vec<&str> {
        segment(text).iter().map(|s| s.text(text)).collect()
    }

    /// Both outputs of `text`: (passage splitter, answer segmenter).
    fn both(text: &str) -> (Vec<&str>, Vec<&str>) {
        (passage(text), answer(text))
    }

    #[test]
    fn hard_wrapped_lines() {
        // Passages are hard-wrapped markdown: a line break ends nothing by itself, even before
        // a capital. In an answer it ends a sentence unless the next line starts in lower case.
        let t = "Ask in the\nTTS channel first.";
        assert_eq!(
            both(t),
            (
                vec!["Ask in the\nTTS channel first."],
                vec!["Ask in the", "TTS channel first."]
            )
        );
    }

    #[test]
    fn markdown_lines_kept_whole_or_dropped() {
        // A passage keeps a heading's hashes and a table's separator row; an answer strips
        // the hashes and drops the separator.
        let t = "## Leave\n\n| a | b |\n| --- | --- |";
        assert_eq!(
            both(t),
            (
                vec!["## Leave", "| a | b |", "| --- | --- |"],
                vec!["Leave", "| a | b |"]
            )
        );
        // Front matter rules: joined to the next line in a passage, dropped in an answer.
        let t = "---\ntitle: Leave\n---";
        assert_eq!(
            both(t),
            (vec!["---\ntitle: Leave\n---"], vec!["title: Leave"])
        );
    }

    #[test]
    fn glued_sentences() {
        // Scraped passages glue sentences ("century.First"); answers do not.
        let t = "It ran in the 19th century.First for Women is a magazine.";
        assert_eq!(
            both(t),
            (
                vec![
                    "It ran in the 19th century.",
                    "First for Women is a magazine."
                ],
                vec![t]
            )
        );
    }

    #[test]
    fn what_follows_a_period() {
        // A passage splits after any period and a space that is not an abbreviation's, even
        // before a lower-case word; an answer wants a sentence-like start.
        let t = "Submit it by Friday. then wait.";
        assert_eq!(
            both(t),
            (vec!["Submit it by Friday.", "then wait."], vec![t])
        );
        // After "etc." a passage never splits; an answer splits before a capital.
        let t = "Pens, paper, etc. The desk is yours.";
        assert_eq!(
            both(t),
            (vec![t], vec!["Pens, paper, etc.", "The desk is yours."])
        );
    }

    #[test]
    fn closers_after_the_period() {
        // An answer keeps closing parentheses and quotes with their sentence. A passage splits
        // only right after the punctuation: not at all after `.)`, and before the quote of
        // `now." Then` (read as glued sentences).
        let t = "(See the FAQ.) Then go.";
        assert_eq!(both(t), (vec![t], vec!["(See the FAQ.)", "Then go."]));
        let t = "He said \"File it now.\" Then he left.";
        assert_eq!(
            both(t),
            (
                vec!["He said \"File it now.", "\" Then he left."],
                vec!["He said \"File it now.\"", "Then he left."]
            )
        );
    }
}
