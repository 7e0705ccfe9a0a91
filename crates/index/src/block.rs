//! Blocks: the cleaned, readable text of a page in reading order, each with
//! the byte range of the source it came from and an offset map.

/// What a block is, as far as chunking cares.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BlockKind {
    /// A heading of level 1..=6, with its anchor (slug or explicit id).
    Heading {
        /// The heading level, 1 (`#`, `<h1>`) to 6.
        level: u8,
        /// The heading's anchor: its explicit id, else a slug of its text (no `#`).
        anchor: String,
    },
    /// Prose: a paragraph (may be split at sentence boundaries).
    Paragraph,
    /// One list item, one table row or a code block: never split inside,
    /// unless it alone exceeds the maximum chunk size.
    Line,
}

/// A piece of cleaned text and where it came from in the source file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Block {
    /// What the block is (heading, paragraph or line).
    pub kind: BlockKind,
    /// The cleaned, readable text of the block (markup removed).
    pub text: String,
    /// Byte range in the source file (start inclusive, end exclusive).
    pub start: usize,
    /// End of the byte range in the source file (exclusive).
    pub end: usize,
    /// Offset map: `(text_offset, source_offset)` pairs, ascending; a text
    /// byte at `t` maps to `src + (t - text)` of the last pair with `text <= t`.
    pub segs: Vec<(usize, usize)>,
}

impl Block {
    /// Maps a byte offset of `text` to a byte offset of the source, clamped to
    /// the block's range.
    pub fn source_offset(&self, text_offset: usize) -> usize {
        let idx = self.segs.partition_point(|&(t, _)| t <= text_offset);
        let mapped = if idx == 0 {
            self.start
        } else {
            let (t, s) = self.segs[idx - 1];
            s + (text_offset - t)
        };
        mapped.clamp(self.start, self.end)
    }
}

/// Accumulates text for one block, collapsing whitespace and recording the
/// offset map.
#[derive(Debug, Default)]
pub(crate) struct TextBuf {
    pub text: String,
    pub segs: Vec<(usize, usize)>,
    next_src: Option<usize>,
}

impl TextBuf {
    /// Appends `s`, whose first byte is at source offset `src` when `exact`
    /// (the text is a verbatim slice of the source), else whose text only
    /// approximately comes from `src`.
    pub fn push(&mut self, s: &str, src: usize, exact: bool, keep_newlines: bool) {
        for (i, c) in s.char_indices() {
            let pos = if exact { src + i } else { src };
            let c = if c == '\u{a0}' { ' ' } else { c };
            if c.is_whitespace() && !(keep_newlines && c == '\n') {
                if self.text.is_empty() || self.text.ends_with([' ', '\n']) {
                    continue;
                }
                self.push_char(' ', pos, exact);
            } else {
                self.push_char(c, pos, exact);
            }
        }
    }

    /// Appends synthetic text (a list marker, a cell separator) mapped to `src`.
    pub fn push_synthetic(&mut self, s: &str, src: usize) {
        self.segs.push((self.text.len(), src));
        self.text.push_str(s);
        self.next_src = None;
    }

    fn push_char(&mut self, c: char, pos: usize, exact: bool) {
        if self.next_src != Some(pos) || !exact {
            if self.segs.last().map(|&(t, _)| t) == Some(self.text.len()) {
                self.segs.pop();
            }
            self.segs.push((self.text.len(), pos));
        }
        self.text.push(c);
        self.next_src = if exact {
            Some(pos + c.len_utf8())
        } else {
            None
        };
    }

    pub fn is_blank(&self) -> bool {
        self.text.trim().is_empty()
    }

    pub fn take(&mut self) -> (String, Vec<(usize, usize)>) {
        self.next_src = None;
        let mut text = std::mem::take(&mut self.text);
        let segs = std::mem::take(&mut self.segs);
        let trimmed = text.trim_end().len();
        text.truncate(trimmed);
        (text, segs)
    }
}

/// The anchor a heading gets on the rendered site (Jekyll/kramdown and
/// markdown-it style): lowercase, punctuation removed, spaces to `-`.
/// "Blood, bone marrow, and organ donation" → `blood-bone-marrow-and-organ-donation`.
pub fn slugify(heading: &str) -> String {
    let mut out = String::with_capacity(heading.len());
    for c in heading.trim().chars() {
        if c.is_alphanumeric() || c == '-' || c == '_' {
            out.extend(c.to_lowercase());
        } else if c.is_whitespace() {
            out.push('-');
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slugs_match_handbook_links() {
        assert_eq!(
            slugify("Blood, bone marrow, and organ donation"),
            "blood-bone-marrow-and-organ-donation"
        );
        assert_eq!(
            slugify("Disabled veteran leave (DVL)"),
            "disabled-veteran-leave-dvl"
        );
        assert_eq!(
            slugify(
                "How can I get my travel approved to attend a training, conference, speaking event, or other \"IRL\" or large team gathering*?"
            ),
            "how-can-i-get-my-travel-approved-to-attend-a-training-conference-speaking-event-or-other-irl-or-large-team-gathering"
        );
        assert_eq!(
            slugify("Can I book outside of Concur?"),
            "can-i-book-outside-of-concur"
        );
    }

    #[test]
    fn textbuf_collapses_and_maps() {
        let mut b = TextBuf::default();
        b.push("a   b", 10, true, false);
        assert_eq!(b.text, "a b");
        let block = Block {
            kind: BlockKind::Paragraph,
            text: b.text.clone(),
            start: 10,
            end: 15,
            segs: b.segs.clone(),
        };
        assert_eq!(block.source_offset(0), 10);
        assert_eq!(block.source_offset(2), 14);
    }
}
