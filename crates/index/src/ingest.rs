//! From one document's bytes to its chunks. Pure: no I/O.

use std::path::Path;

use serde_json::Value;

use crate::Chunk;
use crate::block::Block;
use crate::chunk::{ChunkOptions, chunk_blocks};
use crate::{frontmatter, html, markdown, plain, template, url};

/// How pages are turned into chunks and URLs. Every default is documented on
/// its field; [`IngestOptions::handbook`] is the preset for the TTS handbook.
#[derive(Debug, Clone, PartialEq)]
pub struct IngestOptions {
    /// URL template over the relative path (after `strip_prefix`), with
    /// `{path}` (no extension, no trailing `index`) and `{file}`. Default:
    /// none, which gives `file://` URLs of the absolute path (or
    /// `doc://{root}/{path}` for in-memory documents).
    pub url_template: Option<String>,
    /// A prefix removed from relative paths (for ids and URLs) when present,
    /// e.g. `pages/`. Default: none.
    pub strip_prefix: Option<String>,
    /// Base URL that relative front-matter permalinks are joined to. Without
    /// it, relative permalinks are ignored. Default: none.
    pub base_url: Option<String>,
    /// A chunk is closed once its text reaches this many bytes. Default 800.
    pub chunk_target_bytes: usize,
    /// A chunk never exceeds this many bytes (unless one sentence does).
    /// Default 1200.
    pub chunk_max_bytes: usize,
    /// Tantivy writer memory budget in bytes. Default 50 MB.
    pub writer_memory_bytes: usize,
    /// Tantivy indexing threads (1 or 2). Default 2: on a 2-core machine,
    /// 100,000 chunks ingest at 43,900 chunks/s with two against 35,400
    /// with one (`bench/scale.sh`); search is a little slower over the
    /// extra segment (BM25 p99 3.7 against 3.0 ms).
    pub writer_threads: usize,
}

impl Default for IngestOptions {
    fn default() -> Self {
        IngestOptions {
            url_template: None,
            strip_prefix: None,
            base_url: None,
            chunk_target_bytes: 800,
            chunk_max_bytes: 1200,
            writer_memory_bytes: 50_000_000,
            writer_threads: 2,
        }
    }
}

impl IngestOptions {
    /// The TTS handbook (`corpora/tts-handbook`): ids relative to `pages/`,
    /// URLs `https://handbook.tts.gsa.gov/{path}/`.
    pub fn handbook() -> Self {
        IngestOptions {
            url_template: Some("https://handbook.tts.gsa.gov/{path}/".into()),
            strip_prefix: Some("pages/".into()),
            base_url: Some("https://handbook.tts.gsa.gov".into()),
            ..Default::default()
        }
    }

    /// A fingerprint of everything that changes the chunks: stored in the
    /// manifest so that changing options re-ingests every file.
    /// What makes a file's chunks different besides its bytes: the options
    /// and the chunker's version (bump `v2` whenever cleaning or chunking
    /// output changes, so re-ingest rewrites every file).
    pub fn fingerprint(&self) -> String {
        format!(
            "v2|{:?}|{:?}|{:?}|{}|{}",
            self.url_template,
            self.strip_prefix,
            self.base_url,
            self.chunk_target_bytes,
            self.chunk_max_bytes
        )
    }

    /// The id/URL path for a path relative to its root.
    pub fn display_path(&self, rel: &str) -> String {
        let rel = rel.replace('\\', "/");
        match &self.strip_prefix {
            Some(p) if !p.is_empty() => rel
                .strip_prefix(p.as_str())
                .map(str::to_string)
                .unwrap_or(rel),
            _ => rel,
        }
    }
}

/// The deepest nesting ingest reads: lists and block quotes in Markdown,
/// elements in HTML. A document nested deeper is not indexed: its file is
/// listed with a [`TooDeep`] error and the others are ingested. Generated
/// pages nest a few dozen elements deep; the HTML parser's time grows with
/// the square of the depth (10,000 nested `<div>`s: half a second; 200,000:
/// minutes).
pub const MAX_NESTING_DEPTH: usize = 512;

/// A document nested deeper than ingest reads ([`MAX_NESTING_DEPTH`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TooDeep {
    /// What nests: `elements`, `lists and block quotes`.
    pub what: &'static str,
    /// The deepest nesting read ([`MAX_NESTING_DEPTH`]).
    pub limit: usize,
}

impl std::fmt::Display for TooDeep {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "nested too deep: {} more than {} levels deep",
            self.what, self.limit
        )
    }
}

impl std::error::Error for TooDeep {}

/// A document format, chosen by file extension.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// Markdown: `.md`, `.markdown`, `.mdown`, `.mkd`.
    Markdown,
    /// HTML: `.html`, `.htm`.
    Html,
    /// Plain text: `.txt`, `.text`.
    Text,
}

impl Format {
    /// `None` for extensions that are not ingested.
    pub fn from_path(path: &str) -> Option<Format> {
        let ext = path.rsplit_once('.').map(|(_, e)| e.to_ascii_lowercase())?;
        match ext.as_str() {
            "md" | "markdown" | "mdown" | "mkd" => Some(Format::Markdown),
            "html" | "htm" => Some(Format::Html),
            "txt" | "text" => Some(Format::Text),
            _ => None,
        }
    }
}

/// Turns one document into chunks. `rel_path` is relative to its root (before
/// `strip_prefix`); `fallback_url` gives the URL when neither a permalink nor a
/// template applies. Errors are messages for the ingest summary.
pub fn prepare_document(
    rel_path: &str,
    contents: &str,
    opts: &IngestOptions,
    fallback_url: impl FnOnce() -> String,
) -> Result<Vec<Chunk>, String> {
    let format = Format::from_path(rel_path).unwrap_or(Format::Text);
    let path = opts.display_path(rel_path);
    let (title, permalink, metadata, blocks): (Option<String>, Option<String>, Value, Vec<Block>) =
        match format {
            Format::Markdown | Format::Text => {
                let fm = frontmatter::parse(contents)?;
                // Blank the front matter (keeping newlines) so offsets stay absolute.
                let mut prepared: String = contents.as_bytes()[..fm.body_start]
                    .iter()
                    .map(|&b| if b == b'\n' { '\n' } else { ' ' })
                    .collect();
                let body = &contents[fm.body_start..];
                let blocks = if format == Format::Markdown {
                    prepared.push_str(&template::blank_template_tags(body));
                    markdown::blocks_within(&prepared, MAX_NESTING_DEPTH)
                        .map_err(|e| e.to_string())?
                } else {
                    prepared.push_str(body);
                    plain::blocks(&prepared)
                };
                let title = fm.title.or_else(|| {
                    blocks.iter().find_map(|b| {
                        matches!(b.kind, crate::block::BlockKind::Heading { level: 1, .. })
                            .then(|| b.text.clone())
                    })
                });
                (title, fm.permalink, fm.metadata, blocks)
            }
            Format::Html => {
                let (title, blocks) =
                    html::parse_within(contents, MAX_NESTING_DEPTH).map_err(|e| e.to_string())?;
                (title, None, Value::Object(Default::default()), blocks)
            }
        };
    let title = title.unwrap_or_else(|| {
        Path::new(&path)
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default()
    });
    let page_url = url::page_url(
        &path,
        permalink.as_deref(),
        opts.base_url.as_deref(),
        opts.url_template.as_deref(),
        fallback_url,
    );
    let chunk_opts = ChunkOptions {
        target_bytes: opts.chunk_target_bytes,
        max_bytes: opts.chunk_max_bytes,
    };
    let drafts = chunk_blocks(&blocks, Some(&title), chunk_opts);
    let lines = LineIndex::new(contents);
    Ok(drafts
        .into_iter()
        .map(|d| {
            let first = lines.line_of(d.start);
            let last = lines.line_of(d.end.saturating_sub(1).max(d.start));
            Chunk {
                id: format!("{path}#L{first}-L{last}"),
                path: path.clone(),
                title: title.clone(),
                section: d.section,
                source_url: url::with_anchor(&page_url, d.anchor.as_deref()),
                text: d.text,
                start: d.start,
                end: d.end,
                metadata: metadata.clone(),
            }
        })
        .collect())
}

/// 1-based line numbers of byte offsets.
struct LineIndex {
    starts: Vec<usize>,
}

impl LineIndex {
    fn new(s: &str) -> Self {
        let mut starts = vec![0];
        starts.extend(
            s.bytes()
                .enumerate()
                .filter(|&(_, b)| b == b'\n')
                .map(|(i, _)| i + 1),
        );
        LineIndex { starts }
    }

    fn line_of(&self, offset: usize) -> usize {
        self.starts.partition_point(|&s| s <= offset)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_lines_offsets_urls() {
        let src = "---\ntitle: PIV card\n---\n\n_a.k.a. badge._\n\n## Getting issued a card\n\nYour PIV opens doors.\nEmail [us](mailto:x@y).\n";
        let chunks = prepare_document(
            "pages/getting-started/piv.md",
            src,
            &IngestOptions::handbook(),
            || unreachable!(),
        )
        .unwrap();
        assert_eq!(chunks.len(), 2);
        assert_eq!(chunks[0].id, "getting-started/piv.md#L5-L5");
        assert_eq!(chunks[0].section, "PIV card");
        assert_eq!(
            chunks[0].source_url,
            "https://handbook.tts.gsa.gov/getting-started/piv/"
        );
        assert_eq!(chunks[1].id, "getting-started/piv.md#L7-L10");
        assert_eq!(chunks[1].section, "Getting issued a card");
        assert_eq!(
            chunks[1].source_url,
            "https://handbook.tts.gsa.gov/getting-started/piv/#getting-issued-a-card"
        );
        assert_eq!(
            chunks[1].text,
            "## Getting issued a card\n\nYour PIV opens doors. Email us."
        );
        assert!(src[chunks[1].start..chunks[1].end].starts_with("## Getting"));
        assert!(src[chunks[1].start..chunks[1].end].ends_with("(mailto:x@y)."));
    }

    #[test]
    fn multibyte_front_matter_keeps_offsets() {
        let src = "---\ntitle: Café — guide\n---\nBody here.\n";
        let chunks = prepare_document("a.md", src, &IngestOptions::default(), || {
            "file:///a.md".into()
        })
        .unwrap();
        assert_eq!(&src[chunks[0].start..chunks[0].end], "Body here.");
        assert_eq!(chunks[0].title, "Café — guide");
    }
}
