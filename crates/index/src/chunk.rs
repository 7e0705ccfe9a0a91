//! Heading-aware chunking on sentence boundaries. Pure: no I/O.
//!
//! Blocks are packed into chunks in reading order. A chunk never spans two
//! sections: each heading closes the current chunk and is merged into the
//! chunk that follows it (never a heading-only chunk). A section that fits in
//! `max_bytes` is one chunk; a longer one is cut into chunks of about equal
//! size near `target_bytes`, between blocks (a block that would push a chunk
//! past `max_bytes` starts a new chunk). A paragraph longer than
//! `max_bytes` is split at sentence boundaries; only a single sentence longer
//! than `max_bytes` is ever cut (at a space).

use std::ops::Range;

use crate::block::{Block, BlockKind};

/// Chunk sizes, in bytes of cleaned text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ChunkOptions {
    /// Size a long section's chunks aim for, in bytes (default 800).
    pub target_bytes: usize,
    /// Largest chunk, in bytes (default 1200; at least 64 is used); only a
    /// single sentence longer than this is cut.
    pub max_bytes: usize,
}

impl Default for ChunkOptions {
    fn default() -> Self {
        ChunkOptions {
            target_bytes: 800,
            max_bytes: 1200,
        }
    }
}

/// A chunk before it gets its id and URL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChunkDraft {
    /// The chunk's cleaned text.
    pub text: String,
    /// Byte range in the source file.
    pub start: usize,
    /// End of the byte range in the source file (exclusive).
    pub end: usize,
    /// Heading path joined with " › ", or the page title above the first heading.
    pub section: String,
    /// Anchor of the deepest heading above the chunk, if any.
    pub anchor: Option<String>,
}

struct Unit {
    text: String,
    start: usize,
    end: usize,
    /// Continues the previous unit's block (joined with a space, not a newline).
    same_block: bool,
}

/// Packs blocks into chunks.
pub fn chunk_blocks(blocks: &[Block], title: Option<&str>, opts: ChunkOptions) -> Vec<ChunkDraft> {
    let max = opts.max_bytes.max(64);
    let target = opts.target_bytes.clamp(1, max);
    let mut out = Vec::new();
    let mut stack: Vec<(u8, String, String)> = Vec::new();
    let mut pending: Vec<(u8, String, usize)> = Vec::new();
    let mut cur: Option<ChunkDraft> = None;
    let block_units: Vec<Vec<Unit>> = blocks
        .iter()
        .map(|b| match b.kind {
            BlockKind::Heading { .. } => Vec::new(),
            _ => units(b, max),
        })
        .collect();
    let goals = section_goals(blocks, &block_units, target, max);
    for ((block, units), goal) in blocks.iter().zip(block_units).zip(goals) {
        if let BlockKind::Heading { level, anchor } = &block.kind {
            if let Some(c) = cur.take() {
                out.push(c);
            }
            stack.retain(|(l, _, _)| l < level);
            stack.push((*level, block.text.clone(), anchor.clone()));
            pending.retain(|(l, _, _)| l < level);
            pending.push((*level, block.text.clone(), block.start));
            continue;
        }
        for unit in units {
            if let Some(c) = cur.take_if(|c| c.text.len() + 1 + unit.text.len() > max) {
                out.push(c);
            }
            let c = cur.get_or_insert_with(|| {
                let section = if stack.is_empty() {
                    title.unwrap_or_default().to_string()
                } else {
                    stack
                        .iter()
                        .map(|(_, t, _)| t.as_str())
                        .collect::<Vec<_>>()
                        .join(" › ")
                };
                let mut text = String::new();
                let mut start = unit.start;
                if let Some((_, _, s)) = pending.first() {
                    start = start.min(*s);
                }
                // Headings as Markdown lines followed by a blank line, as
                // retrieved passages usually look: a segmenter never runs a
                // heading into the sentence after it.
                for (level, h, _) in pending.drain(..) {
                    for _ in 0..level.clamp(1, 6) {
                        text.push('#');
                    }
                    text.push(' ');
                    text.push_str(&h);
                    text.push_str("\n\n");
                }
                ChunkDraft {
                    text,
                    start,
                    end: unit.end,
                    section,
                    anchor: stack.last().map(|(_, _, a)| a.clone()),
                }
            });
            if !c.text.is_empty() && !c.text.ends_with('\n') {
                c.text.push(if unit.same_block { ' ' } else { '\n' });
            }
            c.text.push_str(&unit.text);
            c.end = c.end.max(unit.end);
            if c.text.len() >= goal {
                out.push(cur.take().expect("just inserted"));
            }
        }
    }
    if let Some(c) = cur.take() {
        out.push(c);
    }
    out
}

/// The size at which to close a chunk, per block: a section (its headings
/// and the blocks up to the next heading) that fits in `max` stays whole;
/// a longer one is cut into `ceil(total / target)` chunks of about equal size,
/// so that no section ends with a runt chunk.
fn section_goals(blocks: &[Block], units: &[Vec<Unit>], target: usize, max: usize) -> Vec<usize> {
    let is_heading = |i: usize| matches!(blocks[i].kind, BlockKind::Heading { .. });
    let mut goals = vec![target; blocks.len()];
    let mut i = 0;
    while i < blocks.len() {
        let mut j = i;
        let mut total = 0;
        while j < blocks.len() && is_heading(j) {
            total += blocks[j].text.len() + 1;
            j += 1;
        }
        while j < blocks.len() && !is_heading(j) {
            total += units[j].iter().map(|u| u.text.len() + 1).sum::<usize>();
            j += 1;
        }
        let goal = if total <= max {
            max
        } else {
            let n = total.div_ceil(target);
            total.div_ceil(n)
        };
        goals[i..j].fill(goal);
        i = j;
    }
    goals
}

fn units(block: &Block, max: usize) -> Vec<Unit> {
    if block.text.len() <= max {
        return vec![Unit {
            text: block.text.clone(),
            start: block.start,
            end: block.end,
            same_block: false,
        }];
    }
    let mut out = Vec::new();
    let mut first = true;
    for r in split_sentences(&block.text) {
        for piece in cut_long(&block.text, r, max) {
            let text = block.text[piece.clone()].trim().to_string();
            if text.is_empty() {
                continue;
            }
            let start = block.source_offset(piece.start);
            let end = block.source_offset(piece.end).max(start);
            out.push(Unit {
                text,
                start,
                end,
                same_block: !first,
            });
            first = false;
        }
    }
    out
}

/// Cuts a sentence longer than `max` at spaces (the only place a sentence is cut).
fn cut_long(text: &str, r: Range<usize>, max: usize) -> Vec<Range<usize>> {
    let mut out = Vec::new();
    let mut start = r.start;
    while r.end - start > max {
        let mut cut = start + max;
        while !text.is_char_boundary(cut) {
            cut -= 1;
        }
        let cut = text[start..cut].rfind(' ').map_or(cut, |p| start + p + 1);
        if cut <= start {
            break;
        }
        out.push(start..cut);
        start = cut;
    }
    out.push(start..r.end);
    out
}

/// Splits prose into sentence ranges (byte ranges of `text`), at the sentences of the text
/// layer's segmenter ([`groundcite_text::segment`]); the first range starts at 0 and the last
/// ends at the end of the text.
pub fn split_sentences(text: &str) -> Vec<Range<usize>> {
    let sentences = groundcite_text::segment::segment(text);
    let last = sentences.len().saturating_sub(1);
    sentences
        .iter()
        .enumerate()
        .map(|(i, s)| {
            let start = if i == 0 { 0 } else { s.start };
            let end = if i == last { text.len() } else { s.end };
            start..end
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::markdown;

    #[test]
    fn sentences() {
        let t = "Claims are paid e.g. by Friday. Dr. Smith approves. See U.S. rules! Then 30 days.";
        let s: Vec<&str> = split_sentences(t).into_iter().map(|r| &t[r]).collect();
        assert_eq!(
            s,
            vec![
                "Claims are paid e.g. by Friday.",
                "Dr. Smith approves.",
                "See U.S. rules!",
                "Then 30 days."
            ]
        );
    }

    #[test]
    fn headings_merge_into_next_chunk_and_paths() {
        let md = "Intro text.\n\n## Leave\n\n### Sick leave\n\nYou get 13 days.\n\n## Empty\n";
        let chunks = chunk_blocks(
            &markdown::blocks(md),
            Some("Handbook"),
            ChunkOptions::default(),
        );
        assert_eq!(chunks.len(), 2);
        assert_eq!(chunks[0].section, "Handbook");
        assert_eq!(chunks[1].section, "Leave › Sick leave");
        assert_eq!(
            chunks[1].text,
            "## Leave\n\n### Sick leave\n\nYou get 13 days."
        );
        assert_eq!(chunks[1].anchor.as_deref(), Some("sick-leave"));
        assert_eq!(
            &md[chunks[1].start..chunks[1].end],
            "## Leave\n\n### Sick leave\n\nYou get 13 days."
        );
    }

    #[test]
    fn long_paragraph_splits_on_sentences() {
        let sentence = "The policy applies to every employee who travels for work. ";
        let md = sentence.repeat(40);
        let opts = ChunkOptions {
            target_bytes: 300,
            max_bytes: 400,
        };
        let chunks = chunk_blocks(&markdown::blocks(&md), None, opts);
        assert!(chunks.len() > 3);
        for c in &chunks {
            assert!(c.text.len() <= 400, "{}", c.text.len());
            assert!(c.text.ends_with("work."), "{:?}", c.text);
            assert!(md[c.start..c.end].starts_with("The policy"));
        }
    }
}
