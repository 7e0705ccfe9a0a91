//! Sentence spans of a passage: sentence punctuation (not after an abbreviation or an
//! initial), glued sentences ("century.First"), blank lines, headings, list items and table
//! rows.

use crate::abbrev::{Abbrev, abbreviation};

/// Sentence (or table row, heading, list item) spans of a passage, trimmed, into `out`.
pub fn sentence_spans(text: &str, out: &mut Vec<(u32, u32)>) {
    sentence_spans_with(text, out, memchr_stops(text.as_bytes()));
}

/// The next byte at or after `from` that can end a sentence (a newline, `.`, `?` or `!`), by
/// `memchr`.
fn memchr_stops(bytes: &[u8]) -> impl FnMut(usize) -> Option<usize> + '_ {
    // Next '!' at or after `from` (n if none): searched apart, memchr takes three needles.
    let n = bytes.len();
    let mut bang = 0usize;
    let mut bang_searched = false;
    move |from| {
        if !bang_searched || bang < from {
            bang = memchr::memchr(b'!', &bytes[from..]).map_or(n, |k| from + k);
            bang_searched = true;
        }
        match memchr::memchr3(b'\n', b'.', b'?', &bytes[from..bang]) {
            Some(k) => Some(from + k),
            None if bang < n => Some(bang),
            None => None,
        }
    }
}

/// Whether `b` is whitespace by `char::is_whitespace` (ASCII only).
fn is_ascii_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\x0b' | b'\x0c' | b'\r')
}

/// `sentence_spans`, given `next_stop(from)`: the next newline, `.`, `?` or `!` at or after
/// `from` (which only grows).
fn sentence_spans_with(
    text: &str,
    out: &mut Vec<(u32, u32)>,
    mut next_stop: impl FnMut(usize) -> Option<usize>,
) {
    let bytes = text.as_bytes();
    let n = bytes.len();
    let mut start = 0usize;
    // `text[a..b].trim()`, ASCII whitespace a byte at a time (`str::trim` past other bytes).
    fn trimmed(text: &str, a: usize, b: usize) -> Option<(u32, u32)> {
        let bytes = text.as_bytes();
        let (mut a, mut b) = (a, b);
        while a < b && is_ascii_space(bytes[a]) {
            a += 1;
        }
        if a < b && bytes[a] >= 128 {
            let s = &text[a..b];
            a += s.len() - s.trim_start().len();
        }
        while a < b && is_ascii_space(bytes[b - 1]) {
            b -= 1;
        }
        if a < b && bytes[b - 1] >= 128 {
            let s = &text[a..b];
            b -= s.len() - s.trim_end().len();
        }
        (a < b).then_some((a as u32, b as u32))
    }
    let push = |out: &mut Vec<(u32, u32)>, a: usize, b: usize| {
        if let Some(span) = trimmed(text, a, b) {
            out.push(span);
        }
    };
    let mut from = 0usize;
    while from < n {
        // Jump to the next byte that can end a sentence.
        let Some(i) = next_stop(from) else {
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
