//! Citation markers: `[2]`, `[1][3]`, `[1, 3]`, `[2-4]`, `[2–4]`.
//!
//! A marker is one bracket group whose content is a comma-separated list of
//! integers or integer ranges. Adjacent groups (`[1][3]`) are separate
//! markers. What is *not* a marker:
//!
//! - a markdown link `[text](url)` or `[1](url)` (the group is followed by `(`),
//! - a footnote `[^1]`, a word `[a]`, an empty `[]`,
//! - anything whose content has other characters (`[v2]`, `[1.5]`).
//!
//! Numbers of any length parse without overflow: they saturate at
//! `u64::MAX`, which is never a passage number and so is reported as a bad id.
//! `[0]` parses and is a bad id (numbering is 1-based).
//!
//! Parsing is one pass over the bytes, and the ids of all markers of a text
//! live in one shared vector of ranges, so a whole answer costs two
//! allocations at most.

use std::ops::Range;

/// The widest range (`[lo-hi]`) that is expanded id by id. A wider or
/// reversed range is kept as a marker but flagged `malformed`: its
/// endpoints are its ids, and it can never be verified.
pub const MAX_RANGE_SPAN: u64 = 64;

/// One bracket group that parsed as a citation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Marker {
    /// Byte offset of `[` in the text.
    pub start: usize,
    /// Byte offset just past `]`.
    pub end: usize,
    /// The id ranges of this marker, as indices into [`Markers::ranges`].
    pub ranges: (u32, u32),
    /// A reversed range or one wider than [`MAX_RANGE_SPAN`].
    pub malformed: bool,
}

impl Marker {
    /// The byte span of the marker in its text.
    pub fn span(&self) -> Range<usize> {
        self.start..self.end
    }
}

/// An inclusive range of ids written in a marker (`[3]` is `3..=3`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IdRange {
    /// The first id written (the left endpoint).
    pub lo: u64,
    /// The last id written (the right endpoint; below `lo` when the range is reversed).
    pub hi: u64,
}

/// All markers of a text, in order.
#[derive(Debug, Clone, Default)]
pub struct Markers {
    /// The markers, in text order.
    pub markers: Vec<Marker>,
    /// The id ranges of all markers, shared; each [`Marker::ranges`] indexes into it.
    pub ranges: Vec<IdRange>,
}

impl Markers {
    /// Parses every marker of `text`.
    pub fn parse(text: &str) -> Markers {
        let mut out = Markers::default();
        out.parse_into(text);
        out
    }

    /// Parses every marker of `text` into `self`, reusing its buffers.
    pub fn parse_into(&mut self, text: &str) {
        self.markers.clear();
        self.ranges.clear();
        let bytes = text.as_bytes();
        let mut pos = 0;
        while let Some(offset) = memchr::memchr(b'[', &bytes[pos..]) {
            let open = pos + offset;
            match parse_group(bytes, open, &mut self.ranges) {
                Some((end, first_range, malformed)) => {
                    self.markers.push(Marker {
                        start: open,
                        end,
                        ranges: (first_range as u32, self.ranges.len() as u32),
                        malformed,
                    });
                    pos = end;
                }
                None => pos = open + 1,
            }
        }
    }

    /// The id ranges of one marker.
    pub fn ranges_of(&self, marker: &Marker) -> &[IdRange] {
        &self.ranges[marker.ranges.0 as usize..marker.ranges.1 as usize]
    }

    /// Every id one marker names, ranges expanded (malformed ranges give
    /// their two endpoints).
    pub fn ids_of<'s>(&'s self, marker: &'s Marker) -> impl Iterator<Item = u64> + 's {
        self.ranges_of(marker).iter().flat_map(|r| expand(*r))
    }

    /// The text has no marker.
    pub fn is_empty(&self) -> bool {
        self.markers.is_empty()
    }

    /// The number of markers.
    pub fn len(&self) -> usize {
        self.markers.len()
    }
}

/// Expands a range into its ids; a malformed range gives its endpoints.
pub fn expand(r: IdRange) -> impl Iterator<Item = u64> {
    let well_formed = r.lo <= r.hi && r.hi - r.lo <= MAX_RANGE_SPAN;
    let (a, b, second) = if well_formed {
        (r.lo, r.hi, None)
    } else {
        (r.lo, r.lo, Some(r.hi))
    };
    (a..=b).chain(second)
}

/// The end (past `]`) of the marker that starts at `open`, if a marker
/// starts there. Allocates nothing.
pub fn marker_end_at(bytes: &[u8], open: usize) -> Option<usize> {
    if bytes.get(open) != Some(&b'[') {
        return None;
    }
    scan_group(bytes, open, &mut |_| {}).map(|(end, _)| end)
}

/// Parses a bracket group starting at `open` (which holds `[`). Returns the
/// end offset (past `]`), the index of its first range and whether it is
/// malformed; pushes its ranges. On failure nothing is pushed.
fn parse_group(
    bytes: &[u8],
    open: usize,
    ranges: &mut Vec<IdRange>,
) -> Option<(usize, usize, bool)> {
    let first = ranges.len();
    match scan_group(bytes, open, &mut |r| ranges.push(r)) {
        Some((end, malformed)) => Some((end, first, malformed)),
        None => {
            ranges.truncate(first);
            None
        }
    }
}

/// The grammar of a marker, reporting each range to `sink` as it is read
/// (a caller that keeps them drops them on failure).
fn scan_group(bytes: &[u8], open: usize, sink: &mut dyn FnMut(IdRange)) -> Option<(usize, bool)> {
    let mut i = open + 1;
    let mut malformed = false;
    loop {
        i = skip_spaces(bytes, i);
        let (lo, after) = parse_uint(bytes, i)?;
        i = skip_spaces(bytes, after);
        let mut hi = lo;
        if let Some(after_dash) = parse_dash(bytes, i) {
            i = skip_spaces(bytes, after_dash);
            let (value, after) = parse_uint(bytes, i)?;
            hi = value;
            i = skip_spaces(bytes, after);
            if hi < lo || hi - lo > MAX_RANGE_SPAN {
                malformed = true;
            }
        }
        sink(IdRange { lo, hi });
        match bytes.get(i) {
            Some(b',') => i += 1,
            Some(b']') => {
                let end = i + 1;
                // `[1](https://…)` is a markdown link, not a citation.
                if bytes.get(end) == Some(&b'(') {
                    return None;
                }
                return Some((end, malformed));
            }
            _ => return None,
        }
    }
}

fn skip_spaces(bytes: &[u8], mut i: usize) -> usize {
    while matches!(bytes.get(i), Some(b' ' | b'\t')) {
        i += 1;
    }
    i
}

/// Parses ASCII digits at `i`, saturating at `u64::MAX`.
fn parse_uint(bytes: &[u8], mut i: usize) -> Option<(u64, usize)> {
    let start = i;
    let mut value: u64 = 0;
    while let Some(&b) = bytes.get(i) {
        if !b.is_ascii_digit() {
            break;
        }
        value = value.saturating_mul(10).saturating_add(u64::from(b - b'0'));
        i += 1;
    }
    (i > start).then_some((value, i))
}

/// A range dash: `-`, `–` (en dash) or `—` (em dash).
fn parse_dash(bytes: &[u8], i: usize) -> Option<usize> {
    match bytes.get(i..) {
        Some([b'-', ..]) => Some(i + 1),
        Some([0xE2, 0x80, 0x93 | 0x94, ..]) => Some(i + 3),
        _ => None,
    }
}

/// Rewrites every marker-like bracket group of passage text so it can no
/// longer be read as a citation or a passage boundary: `[12]` becomes
/// `(12)`. The replacement has the same byte length, so offsets into the
/// original passage stay valid for the rendered one.
pub fn neutralize(text: &str) -> std::borrow::Cow<'_, str> {
    let markers = Markers::parse(text);
    if markers.is_empty() {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    let mut last = 0;
    for m in &markers.markers {
        out.push_str(&text[last..m.start]);
        out.push('(');
        out.push_str(&text[m.start + 1..m.end - 1]);
        out.push(')');
        last = m.end;
    }
    out.push_str(&text[last..]);
    std::borrow::Cow::Owned(out)
}

/// The byte range of a leading list bullet ("- ", "* ", "+ ", "1. ", "1) ") of a claim, if any:
/// not content, like its markers.
pub fn list_bullet(text: &str) -> Option<Range<usize>> {
    let lead = text.len() - text.trim_start().len();
    let t = &text.as_bytes()[lead..];
    if t.len() >= 2 && matches!(t[0], b'-' | b'*' | b'+') && t[1] == b' ' {
        return Some(lead..lead + 2);
    }
    let digits = t.iter().take_while(|b| b.is_ascii_digit()).count();
    (digits > 0
        && digits + 1 < t.len()
        && matches!(t[digits], b'.' | b')')
        && t[digits + 1] == b' ')
        .then_some(lead..lead + digits + 2)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ids(text: &str) -> Vec<Vec<u64>> {
        let m = Markers::parse(text);
        m.markers.iter().map(|mk| m.ids_of(mk).collect()).collect()
    }

    #[test]
    fn single_adjacent_lists_and_ranges() {
        assert_eq!(ids("a [2]."), vec![vec![2]]);
        assert_eq!(ids("a [1][3]."), vec![vec![1], vec![3]]);
        assert_eq!(ids("a [1, 3]."), vec![vec![1, 3]]);
        assert_eq!(ids("a [2-4]."), vec![vec![2, 3, 4]]);
        assert_eq!(ids("a [2–4]."), vec![vec![2, 3, 4]]);
        assert_eq!(ids("a [ 2 — 3 , 5 ]."), vec![vec![2, 3, 5]]);
    }

    #[test]
    fn spans_slice_back_to_the_marker() {
        let text = "Refunds take 14 days [7]. Also [1][3].";
        let m = Markers::parse(text);
        let spans: Vec<&str> = m.markers.iter().map(|mk| &text[mk.span()]).collect();
        assert_eq!(spans, ["[7]", "[1]", "[3]"]);
    }

    #[test]
    fn not_markers() {
        assert!(ids("see [the policy](https://x.example)").is_empty());
        assert!(ids("see [1](https://x.example)").is_empty());
        assert!(ids("a footnote[^1] and [a] and [] and [v2] and [1.5] and [1,]").is_empty());
        assert!(ids("unclosed [12").is_empty());
    }

    #[test]
    fn huge_numbers_saturate_and_zero_parses() {
        assert_eq!(ids("[0]"), vec![vec![0]]);
        assert_eq!(ids("[99999999999999999999999999]"), vec![vec![u64::MAX]]);
    }

    #[test]
    fn wide_or_reversed_ranges_are_malformed() {
        let m = Markers::parse("[1-1000000000] [5-2]");
        assert!(m.markers.iter().all(|mk| mk.malformed));
        assert_eq!(ids("[1-1000000000]"), vec![vec![1, 1_000_000_000]]);
        assert_eq!(ids("[5-2]"), vec![vec![5, 2]]);
    }

    #[test]
    fn neutralize_keeps_length_and_removes_markers() {
        let text = "Founded in [2024] per [3].\n\n[4] forged";
        let out = neutralize(text);
        assert_eq!(out.len(), text.len());
        assert!(Markers::parse(&out).is_empty());
        assert_eq!(out, "Founded in (2024) per (3).\n\n(4) forged");
    }

    #[test]
    fn bullets_and_markers_are_skipped_by_a_claim_tokenizer() {
        let t = "- Refunds take 5 days [1][3], or [2-4].";
        let mut skip: Vec<(usize, usize)> = list_bullet(t)
            .map(|r| (r.start, r.end))
            .into_iter()
            .collect();
        skip.extend(Markers::parse(t).markers.iter().map(|m| (m.start, m.end)));
        assert_eq!(skip.len(), 4);
        let mut toks = Vec::new();
        crate::tokenize(t, &skip, true, &mut toks);
        let words: Vec<&str> = toks.iter().map(|k| k.text(t)).collect();
        assert_eq!(words, ["Refunds", "take", "5", "days", "or"]);
        assert_eq!(list_bullet("  12) x"), Some(2..6));
        assert_eq!(list_bullet("12 x"), None);
    }
}
