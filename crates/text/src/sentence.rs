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
