//! Plain text → blocks: paragraphs separated by blank lines. Pure: no I/O.

use crate::block::{Block, BlockKind, TextBuf};

/// Splits plain text into paragraph blocks with exact offsets.
pub fn blocks(src: &str) -> Vec<Block> {
    let mut out = Vec::new();
    let mut pos = 0;
    let mut para_start: Option<usize> = None;
    let mut para_end = 0;
    let flush = |start: usize, end: usize, out: &mut Vec<Block>| {
        let mut buf = TextBuf::default();
        buf.push(&src[start..end], start, true, false);
        if !buf.is_blank() {
            let (text, segs) = buf.take();
            let kind = if text.starts_with("- ") || text.starts_with("* ") {
                BlockKind::Line
            } else {
                BlockKind::Paragraph
            };
            out.push(Block {
                kind,
                text,
                start,
                end,
                segs,
            });
        }
    };
    for line in src.split_inclusive('\n') {
        if line.trim().is_empty() {
            if let Some(s) = para_start.take() {
                flush(s, para_end, &mut out);
            }
        } else {
            para_start.get_or_insert(pos + (line.len() - line.trim_start().len()));
            para_end = pos + line.trim_end().len();
        }
        pos += line.len();
    }
    if let Some(s) = para_start {
        flush(s, para_end, &mut out);
    }
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn paragraphs() {
        let src = "First line\ncontinues.\n\n  Second.\n";
        let b = super::blocks(src);
        assert_eq!(b.len(), 2);
        assert_eq!(b[0].text, "First line continues.");
        assert_eq!(&src[b[1].start..b[1].end], "Second.");
    }
}
