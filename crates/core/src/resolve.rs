//! Resolution: markers become clickable sources, one per document.
//!
//! `[k]` maps back to the k-th passage sent (dense numbering makes that
//! safe); sources are deduplicated by url, keeping which passages and which
//! markers point at each, so five chunks of one page are one chip. The
//! quote is the evidence the support check aligned with a citing sentence
//! when there is one (the exact words behind the citation), else a short
//! excerpt of the passage cut at a word boundary.

use crate::passage::Passage;
use crate::validate::Report;

/// One source chip.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Source {
    /// The section label.
    pub label: String,
    /// Where a reader opens the document; empty when the passage has no url or not a safe link.
    pub url: String,
    /// The words behind the citation.
    pub quote: String,
    /// Which passage the quote comes from, and its byte span there.
    pub quote_passage: usize,
    /// Byte offset of the quote's start in the passage's text.
    pub quote_start: usize,
    /// Byte offset just past the quote's end in the passage's text.
    pub quote_end: usize,
    /// Every passage number of this document that the answer cites.
    pub passages: Vec<usize>,
    /// Byte spans in the answer of the markers that point here.
    pub markers: Vec<Span>,
}

/// The byte span of a citation marker in the answer.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct Span {
    /// Byte offset of the marker's `[` in the answer.
    pub start: usize,
    /// Byte offset just past the marker's `]` in the answer.
    pub end: usize,
}

/// A quote the support check found for a passage: byte span into its text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QuoteHint {
    /// The passage's number, 1-based (`[k]` is the k-th passage sent).
    pub passage: usize,
    /// Byte offset of the quote's start in the passage's text.
    pub start: usize,
    /// Byte offset just past the quote's end in the passage's text.
    pub end: usize,
}

/// Builds the sources of an answer. `passages` are the passages sent, in
/// order; `hints` are evidence spans (first hint per passage wins).
pub fn resolve(
    report: &Report,
    passages: &[Passage],
    hints: &[QuoteHint],
    quote_max_chars: usize,
) -> Vec<Source> {
    let mut sources: Vec<Source> = Vec::new();
    for &id in &report.cited {
        if id == 0 || id > passages.len() as u64 {
            continue;
        }
        let k = id as usize;
        let p = &passages[k - 1];
        let key = if p.source_url.is_empty() {
            &p.id
        } else {
            &p.source_url
        };
        let existing = sources.iter().position(|s| {
            let other = &passages[s.passages[0] - 1];
            let other_key = if other.source_url.is_empty() {
                &other.id
            } else {
                &other.source_url
            };
            other_key == key
        });
        match existing {
            Some(i) => sources[i].passages.push(k),
            None => {
                let (start, end) = match hints.iter().find(|h| h.passage == k) {
                    Some(h)
                        if h.end <= p.text.len()
                            && p.text.is_char_boundary(h.start)
                            && p.text.is_char_boundary(h.end)
                            && h.start < h.end =>
                    {
                        (h.start, h.end)
                    }
                    _ => excerpt(&p.text, quote_max_chars),
                };
                sources.push(Source {
                    label: p.section.clone(),
                    url: crate::link::safe_link(&p.source_url).to_string(),
                    quote: clip(&p.text[start..end], quote_max_chars * 2),
                    quote_passage: k,
                    quote_start: start,
                    quote_end: end,
                    passages: vec![k],
                    markers: Vec::new(),
                });
            }
        }
    }
    // Marker spans, per source.
    for m in &report.markers.markers {
        for id in report.markers.ids_of(m) {
            if id == 0 || id > passages.len() as u64 {
                continue;
            }
            if let Some(s) = sources
                .iter_mut()
                .find(|s| s.passages.contains(&(id as usize)))
            {
                let span = Span {
                    start: m.start,
                    end: m.end,
                };
                // Markers come in text order, so a repeat (`[1, 2]` with
                // both passages of one document) can only be the last.
                if s.markers.last() != Some(&span) {
                    s.markers.push(span);
                }
            }
        }
    }
    sources
}

/// A readable excerpt: the first sentence when it is short enough, else the
/// first `max_chars` characters cut back to a word boundary. Leading
/// markdown heading lines are skipped.
pub fn excerpt(text: &str, max_chars: usize) -> (usize, usize) {
    let mut start = 0;
    // Skip leading blank and heading lines ("## Getting issued a card").
    loop {
        let rest = &text[start..];
        let trimmed = rest.trim_start();
        let lead = rest.len() - trimmed.len();
        if trimmed.starts_with('#') {
            match trimmed.find('\n') {
                Some(nl) => start += lead + nl + 1,
                None => break,
            }
        } else {
            start += lead;
            break;
        }
    }
    let rest = &text[start..];
    let limit = char_offset(rest, max_chars);
    if limit == rest.len() {
        return (start, start + rest.trim_end().len());
    }
    let window = &rest[..limit];
    let cut = window
        .rfind(|c: char| c.is_whitespace())
        .filter(|&i| i > 0)
        .unwrap_or(limit);
    let cut = window[..cut]
        .trim_end_matches(|c: char| c.is_whitespace() || c == ',' || c == ';' || c == ':')
        .len();
    (start, start + cut)
}

/// The byte offset of character `n` of `text` (its length when shorter), as
/// `char_indices().nth(n)` finds it, counting bytes that start a character
/// instead of decoding each one.
fn char_offset(text: &str, n: usize) -> usize {
    if text.len() <= n {
        return text.len();
    }
    let bytes = text.as_bytes();
    if bytes[..n].is_ascii() {
        return n;
    }
    let mut count = 0;
    for (i, &b) in bytes.iter().enumerate() {
        // Not a continuation byte (`0b10xx_xxxx`): a character starts here.
        if (b as i8) >= -0x40 {
            if count == n {
                return i;
            }
            count += 1;
        }
    }
    text.len()
}

/// Moves `start` past Markdown heading lines (`## Title`) at the start of
/// `text[start..end]`, unless nothing would be left.
pub fn skip_heading_lines(text: &str, start: usize, end: usize) -> usize {
    let mut s = start;
    loop {
        let rest = &text[s..end];
        let trimmed = rest.trim_start();
        if !trimmed.starts_with('#') {
            return s;
        }
        match trimmed.find('\n') {
            Some(nl) => {
                let next = s + (rest.len() - trimmed.len()) + nl + 1;
                let after = &text[next..end];
                if after.trim().is_empty() {
                    return s;
                }
                s = next + (after.len() - after.trim_start().len());
            }
            None => return s,
        }
    }
}

/// The excerpt of `quote`, white space runs collapsed to one space, `…` when cut.
fn clip(quote: &str, max_chars: usize) -> String {
    let (s, e) = excerpt(quote, max_chars);
    let words = &quote[s..e];
    let mut out = String::with_capacity(words.len() + '…'.len_utf8());
    // `split_whitespace`, joined by single spaces, without decoding: runs of
    // bytes that cannot start a white space character are copied whole.
    let bytes = words.as_bytes();
    let mut push = |word: &str| {
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(word);
    };
    let mut i = 0;
    let mut word_start = 0;
    while i < bytes.len() {
        if !MAY_START_SPACE[bytes[i] as usize] {
            i += 1;
            continue;
        }
        // The common case first: one space inside a run, a plain byte after it.
        if bytes[i] == b' '
            && word_start < i
            && i + 1 < bytes.len()
            && !MAY_START_SPACE[bytes[i + 1] as usize]
        {
            i += 1;
            continue;
        }
        match space_len(bytes, i) {
            0 => i += 1,
            // One space between two words is kept: the run goes on.
            1 if bytes[i] == b' '
                && word_start < i
                && i + 1 < bytes.len()
                && space_len(bytes, i + 1) == 0 =>
            {
                i += 1
            }
            len => {
                if word_start < i {
                    push(&words[word_start..i]);
                }
                i += len;
                word_start = i;
            }
        }
    }
    if word_start < bytes.len() {
        push(&words[word_start..]);
    }
    if e < quote.trim_end().len() {
        out.push('…');
    }
    out
}

/// Bytes that may start a white space character (`char::is_whitespace`):
/// ASCII tab to carriage return and space, and the lead bytes of U+0085,
/// U+00A0, U+1680, U+2000–U+200A, U+2028, U+2029, U+202F, U+205F, U+3000.
static MAY_START_SPACE: [bool; 256] = {
    let mut t = [false; 256];
    let mut b = 0;
    while b < 256 {
        t[b] = matches!(b, 0x09..=0x0d | 0x20 | 0xc2 | 0xe1 | 0xe2 | 0xe3);
        b += 1;
    }
    t
};

/// The length in bytes of the white space character at `i`, or 0.
fn space_len(bytes: &[u8], i: usize) -> usize {
    let at = |k: usize| bytes.get(i + k).copied().unwrap_or(0);
    match bytes[i] {
        0x09..=0x0d | 0x20 => 1,
        0xc2 if matches!(at(1), 0x85 | 0xa0) => 2,
        0xe1 if at(1) == 0x9a && at(2) == 0x80 => 3,
        0xe2 if at(1) == 0x80 && matches!(at(2), 0x80..=0x8a | 0xa8 | 0xa9 | 0xaf) => 3,
        0xe2 if at(1) == 0x81 && at(2) == 0x9f => 3,
        0xe3 if at(1) == 0x80 && at(2) == 0x80 => 3,
        _ => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn heading_lines_are_not_quoted() {
        let text = "## Getting a badge\n\nBadges are issued at the front desk.";
        let start = skip_heading_lines(text, 0, text.len());
        assert_eq!(&text[start..], "Badges are issued at the front desk.");
        assert_eq!(skip_heading_lines("## Only", 0, 7), 0);
        assert_eq!(skip_heading_lines("Plain.", 0, 6), 0);
    }

    #[test]
    fn excerpt_cuts_at_a_word_boundary() {
        let text = "## Heading\n\nReimbursements settle within thirty days of approval by finance.";
        let (s, e) = excerpt(text, 40);
        assert_eq!(&text[s..e], "Reimbursements settle within thirty");
        let (s, e) = excerpt("Short one.", 40);
        assert_eq!((s, e), (0, 10));
        // Not ASCII: the limit counts characters, not bytes.
        let text = "Überweisungen dauern dreißig Tage ab Genehmigung.";
        let (s, e) = excerpt(text, 30);
        assert_eq!(&text[s..e], "Überweisungen dauern dreißig");
    }

    #[test]
    fn char_offset_counts_characters() {
        for text in ["", "abc", "añb€c😀d", "Überweisungen dauern dreißig Tage"] {
            for n in 0..=text.chars().count() + 1 {
                let want = text.char_indices().nth(n).map_or(text.len(), |(i, _)| i);
                assert_eq!(char_offset(text, n), want, "{text:?} {n}");
            }
        }
    }

    #[test]
    fn clip_collapses_white_space_as_split_whitespace_does() {
        for quote in [
            "a\tb\n\nc\x0bd\x0ce\r\n  f",
            "  lead and trail  ",
            "non\u{a0}breaking\u{2003}spaces here",
            "you’re ‘quoted’ — dash\u{3000}ideographic\u{85}next",
            "",
        ] {
            let (s, e) = excerpt(quote, 200);
            let want = quote[s..e].split_whitespace().collect::<Vec<_>>().join(" ");
            assert_eq!(clip(quote, 200), want, "{quote:?}");
        }
        assert!(clip("one two three four", 9).ends_with('…'));
        // Every character, as white space or inside a word.
        for c in (0..0x3100u32).filter_map(char::from_u32) {
            let quote = format!("a{c}b {c}c{c} d");
            let want = quote.split_whitespace().collect::<Vec<_>>().join(" ");
            assert_eq!(clip(&quote, 200), want, "U+{:04X}", c as u32);
        }
    }
}
