//! Markdown → readable blocks with source offsets. Pure: no I/O.
//!
//! The input is the whole file with its front matter and template tags already
//! blanked (see [`crate::template`]), so every offset pulldown-cmark reports is
//! an offset into the original file. Links become their text, images are
//! dropped, emphasis markers disappear, list items stay one per block with
//! `- ` or `1. `, table rows become `cell | cell`, inline and block HTML is
//! reduced to its visible text.

use pulldown_cmark::{Event, HeadingLevel, Options, Parser, Tag, TagEnd};

use crate::block::{Block, BlockKind, TextBuf, slugify};
use crate::html::strip_tags;

/// Parses prepared Markdown (same length as the source) into blocks, at any
/// nesting depth (linear in the input whatever its depth).
pub fn blocks(prepared: &str) -> Vec<Block> {
    parse(prepared, usize::MAX).unwrap_or_default()
}

/// As [`blocks`], refusing a document whose lists and block quotes nest
/// deeper than `max_depth` (ingest uses [`crate::MAX_NESTING_DEPTH`]): no
/// document a person writes comes near, and such a file is skipped with
/// this error rather than indexed.
pub fn blocks_within(prepared: &str, max_depth: usize) -> Result<Vec<Block>, crate::TooDeep> {
    parse(prepared, max_depth)
}

fn parse(prepared: &str, max_depth: usize) -> Result<Vec<Block>, crate::TooDeep> {
    let opts = Options::ENABLE_TABLES
        | Options::ENABLE_STRIKETHROUGH
        | Options::ENABLE_TASKLISTS
        | Options::ENABLE_HEADING_ATTRIBUTES
        | Options::ENABLE_FOOTNOTES;
    let mut b = Builder {
        src: prepared,
        ..Default::default()
    };
    // Open lists and block quotes.
    let mut depth = 0usize;
    for (event, range) in Parser::new_ext(prepared, opts).into_offset_iter() {
        match &event {
            Event::Start(Tag::List(_) | Tag::BlockQuote(_)) => {
                depth += 1;
                if depth > max_depth {
                    return Err(crate::TooDeep {
                        what: "lists and block quotes",
                        limit: max_depth,
                    });
                }
            }
            Event::End(TagEnd::List(_) | TagEnd::BlockQuote(_)) => {
                depth = depth.saturating_sub(1);
            }
            _ => {}
        }
        b.event(event, range);
    }
    b.flush();
    Ok(b.out)
}

#[derive(Default)]
struct Builder<'a> {
    src: &'a str,
    out: Vec<Block>,
    buf: TextBuf,
    kind: Option<BlockKind>,
    start: usize,
    end: usize,
    /// Ordered-list counters (None for bullets), one per nesting level.
    lists: Vec<Option<u64>>,
    heading: Option<(u8, Option<String>)>,
    image_depth: usize,
    code: bool,
    in_html_block: bool,
    table_cells: Vec<String>,
    in_cell: bool,
    cell_buf: TextBuf,
}

impl Builder<'_> {
    fn begin(&mut self, kind: BlockKind, start: usize, end: usize) {
        self.flush();
        self.kind = Some(kind);
        self.start = start;
        self.end = end;
    }

    fn flush(&mut self) {
        let Some(kind) = self.kind.take() else {
            self.buf = TextBuf::default();
            return;
        };
        if self.buf.is_blank() {
            self.buf = TextBuf::default();
            return;
        }
        let (text, segs) = self.buf.take();
        let text = if text.contains("](") {
            unwrap_escaped_links(&text)
        } else {
            text
        };
        let text_start = text.len() - text.trim_start().len();
        let (text, segs) = if text_start > 0 {
            let segs = segs
                .into_iter()
                .map(|(t, s)| (t.saturating_sub(text_start), s))
                .collect();
            (text[text_start..].to_string(), segs)
        } else {
            (text, segs)
        };
        // Trim the range to the text actually emitted (no trailing blank lines).
        let mut end = self.end.min(self.src.len());
        while end > self.start && self.src.as_bytes()[end - 1].is_ascii_whitespace() {
            end -= 1;
        }
        self.out.push(Block {
            kind,
            text,
            start: self.start,
            end,
            segs,
        });
    }

    fn ensure_block(&mut self, range: &std::ops::Range<usize>) {
        if self.kind.is_none() {
            self.kind = Some(BlockKind::Paragraph);
            self.start = range.start;
            self.end = range.end;
        }
        self.end = self.end.max(range.end);
    }

    fn text(&mut self, t: &str, range: std::ops::Range<usize>) {
        if self.image_depth > 0 {
            return;
        }
        let exact = self.src.get(range.clone()) == Some(t);
        if self.in_cell {
            self.cell_buf.push(t, range.start, exact, false);
            return;
        }
        self.ensure_block(&range);
        let keep = self.code;
        self.buf.push(t, range.start, exact, keep);
    }

    fn event(&mut self, event: Event<'_>, range: std::ops::Range<usize>) {
        match event {
            Event::Start(tag) => self.start_tag(tag, range),
            Event::End(tag) => self.end_tag(tag, range),
            Event::Text(t) => {
                if self.in_html_block {
                    let visible = strip_tags(&t);
                    self.text(&visible, range);
                } else {
                    self.text(&t, range);
                }
            }
            Event::Code(t) => self.text(&t, range),
            Event::InlineMath(t) | Event::DisplayMath(t) => self.text(&t, range),
            Event::Html(h) | Event::InlineHtml(h) => {
                let visible = strip_tags(&h);
                if h.trim_start().to_ascii_lowercase().starts_with("<br") {
                    self.text(" ", range);
                } else if !visible.trim().is_empty() {
                    self.text(&visible, range);
                }
            }
            Event::SoftBreak | Event::HardBreak => {
                if self.in_cell {
                    self.cell_buf.push(" ", range.start, false, false);
                } else if self.kind.is_some() {
                    self.buf.push(
                        if self.code { "\n" } else { " " },
                        range.start,
                        false,
                        self.code,
                    );
                }
            }
            Event::TaskListMarker(done) => {
                self.ensure_block(&range);
                self.buf
                    .push_synthetic(if done { "[x] " } else { "[ ] " }, range.start);
            }
            Event::Rule => self.flush(),
            Event::FootnoteReference(_) => {}
        }
    }

    fn start_tag(&mut self, tag: Tag<'_>, range: std::ops::Range<usize>) {
        match tag {
            Tag::Heading { level, id, .. } => {
                let level = heading_level(level);
                self.heading = Some((level, id.map(|s| s.to_string())));
                self.begin(
                    BlockKind::Heading {
                        level,
                        anchor: String::new(),
                    },
                    range.start,
                    range.end,
                );
            }
            Tag::Paragraph => {
                if self.lists.is_empty() || self.kind.is_none() {
                    if self.lists.is_empty() {
                        self.begin(BlockKind::Paragraph, range.start, range.end);
                    } else {
                        self.ensure_block(&range);
                    }
                } else {
                    // A second paragraph in the same list item: keep it in the item.
                    self.end = self.end.max(range.end);
                    self.buf.push(" ", range.start, false, false);
                }
            }
            Tag::List(first) => {
                self.flush();
                self.lists.push(first);
            }
            Tag::Item => {
                self.begin(BlockKind::Line, range.start, range.end);
                // An item starts its own block, so it carries no indentation
                // for its depth (which `flush` would trim anyway): the text of
                // a list nested n deep stays linear in n.
                let marker = match self.lists.last_mut() {
                    Some(Some(n)) => {
                        let m = format!("{n}. ");
                        *n += 1;
                        m
                    }
                    _ => "- ".to_string(),
                };
                self.buf.push_synthetic(&marker, range.start);
            }
            Tag::CodeBlock(_) => {
                self.begin(BlockKind::Line, range.start, range.end);
                self.code = true;
            }
            Tag::HtmlBlock => {
                self.begin(BlockKind::Paragraph, range.start, range.end);
                self.in_html_block = true;
            }
            Tag::Table(_) => self.flush(),
            Tag::TableHead | Tag::TableRow => {
                self.begin(BlockKind::Line, range.start, range.end);
                self.table_cells.clear();
            }
            Tag::TableCell => {
                self.in_cell = true;
                self.cell_buf = TextBuf::default();
            }
            Tag::Image { .. } => self.image_depth += 1,
            Tag::BlockQuote(_) | Tag::FootnoteDefinition(_) | Tag::DefinitionList => self.flush(),
            Tag::DefinitionListTitle | Tag::DefinitionListDefinition => {
                self.begin(BlockKind::Paragraph, range.start, range.end);
            }
            _ => {}
        }
    }

    fn end_tag(&mut self, tag: TagEnd, range: std::ops::Range<usize>) {
        match tag {
            TagEnd::Heading(_) => {
                let (level, id) = self.heading.take().unwrap_or((1, None));
                let anchor = id.unwrap_or_else(|| slugify(&self.buf.text));
                self.kind = Some(BlockKind::Heading { level, anchor });
                self.end = range.end;
                self.flush();
            }
            TagEnd::Paragraph if self.lists.is_empty() => {
                self.end = range.end;
                self.flush();
            }
            TagEnd::Item => {
                if self.kind.is_some() {
                    self.end = self.end.max(range.end);
                }
                self.flush();
            }
            TagEnd::List(_) => {
                self.flush();
                self.lists.pop();
            }
            TagEnd::CodeBlock => {
                self.end = range.end;
                self.flush();
                self.code = false;
            }
            TagEnd::HtmlBlock => {
                self.end = range.end;
                self.flush();
                self.in_html_block = false;
            }
            TagEnd::TableCell => {
                self.in_cell = false;
                let (cell, _) = self.cell_buf.take();
                self.table_cells.push(cell.trim().to_string());
            }
            TagEnd::TableHead | TagEnd::TableRow => {
                if self.table_cells.iter().any(|c| !c.is_empty()) {
                    let row = self.table_cells.join(" | ");
                    self.buf.push_synthetic(&row, range.start);
                }
                self.table_cells.clear();
                self.end = range.end;
                self.flush();
            }
            TagEnd::Image => self.image_depth = self.image_depth.saturating_sub(1),
            TagEnd::BlockQuote(_) | TagEnd::FootnoteDefinition => self.flush(),
            TagEnd::DefinitionListTitle | TagEnd::DefinitionListDefinition => {
                self.end = range.end;
                self.flush();
            }
            _ => {}
        }
    }
}

/// `\[text]({% page "x" %})` (an escaped bracket in the source) leaves
/// `[text]( )` in the text once the tag is blanked: reduce it to `text`.
fn unwrap_escaped_links(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(p) = rest.find("](") {
        let after = &rest[p + 2..];
        let close = after.find(')');
        let empty = close.is_some_and(|c| after[..c].trim().is_empty());
        match (rest[..p].rfind('['), close) {
            (Some(open), Some(c)) if empty => {
                out.push_str(&rest[..open]);
                out.push_str(&rest[open + 1..p]);
                rest = &after[c + 1..];
            }
            _ => {
                out.push_str(&rest[..p + 2]);
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

fn heading_level(level: HeadingLevel) -> u8 {
    match level {
        HeadingLevel::H1 => 1,
        HeadingLevel::H2 => 2,
        HeadingLevel::H3 => 3,
        HeadingLevel::H4 => 4,
        HeadingLevel::H5 => 5,
        HeadingLevel::H6 => 6,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(md: &str) -> Vec<String> {
        blocks(md).into_iter().map(|b| b.text).collect()
    }

    #[test]
    fn links_emphasis_images() {
        let t = texts("Use **this** [get reimbursement](   ) now ![alt](x.png) _ok_.\n");
        assert_eq!(t, vec!["Use this get reimbursement now ok."]);
    }

    #[test]
    fn lists_and_tables() {
        let t = texts("- one\n- two\n\n1. a\n2. b\n\n| A | B |\n|---|---|\n| 1 | 2 |\n");
        assert_eq!(t, vec!["- one", "- two", "1. a", "2. b", "A | B", "1 | 2"]);
    }

    #[test]
    fn headings_have_anchors_and_offsets() {
        let md = "intro\n\n## Sick leave, too\n\nBody text.\n";
        let b = blocks(md);
        assert_eq!(
            b[1].kind,
            BlockKind::Heading {
                level: 2,
                anchor: "sick-leave-too".into()
            }
        );
        assert_eq!(&md[b[2].start..b[2].end], "Body text.");
        assert_eq!(b[1].text, "Sick leave, too");
    }

    #[test]
    fn escaped_links_with_template_targets() {
        assert_eq!(
            texts("The \\[Promotions page](          ) explains.\n"),
            vec!["The Promotions page explains."]
        );
    }

    #[test]
    fn nested_items_are_read_without_their_depth_indentation() {
        assert_eq!(
            texts("- one\n  - two\n    - three\n"),
            vec!["- one", "- two", "- three"]
        );
    }

    #[test]
    fn a_document_nested_deeper_than_the_limit_is_refused() {
        let deep = format!("{}hello\n", "- ".repeat(20));
        assert!(blocks_within(&deep, 20).is_ok());
        let err = blocks_within(&deep, 19).unwrap_err();
        assert_eq!(
            err.to_string(),
            "nested too deep: lists and block quotes more than 19 levels deep"
        );
        let quotes = format!("{}hello\n", "> ".repeat(20));
        assert!(blocks_within(&quotes, 19).is_err());
        assert!(blocks_within(&quotes, 20).is_ok());
    }

    #[test]
    fn html_inline_reduced_to_text() {
        let t = texts("Use this <a href=\"x\">leave chart</a>.\n");
        assert_eq!(t, vec!["Use this leave chart."]);
    }
}
