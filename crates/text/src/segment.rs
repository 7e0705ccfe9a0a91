//! Sentence segmentation with byte spans, tuned for LLM answers.
//!
//! The segmenter walks the text line by line and, inside a line, looks for
//! terminal punctuation (`.`, `!`, `?`, `…`). What it gets right:
//!
//! - abbreviations (`e.g.`, `i.e.`, `etc.`, `Dr.`, `U.S.`, `a.m.`, month
//!   names), decimals and money (`3.5`, `$51.75`, `$191,900`), times,
//!   domains and e-mail addresses (`gsa.gov`), ellipses;
//! - closing quotes, parentheses and emphasis after the punctuation;
//! - citation markers after the period: in `… 30 days. [2] Next`, `[2]`
//!   belongs to the sentence before;
//! - markdown structure: each bullet or numbered list item, heading and
//!   table row is its own sentence; a blank line ends a sentence; a line
//!   break ends one unless the next line continues it in lower case (a soft
//!   wrap).
//!
//! Spans never include surrounding white space, and always slice the input
//! on character boundaries.

use crate::abbrev::{Abbrev, abbreviation};
use crate::marker;

/// What kind of line a sentence came from.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SentenceKind {
    /// A sentence of running text.
    Prose,
    /// A bullet or numbered list item.
    ListItem,
    /// A markdown heading line (`## ...`) or a line in bold alone.
    Heading,
    /// A markdown table row (`| cell | cell |`).
    TableRow,
}

/// One sentence: a byte span into the text it came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Sentence {
    /// Byte offset of the sentence's first character in the text.
    pub start: usize,
    /// Byte offset just past the sentence's end in the text (surrounding white space excluded).
    pub end: usize,
    /// What kind of line the sentence came from.
    pub kind: SentenceKind,
    /// It ends with a question mark (before any markers after it).
    pub question: bool,
}

impl Sentence {
    /// The sentence in `source`, the text it was segmented from.
    pub fn text<'a>(&self, source: &'a str) -> &'a str {
        &source[self.start..self.end]
    }
}

/// Splits `text` into sentences.
pub fn segment(text: &str) -> Vec<Sentence> {
    let mut out = Vec::new();
    segment_into(text, &mut out);
    out
}

/// Splits `text` into sentences, appending to `out` (cleared first).
pub fn segment_into(text: &str, out: &mut Vec<Sentence>) {
    out.clear();
    let (ascii, multiline) = survey(text.as_bytes());
    Segmenter {
        text,
        bytes: text.as_bytes(),
        out,
        open: None,
        prev_ce: 0,
        ascii,
        multiline,
    }
    .run();
}

struct Segmenter<'a, 'o> {
    text: &'a str,
    bytes: &'a [u8],
    out: &'o mut Vec<Sentence>,
    /// The sentence being built: its start and kind.
    open: Option<(usize, SentenceKind)>,
    /// End of the content of the last non-blank line.
    prev_ce: usize,
    /// The text is ASCII: no `…`, no Unicode spaces to trim.
    ascii: bool,
    /// The text has a line break (else it is one line: no line search).
    multiline: bool,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum LineKind {
    Blank,
    Rule,
    Heading { body: usize },
    BoldHeading,
    TableRow,
    TableSeparator,
    ListItem { body: usize },
    MarkersOnly,
    Prose,
}

impl Segmenter<'_, '_> {
    fn run(&mut self) {
        let len = self.bytes.len();
        let mut line_start = 0;
        while line_start <= len {
            let line_end_nl = if self.multiline {
                memchr_nl(self.bytes, line_start).unwrap_or(len)
            } else {
                len
            };
            let next_line = line_end_nl + 1;
            let cs = skip_ws(self.bytes, line_start, line_end_nl);
            let ce = trim_end(self.bytes, cs, line_end_nl);
            self.line(cs, ce, next_line);
            if cs < ce {
                self.prev_ce = ce;
            }
            if line_end_nl >= len {
                break;
            }
            line_start = next_line;
        }
        if let Some((start, kind)) = self.open.take() {
            let end = trim_end(self.bytes, start, len);
            self.emit(start, end, kind);
        }
    }

    /// One line, its content `[cs, ce)` trimmed of white space.
    #[inline(always)]
    fn line(&mut self, cs: usize, ce: usize, next_line: usize) {
        match self.classify(cs, ce) {
            LineKind::Blank | LineKind::Rule | LineKind::TableSeparator => self.close_open(),
            LineKind::Heading { body } => {
                self.close_open();
                let mut end = ce;
                // Closing hashes: `## Title ##`.
                while end > body && self.bytes[end - 1] == b'#' {
                    end -= 1;
                }
                let end = trim_end(self.bytes, body, end);
                if end > body {
                    self.emit(body, end, SentenceKind::Heading);
                }
            }
            LineKind::BoldHeading => {
                self.close_open();
                self.emit(cs, ce, SentenceKind::Heading);
            }
            LineKind::TableRow => {
                self.close_open();
                self.emit(cs, ce, SentenceKind::TableRow);
            }
            LineKind::MarkersOnly => {
                // `… 30 days.\n[2]`: the markers belong to the sentence before.
                if let Some((start, kind)) = self.open.take() {
                    self.emit(start, ce, kind);
                } else if let Some(last) = self.out.last_mut() {
                    if last.kind != SentenceKind::Heading {
                        last.end = ce;
                    } else {
                        self.emit(cs, ce, SentenceKind::Prose);
                    }
                } else {
                    self.emit(cs, ce, SentenceKind::Prose);
                }
            }
            LineKind::ListItem { body } => {
                self.close_open();
                self.open = Some((body, SentenceKind::ListItem));
                self.scan(body, ce);
                self.end_of_line(ce, next_line);
            }
            LineKind::Prose => {
                if self.open.is_none() {
                    self.open = Some((cs, SentenceKind::Prose));
                }
                self.scan(cs, ce);
                self.end_of_line(ce, next_line);
            }
        }
    }

    /// At the end of a line with an open sentence: keep it open only when
    /// the next line is prose that starts in lower case (a soft wrap).
    #[inline(always)]
    fn end_of_line(&mut self, ce: usize, next_line: usize) {
        let Some((start, kind)) = self.open else {
            return;
        };
        if next_line < self.bytes.len() {
            let le = memchr_nl(self.bytes, next_line).unwrap_or(self.bytes.len());
            let ncs = skip_ws(self.bytes, next_line, le);
            let nce = trim_end(self.bytes, ncs, le);
            if self.classify(ncs, nce) == LineKind::Prose && starts_lowercase(self.text, ncs) {
                return;
            }
        }
        self.open = None;
        let end = trim_end(self.bytes, start, ce);
        self.emit(start, end, kind);
    }

    /// Closes the open sentence, if any, at the end of the last line that
    /// held its content.
    fn close_open(&mut self) {
        if let Some((start, kind)) = self.open.take() {
            let end = trim_end(self.bytes, start, self.prev_ce.max(start));
            self.emit(start, end, kind);
        }
    }

    fn emit(&mut self, start: usize, end: usize, kind: SentenceKind) {
        self.emit_sentence(start, end, kind, false);
    }

    // Inlined: called once per sentence from a few places, and the call
    // costs as much as the work.
    #[inline(always)]
    fn emit_sentence(&mut self, start: usize, end: usize, kind: SentenceKind, question: bool) {
        if end <= start {
            return;
        }
        // ASCII white space is already trimmed; trim Unicode spaces too
        // (only when the span starts or ends outside ASCII).
        let (start, end) =
            if !self.ascii && (self.bytes[start] >= 0x80 || self.bytes[end - 1] >= 0x80) {
                match self.trim_unicode(start, end) {
                    Some(span) => span,
                    None => return,
                }
            } else {
                (start, end)
            };
        self.out.push(Sentence {
            start,
            end,
            kind,
            question,
        });
    }

    /// The span trimmed of Unicode white space; `None` if nothing is left.
    #[cold]
    fn trim_unicode(&self, start: usize, end: usize) -> Option<(usize, usize)> {
        let span = &self.text[start..end];
        let trimmed = span.trim();
        if trimmed.is_empty() {
            return None;
        }
        let start = start + span.len() - span.trim_start().len();
        Some((start, start + trimmed.len()))
    }

    /// What kind of line `[cs, ce)` is. Inlined: most lines are prose
    /// that starts with a letter, decided in two tests.
    #[inline(always)]
    fn classify(&self, cs: usize, ce: usize) -> LineKind {
        if cs >= ce {
            return LineKind::Blank;
        }
        // Rules, headings, tables, list items, bold headings and marker
        // lines all start with punctuation, a digit or `•`.
        if self.bytes[cs].is_ascii_alphabetic() {
            return LineKind::Prose;
        }
        self.classify_markup(cs, ce)
    }

    /// [`Self::classify`] for a non-blank line that starts with something
    /// other than a letter.
    fn classify_markup(&self, cs: usize, ce: usize) -> LineKind {
        let b = self.bytes;
        let line = &b[cs..ce];
        let first = line[0];
        if ce - cs >= 3
            && line
                .iter()
                .all(|&c| matches!(c, b'-' | b'*' | b'=' | b'_' | b' '))
        {
            let c0 = first;
            if line.iter().filter(|&&c| c == c0).count() >= 3 {
                return LineKind::Rule;
            }
        }
        if first == b'#' {
            let hashes = line.iter().take_while(|&&c| c == b'#').count();
            if hashes <= 6 && matches!(line.get(hashes), Some(b' ' | b'\t')) {
                return LineKind::Heading {
                    body: skip_ws(b, cs + hashes, ce),
                };
            }
        }
        if first == b'|' {
            if line
                .iter()
                .all(|&c| matches!(c, b'|' | b'-' | b':' | b' ' | b'\t'))
            {
                return LineKind::TableSeparator;
            }
            return LineKind::TableRow;
        }
        if let Some(body) = list_body(b, cs, ce) {
            return LineKind::ListItem { body };
        }
        if line.len() > 4 && line.starts_with(b"**") {
            let inner_end = if line.ends_with(b"**") {
                Some(line.len() - 2)
            } else if line.ends_with(b"**:") {
                Some(line.len() - 3)
            } else {
                None
            };
            if let Some(inner_end) = inner_end
                && inner_end > 2
                && !line[2..inner_end].windows(2).any(|w| w == b"**")
            {
                return LineKind::BoldHeading;
            }
        }
        if first == b'[' && markers_only(self.text, cs, ce) {
            return LineKind::MarkersOnly;
        }
        LineKind::Prose
    }

    /// Finds sentence boundaries inside one line's content `[from, ce)`.
    fn scan(&mut self, from: usize, ce: usize) {
        let b = self.bytes;
        // `…` is the only multi-byte terminator; look for it only on lines
        // that have one.
        let mut next_ellipsis = if self.ascii {
            None
        } else {
            find_ellipsis(b, from, ce)
        };
        let mut i = from;
        while i < ce {
            // Jump to the next `.`, `!` or `?` (SIMD), or the next `…`.
            let punct = memchr::memchr3(b'.', b'!', b'?', &b[i..ce]).map_or(ce, |k| i + k);
            if !self.ascii && next_ellipsis.is_some_and(|e| e < i) {
                next_ellipsis = find_ellipsis(b, i, ce);
            }
            let (at, run_end) = match next_ellipsis {
                Some(e) if e < punct => (e, e + 3),
                _ if punct < ce => {
                    let mut j = punct + 1;
                    while j < ce && matches!(b[j], b'.' | b'!' | b'?') {
                        j += 1;
                    }
                    (punct, j)
                }
                _ => break,
            };
            i = at;
            let decision = self.boundary(i, run_end, ce);
            match decision {
                Some((end, next)) => {
                    if let Some((start, kind)) = self.open.take() {
                        let question = b[i..run_end].contains(&b'?');
                        self.emit_sentence(start, end, kind, question);
                        if next < ce {
                            let kind = if kind == SentenceKind::ListItem {
                                SentenceKind::ListItem
                            } else {
                                SentenceKind::Prose
                            };
                            self.open = Some((next, kind));
                        }
                    }
                    i = next.max(run_end);
                }
                None => i = run_end,
            }
        }
    }

    /// Decides whether the punctuation run `[p, run_end)` ends a sentence.
    /// Returns the sentence end and the start of what follows.
    fn boundary(&self, p: usize, run_end: usize, ce: usize) -> Option<(usize, usize)> {
        let b = self.bytes;
        let punct = b[p];
        let ellipsis = run_end - p >= 3 && punct == b'.' || punct == 0xE2;
        // Directly followed by a letter or digit: `3.5`, `gsa.gov`, `e.g`.
        if let Some(&next) = b.get(run_end)
            && run_end < ce
            && (next.is_ascii_alphanumeric() || next == b'_' || next == b'@')
        {
            return None;
        }
        // Closers after the punctuation: quotes, parentheses, emphasis.
        let mut end = run_end;
        loop {
            match b.get(end..ce) {
                Some([b'"' | b'\'' | b')' | b'*' | b'_', ..]) => end += 1,
                Some([0xE2, 0x80, 0x9D | 0x99, ..]) => end += 3, // ” ’
                _ => break,
            }
        }
        // Markers after the punctuation belong to this sentence.
        let mut q = skip_ws(b, end, ce);
        let mut absorbed_marker = false;
        while q < ce && b[q] == b'[' {
            match marker::marker_end_at(&b[..ce], q) {
                Some(m_end) => {
                    end = m_end;
                    absorbed_marker = true;
                    q = skip_ws(b, end, ce);
                }
                None => break,
            }
        }
        if absorbed_marker && q < ce && matches!(b[q], b'.' | b'!' | b'?') {
            end = q + 1;
            q = skip_ws(b, end, ce);
        }
        if q >= ce {
            return Some((end, ce));
        }
        if q == end && !absorbed_marker {
            // No space after the punctuation and closers: `"Go."Then` is
            // too unusual to split.
            return None;
        }
        if absorbed_marker {
            return Some((end, q));
        }
        let next_upper = starts_sentence_like(self.text, q);
        if ellipsis {
            return next_upper.then_some((end, q));
        }
        if punct != b'.' {
            return (!starts_lowercase(self.text, q)).then_some((end, q));
        }
        match abbreviation_before(b, p) {
            Abbrev::NeverEnds => None,
            Abbrev::Initialism => (next_upper && starter_word(b, q, ce)).then_some((end, q)),
            Abbrev::Other => (next_upper && !b[q].is_ascii_digit()).then_some((end, q)),
            Abbrev::None => next_upper.then_some((end, q)),
        }
    }
}

/// Classifies the token that ends just before the period at `p`.
fn abbreviation_before(b: &[u8], p: usize) -> Abbrev {
    let mut s = p;
    while s > 0
        && !matches!(
            b[s - 1],
            b' ' | b'\t' | b'\n' | b'(' | b'"' | b'\'' | b'[' | b'/'
        )
    {
        s -= 1;
    }
    abbreviation(&b[s..p])
}

/// Words that typically start a sentence; after an initialism (`U.S.`) only
/// these make the period a sentence end.
const STARTERS: &[&str] = &[
    "the",
    "this",
    "that",
    "these",
    "those",
    "it",
    "its",
    "you",
    "your",
    "we",
    "our",
    "they",
    "their",
    "he",
    "she",
    "his",
    "her",
    "i",
    "in",
    "if",
    "a",
    "an",
    "for",
    "all",
    "each",
    "every",
    "there",
    "when",
    "after",
    "before",
    "to",
    "on",
    "at",
    "as",
    "however",
    "also",
    "most",
    "some",
    "no",
    "not",
    "employees",
    "claims",
];

fn starter_word(b: &[u8], q: usize, ce: usize) -> bool {
    let mut e = q;
    while e < ce && b[e].is_ascii_alphabetic() {
        e += 1;
    }
    let word = &b[q..e];
    STARTERS
        .iter()
        .any(|s| word.eq_ignore_ascii_case(s.as_bytes()))
}

/// Does the text at `q` look like the start of a new sentence: a capital
/// letter, a digit, an opening quote, parenthesis, emphasis or currency.
fn starts_sentence_like(text: &str, q: usize) -> bool {
    let mut rest = text[q..].chars();
    match rest.next() {
        Some(c) if c.is_uppercase() || c.is_ascii_digit() => true,
        Some('"' | '\'' | '(' | '*' | '_' | '“' | '‘' | '$' | '€' | '£' | '[' | '`') => {
            match rest.next() {
                Some(c) => !c.is_lowercase(),
                None => false,
            }
        }
        Some(c) => !c.is_lowercase() && !c.is_alphabetic() && !matches!(c, ',' | ';' | ':' | ')'),
        None => false,
    }
}

fn starts_lowercase(text: &str, q: usize) -> bool {
    text[q..].chars().next().is_some_and(|c| c.is_lowercase())
}

/// The body start of a list item line (`- x`, `* x`, `+ x`, `• x`, `1. x`,
/// `1) x`, `a. x` is not a list item).
fn list_body(b: &[u8], cs: usize, ce: usize) -> Option<usize> {
    let line = &b[cs..ce];
    let after = match line {
        [b'-' | b'*' | b'+', b' ' | b'\t', ..] => cs + 2,
        [0xE2, 0x80, 0xA2, b' ' | b'\t', ..] => cs + 4, // •
        _ => {
            let digits = line.iter().take_while(|c| c.is_ascii_digit()).count();
            if digits == 0 || digits > 3 {
                return None;
            }
            match line.get(digits..digits + 2) {
                Some([b'.' | b')', b' ' | b'\t']) => cs + digits + 2,
                _ => return None,
            }
        }
    };
    let body = skip_ws(b, after, ce);
    (body < ce).then_some(body)
}

/// The line holds only citation markers (and white space or a final
/// period).
fn markers_only(text: &str, cs: usize, ce: usize) -> bool {
    let b = &text.as_bytes()[..ce];
    let mut pos = cs;
    let mut any = false;
    while pos < ce && b[pos] == b'[' {
        match marker::marker_end_at(b, pos) {
            Some(end) => {
                any = true;
                pos = skip_ws(b, end, ce);
            }
            None => return false,
        }
    }
    any && matches!(&b[pos..ce], b"" | b"." | b"!" | b"?")
}

/// The next `…` (E2 80 A6) in `b[from..to]`.
fn find_ellipsis(b: &[u8], from: usize, to: usize) -> Option<usize> {
    let mut i = from;
    while let Some(k) = memchr::memchr(0xE2, &b[i..to]) {
        let at = i + k;
        if b.get(at + 1) == Some(&0x80) && b.get(at + 2) == Some(&0xA6) && at + 3 <= to {
            return Some(at);
        }
        i = at + 1;
    }
    None
}

/// Is the text ASCII, and does it have a line break?
fn survey(b: &[u8]) -> (bool, bool) {
    (b.is_ascii(), memchr::memchr(b'\n', b).is_some())
}

fn memchr_nl(b: &[u8], from: usize) -> Option<usize> {
    memchr::memchr(b'\n', b.get(from..)?).map(|k| from + k)
}

fn skip_ws(b: &[u8], mut i: usize, end: usize) -> usize {
    while i < end && matches!(b[i], b' ' | b'\t' | b'\r' | b'\n') {
        i += 1;
    }
    i
}

fn trim_end(b: &[u8], start: usize, mut end: usize) -> usize {
    while end > start && matches!(b[end - 1], b' ' | b'\t' | b'\r' | b'\n') {
        end -= 1;
    }
    end
}

#[cfg(test)]
mod tests {
    use super::*;

    fn split(text: &str) -> Vec<&str> {
        segment(text).iter().map(|s| s.text(text)).collect()
    }

    #[test]
    fn a_cited_answer_splits_after_each_marker() {
        assert_eq!(
            split(
                "Reimbursements settle within 30 days of approval [2]. Claims for per diem are\npaid on the same schedule [2]."
            ),
            [
                "Reimbursements settle within 30 days of approval [2].",
                "Claims for per diem are\npaid on the same schedule [2]."
            ]
        );
    }

    #[test]
    fn abbreviations_do_not_split() {
        assert_eq!(
            split(
                "Bring ID, e.g. a passport, i.e. something official. Dr. Smith approves it. Ask the U.S. Embassy."
            ),
            [
                "Bring ID, e.g. a passport, i.e. something official.",
                "Dr. Smith approves it.",
                "Ask the U.S. Embassy."
            ]
        );
        assert_eq!(
            split("Pens, paper, etc. The desk is yours."),
            ["Pens, paper, etc.", "The desk is yours."]
        );
        assert_eq!(
            split("He moved to the U.S. The job started."),
            ["He moved to the U.S.", "The job started."]
        );
        assert_eq!(
            split("Due Jan. 5 at the latest."),
            ["Due Jan. 5 at the latest."]
        );
    }

    #[test]
    fn decimals_money_times_domains() {
        assert_eq!(
            split(
                "The rate is 3.5 percent. Lunch costs $51.75 and the cap is $191,900 [1]. Email hspd12.security@gsa.gov to start. Arrive at 9:30 a.m. sharp."
            ),
            [
                "The rate is 3.5 percent.",
                "Lunch costs $51.75 and the cap is $191,900 [1].",
                "Email hspd12.security@gsa.gov to start.",
                "Arrive at 9:30 a.m. sharp."
            ]
        );
    }

    #[test]
    fn ellipses_quotes_parentheses() {
        assert_eq!(
            split(
                "Wait... it depends. He said \"File it now.\" Then he left. (See the FAQ.) Done!"
            ),
            [
                "Wait... it depends.",
                "He said \"File it now.\"",
                "Then he left.",
                "(See the FAQ.)",
                "Done!"
            ]
        );
        assert_eq!(split("It was… Fine."), ["It was…", "Fine."]);
    }

    #[test]
    fn markers_after_the_period_belong_to_the_sentence_before() {
        assert_eq!(
            split("Claims settle in 30 days. [2] Per diem follows. [1][3]"),
            ["Claims settle in 30 days. [2]", "Per diem follows. [1][3]"]
        );
        assert_eq!(
            split("Claims settle in 30 days.\n[2]\n\nNext one."),
            ["Claims settle in 30 days.\n[2]", "Next one."]
        );
    }

    #[test]
    fn lists_headings_and_line_breaks() {
        let text = "## Reimbursement\n\nHere is what I found:\n- Claims settle in 30 days [2]\n- Per diem follows the same schedule [2]\n1. File within 60 days [1].\n2) Ask the help desk [3]\n**Summary**\nDone.";
        assert_eq!(
            split(text),
            [
                "Reimbursement",
                "Here is what I found:",
                "Claims settle in 30 days [2]",
                "Per diem follows the same schedule [2]",
                "File within 60 days [1].",
                "Ask the help desk [3]",
                "**Summary**",
                "Done."
            ]
        );
        let kinds: Vec<SentenceKind> = segment(text).iter().map(|s| s.kind).collect();
        assert_eq!(kinds[0], SentenceKind::Heading);
        assert_eq!(kinds[2], SentenceKind::ListItem);
        assert_eq!(kinds[6], SentenceKind::Heading);
    }

    #[test]
    fn a_line_break_without_punctuation_ends_a_sentence_unless_soft_wrapped() {
        assert_eq!(
            split("First line\nSecond line"),
            ["First line", "Second line"]
        );
        assert_eq!(
            split("A long sentence that\nwraps here."),
            ["A long sentence that\nwraps here."]
        );
    }

    #[test]
    fn questions_and_exclamations() {
        assert_eq!(
            split("Is it covered? Yes, up to 7 days [1]. Great!"),
            ["Is it covered?", "Yes, up to 7 days [1].", "Great!"]
        );
    }

    #[test]
    fn survey_sees_every_byte() {
        for len in 0..40 {
            let plain = vec![b'a'; len];
            assert_eq!(survey(&plain), (true, false));
            for at in 0..len {
                for (c, expected) in [(b'\n', (true, true)), (0xC3, (false, false))] {
                    let mut t = plain.clone();
                    t[at] = c;
                    assert_eq!(survey(&t), expected, "len {len} at {at}");
                }
            }
        }
    }

    #[test]
    fn tables() {
        assert_eq!(
            split("| Item | Limit |\n|---|---|\n| Meals | $75 |"),
            ["| Item | Limit |", "| Meals | $75 |"]
        );
    }
}
