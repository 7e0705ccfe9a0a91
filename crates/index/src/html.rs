//! HTML → readable blocks (visible text and headings; `script`, `style`,
//! `nav`, `header`, `footer` dropped). Pure: no I/O.
//!
//! The HTML parser does not report source positions, so block offsets are
//! recovered by finding each block's first words in the source, in order; when
//! that fails (entities, whitespace), the block gets the position right after
//! the previous one. Offsets and line numbers of HTML chunks are therefore
//! approximate, unlike Markdown and text chunks.

use scraper::{ElementRef, Html, node::Node};

use crate::block::{Block, BlockKind, slugify};

const SKIP: &[&str] = &[
    "script", "style", "nav", "header", "footer", "noscript", "template", "head", "svg", "iframe",
    "form", "button",
];
const BLOCKS: &[&str] = &[
    "p",
    "li",
    "tr",
    "pre",
    "blockquote",
    "dd",
    "dt",
    "div",
    "section",
    "article",
    "main",
    "aside",
    "table",
    "ul",
    "ol",
    "figcaption",
    "address",
    "body",
    "details",
    "summary",
    "dl",
    "figure",
    "caption",
];

/// Elements that never make a document deeper: void elements, and those
/// whose end tag may be left out, which the parser closes by itself (the
/// next `<p>` or `<li>` closes the last).
const NOT_NESTING: &[&str] = &[
    "area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track",
    "wbr", "param", "keygen", "p", "li", "dt", "dd", "tr", "td", "th", "option", "optgroup",
    "thead", "tbody", "tfoot", "colgroup", "caption", "rb", "rt", "rtc", "rp", "html", "head",
    "body",
];
/// Elements whose content is text up to their end tag.
const RAW_TEXT: &[&str] = &[
    "script", "style", "textarea", "title", "xmp", "iframe", "noembed", "noframes", "noscript",
];

/// How deep the elements of `src` nest, read in one linear pass over its
/// tags (comments, raw text and quoted attributes skipped), before the
/// HTML parser, whose tree building costs the depth for every tag it
/// opens. An upper bound: an element left open counts until its end tag,
/// except those the parser closes itself (void elements, and a `p` or `li`
/// the next one closes); inside `svg`
/// and `math`, `<x/>` closes itself.
pub fn nesting_depth(src: &str) -> usize {
    let b = src.as_bytes();
    let (mut i, mut depth, mut max, mut foreign) = (0usize, 0usize, 0usize, 0usize);
    while let Some(lt) = b[i..].iter().position(|&c| c == b'<').map(|p| p + i) {
        i = lt + 1;
        if b[lt..].starts_with(b"<!--") {
            match find(&b[lt + 4..], b"-->") {
                Some(p) => i = lt + 4 + p + 3,
                None => break,
            }
            continue;
        }
        let closing = b.get(i) == Some(&b'/');
        let name_start = i + usize::from(closing);
        let name_len = b[name_start..]
            .iter()
            .take_while(|c| c.is_ascii_alphanumeric() || **c == b'-' || **c == b':')
            .count();
        if name_len == 0 || !b[name_start].is_ascii_alphabetic() {
            continue;
        }
        let name = src[name_start..name_start + name_len].to_ascii_lowercase();
        // The end of the tag, past quoted attribute values.
        let mut k = name_start + name_len;
        let mut quote = None;
        while k < b.len() {
            match (quote, b[k]) {
                (Some(q), c) if c == q => quote = None,
                (Some(_), _) => {}
                (None, b'"' | b'\'') => quote = Some(b[k]),
                (None, b'>') => break,
                _ => {}
            }
            k += 1;
        }
        let self_closed = k > 0 && b.get(k - 1) == Some(&b'/');
        i = (k + 1).min(b.len());
        let nests = !NOT_NESTING.contains(&name.as_str());
        let is_foreign = name == "svg" || name == "math";
        if closing {
            if nests {
                depth = depth.saturating_sub(1);
            }
            if is_foreign {
                foreign = foreign.saturating_sub(1);
            }
            continue;
        }
        if !nests || (self_closed && (foreign > 0 || is_foreign)) {
            continue;
        }
        depth += 1;
        max = max.max(depth);
        if is_foreign {
            foreign += 1;
        }
        if name == "plaintext" {
            break;
        }
        if RAW_TEXT.contains(&name.as_str()) {
            // Its text, up to `</name`, in any case.
            let end = format!("</{name}");
            match find_ignore_case(&b[i..], end.as_bytes()) {
                Some(p) => i += p,
                None => break,
            }
        }
    }
    max
}

/// The first position of `needle` in `hay`.
fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

/// The first position of `needle` (lower case) in `hay`, in any case.
fn find_ignore_case(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len())
        .position(|w| w.eq_ignore_ascii_case(needle))
}

/// As [`parse`], refusing a page whose elements nest deeper than
/// `max_depth` ([`nesting_depth`]; ingest uses [`crate::MAX_NESTING_DEPTH`]):
/// the HTML parser's time grows with the square of the depth, and no page
/// a person reads comes near.
pub fn parse_within(
    src: &str,
    max_depth: usize,
) -> Result<(Option<String>, Vec<Block>), crate::TooDeep> {
    if nesting_depth(src) > max_depth {
        return Err(crate::TooDeep {
            what: "elements",
            limit: max_depth,
        });
    }
    Ok(parse(src))
}

/// A parsed HTML page: its `<title>` (or first `h1`) and its blocks.
pub fn parse(src: &str) -> (Option<String>, Vec<Block>) {
    let doc = Html::parse_document(src);
    let title = doc
        .select(&scraper::Selector::parse("title").expect("static selector"))
        .next()
        .map(|t| collapse(&t.text().collect::<String>()))
        .filter(|t| !t.is_empty());
    let mut raw: Vec<(BlockKind, String)> = Vec::new();
    let mut cur = String::new();
    walk(doc.root_element(), &mut raw, &mut cur, &mut Vec::new());
    push_para(&mut raw, &mut cur);
    let title = title.or_else(|| {
        raw.iter()
            .find_map(|(k, t)| matches!(k, BlockKind::Heading { level: 1, .. }).then(|| t.clone()))
    });
    // Recover approximate offsets.
    let mut cursor = 0;
    let mut blocks = Vec::with_capacity(raw.len());
    for (kind, text) in raw {
        let words: Vec<&str> = text.split_whitespace().collect();
        let mut probe = String::new();
        let mut found = None;
        for n in (1..=words.len().min(3)).rev() {
            probe = words[..n].join(" ");
            if let Some(p) = src[cursor..].find(&probe) {
                found = Some(p + cursor);
                break;
            }
        }
        let start = found.unwrap_or(cursor);
        let end = match found {
            Some(s) => {
                let last: String = text.split_whitespace().last().unwrap_or("").to_string();
                src[s..]
                    .find(&last)
                    .map_or(s + probe.len(), |p| s + p + last.len())
            }
            None => cursor,
        }
        .min(src.len());
        cursor = end;
        blocks.push(Block {
            kind,
            segs: vec![(0, start)],
            text,
            start,
            end: end.max(start),
        });
    }
    (title, blocks)
}

fn walk(
    el: ElementRef<'_>,
    out: &mut Vec<(BlockKind, String)>,
    cur: &mut String,
    row: &mut Vec<String>,
) {
    for child in el.children() {
        match child.value() {
            Node::Text(t) => cur.push_str(t),
            Node::Element(e) => {
                let name = e.name();
                let Some(child_el) = ElementRef::wrap(child) else {
                    continue;
                };
                if SKIP.contains(&name) {
                    continue;
                }
                if let Some(level) = name
                    .strip_prefix('h')
                    .and_then(|l| l.parse::<u8>().ok())
                    .filter(|l| (1..=6).contains(l))
                {
                    push_para(out, cur);
                    let text = collapse(&child_el.text().collect::<String>());
                    if !text.is_empty() {
                        let anchor = e
                            .attr("id")
                            .map(str::to_string)
                            .unwrap_or_else(|| slugify(&text));
                        out.push((BlockKind::Heading { level, anchor }, text));
                    }
                } else if name == "br" {
                    cur.push(' ');
                } else if name == "img" {
                    // Images are dropped.
                } else if name == "td" || name == "th" {
                    let mut cell = String::new();
                    let mut sub = Vec::new();
                    walk(child_el, &mut sub, &mut cell, &mut Vec::new());
                    row.push(collapse(&cell));
                } else if name == "tr" {
                    push_para(out, cur);
                    let mut cells = Vec::new();
                    let mut ignored = String::new();
                    walk(child_el, out, &mut ignored, &mut cells);
                    if cells.iter().any(|c| !c.is_empty()) {
                        out.push((BlockKind::Line, cells.join(" | ")));
                    }
                } else if name == "li" {
                    push_para(out, cur);
                    let mut item = String::new();
                    walk(child_el, out, &mut item, row);
                    let item = collapse(&item);
                    if !item.is_empty() {
                        out.push((BlockKind::Line, format!("- {item}")));
                    }
                } else if BLOCKS.contains(&name) {
                    push_para(out, cur);
                    walk(child_el, out, cur, row);
                    push_para(out, cur);
                } else {
                    walk(child_el, out, cur, row);
                }
            }
            _ => {}
        }
    }
}

fn push_para(out: &mut Vec<(BlockKind, String)>, cur: &mut String) {
    let text = collapse(cur);
    cur.clear();
    if !text.is_empty() {
        out.push((BlockKind::Paragraph, text));
    }
}

fn collapse(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Removes HTML tags (and the content of `script`/`style`) from a fragment,
/// decoding the common entities. Used for HTML embedded in Markdown.
pub fn strip_tags(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(lt) = rest.find('<') {
        out.push_str(&rest[..lt]);
        let after = &rest[lt..];
        let lower = after.get(..8).unwrap_or(after).to_ascii_lowercase();
        let skip_to = if lower.starts_with("<script") {
            Some("</script>")
        } else if lower.starts_with("<style") {
            Some("</style>")
        } else if after.starts_with("<!--") {
            Some("-->")
        } else {
            None
        };
        if let Some(close) = skip_to {
            // Searched in place: lowering the rest for every comment made
            // a fragment's time grow with the square of its comments.
            rest = find_ignore_case(after.as_bytes(), close.as_bytes())
                .map_or("", |p| &after[p + close.len()..]);
            continue;
        }
        match after.find('>') {
            Some(gt) => {
                let tag = &after[1..gt];
                let name = tag
                    .trim_start_matches('/')
                    .split(|c: char| !c.is_ascii_alphanumeric())
                    .next()
                    .unwrap_or("");
                if matches!(
                    name.to_ascii_lowercase().as_str(),
                    "br" | "p" | "div" | "li" | "td" | "th" | "tr"
                ) {
                    out.push(' ');
                }
                rest = &after[gt + 1..];
            }
            None => {
                out.push_str(after);
                rest = "";
            }
        }
    }
    out.push_str(rest);
    decode_entities(&out)
}

fn decode_entities(s: &str) -> String {
    if !s.contains('&') {
        return s.to_string();
    }
    s.replace("&nbsp;", " ")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&#39;", "'")
        .replace("&rsquo;", "’")
        .replace("&mdash;", "—")
        .replace("&amp;", "&")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn visible_text_and_headings() {
        let src = "<html><head><title>Expenses</title><style>p{}</style></head><body><nav>Home | About</nav>\
                   <h1>Expenses</h1><p>Claims are <b>filed</b> within 60 days.</p><script>x()</script>\
                   <ul><li>One</li><li>Two</li></ul><table><tr><td>A</td><td>B</td></tr></table><footer>(c)</footer></body></html>";
        let (title, blocks) = parse(src);
        assert_eq!(title.as_deref(), Some("Expenses"));
        let texts: Vec<&str> = blocks.iter().map(|b| b.text.as_str()).collect();
        assert_eq!(
            texts,
            vec![
                "Expenses",
                "Claims are filed within 60 days.",
                "- One",
                "- Two",
                "A | B"
            ]
        );
        assert!(matches!(
            blocks[0].kind,
            BlockKind::Heading { level: 1, .. }
        ));
        assert!(src[blocks[1].start..blocks[1].end].starts_with("Claims are"));
    }

    #[test]
    fn nesting_depth_counts_open_elements_only() {
        assert_eq!(nesting_depth("<div><div><span>x</span></div></div>"), 3);
        // Void elements, optional end tags and self-closing foreign elements do not nest.
        assert_eq!(
            nesting_depth("<ul><li>a<li>b<li>c</ul><p>x<p>y<br><img src=x><hr>"),
            1
        );
        assert_eq!(nesting_depth("<svg><path/><path/><g><path/></g></svg>"), 2);
        // Comments, raw text and quoted attributes are not tags.
        assert_eq!(
            nesting_depth(
                "<!-- <div><div> --><script>if (a<b) '<div>'</script><a title=\"<div>\">x</a>"
            ),
            1
        );
        let deep = format!("{}x{}", "<div>".repeat(1000), "</div>".repeat(1000));
        assert_eq!(nesting_depth(&deep), 1000);
        let flat = "<div>x</div>".repeat(1000);
        assert_eq!(nesting_depth(&flat), 1);
    }

    #[test]
    fn a_page_nested_deeper_than_the_limit_is_refused_before_parsing() {
        let page = |n: usize| {
            format!(
                "<body>{}hello{}</body>",
                "<div>".repeat(n),
                "</div>".repeat(n)
            )
        };
        assert_eq!(parse_within(&page(30), 30).unwrap().1[0].text, "hello");
        let err = parse_within(&page(31), 30).unwrap_err();
        assert_eq!(
            err.to_string(),
            "nested too deep: elements more than 30 levels deep"
        );
    }

    #[test]
    fn strip_fragment() {
        assert_eq!(
            strip_tags("<a href=\"x\">chart</a> &amp; <script>bad()</script>more"),
            "chart & more"
        );
    }
}
