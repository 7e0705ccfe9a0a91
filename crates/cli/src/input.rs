//! Reading inputs: files, JSON lines, passages. Every error names the file
//! (and line) it came from.

use std::path::Path;

use anyhow::{Context, Result, bail};
use groundcite_core::Passage;
use groundcite_core::case::Case;

/// The largest input file (or stream, such as `/dev/stdin`) read: a larger
/// one, or an endless one (`/dev/zero`), is an error, not a hang.
pub const MAX_INPUT_BYTES: u64 = 256 * 1024 * 1024;

/// Reads at most [`MAX_INPUT_BYTES`] of a file, naming it on failure.
pub fn read_bytes(path: &Path) -> Result<Vec<u8>> {
    use std::io::Read;
    let file =
        std::fs::File::open(path).with_context(|| format!("cannot read {}", path.display()))?;
    let mut bytes = Vec::new();
    file.take(MAX_INPUT_BYTES + 1)
        .read_to_end(&mut bytes)
        .with_context(|| format!("cannot read {}", path.display()))?;
    if bytes.len() as u64 > MAX_INPUT_BYTES {
        bail!(
            "{}: larger than {} MiB: not read",
            path.display(),
            MAX_INPUT_BYTES / (1024 * 1024)
        );
    }
    Ok(bytes)
}

/// Reads a whole file as UTF-8, naming the file on failure.
pub fn read_text(path: &Path) -> Result<String> {
    let bytes = read_bytes(path)?;
    String::from_utf8(bytes).map_err(|e| {
        anyhow::anyhow!(
            "{}: not valid UTF-8 (first bad byte at offset {})",
            path.display(),
            e.utf8_error().valid_up_to()
        )
    })
}

/// One line of a JSON-lines file: its 1-based number and the parsed case
/// or the error, naming file and line.
pub struct CaseLine {
    pub line: usize,
    pub case: std::result::Result<Case, String>,
    /// The `id` field, when it could be read even though the case failed.
    pub id: Option<String>,
}

/// Reads a JSONL case file. Blank lines are skipped; every other line gives
/// a case or an error, so one bad line never stops the others.
pub fn read_cases(path: &Path) -> Result<Vec<CaseLine>> {
    let bytes = read_bytes(path)?;
    let mut out = Vec::new();
    for (i, raw) in bytes.split(|&b| b == b'\n').enumerate() {
        let line = i + 1;
        let raw = raw.strip_suffix(b"\r").unwrap_or(raw);
        if raw.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        let where_ = format!("{}:{line}", path.display());
        let Ok(text) = std::str::from_utf8(raw) else {
            out.push(CaseLine {
                line,
                case: Err(format!("{where_}: not valid UTF-8")),
                id: None,
            });
            continue;
        };
        let id = serde_json::from_str::<serde_json::Value>(text)
            .ok()
            .and_then(|v| v.get("id").and_then(|id| id.as_str().map(str::to_string)));
        let case = match serde_json::from_str::<Case>(text) {
            Ok(case) => case
                .validate()
                .map(|()| case)
                .map_err(|e| format!("{where_}: {e}")),
            Err(e) => Err(format!("{where_}: malformed case: {e}")),
        };
        out.push(CaseLine { line, case, id });
    }
    Ok(out)
}

/// Reads passages: a JSON array of passage objects (or of strings), or an
/// object with a `passages` array.
pub fn read_passages(path: &Path) -> Result<Vec<Passage>> {
    let text = read_text(path)?;
    parse_passages(&text).with_context(|| format!("{}: cannot read passages", path.display()))
}

pub fn parse_passages(text: &str) -> Result<Vec<Passage>> {
    let value: serde_json::Value = serde_json::from_str(text).context("malformed JSON")?;
    let list = match &value {
        serde_json::Value::Array(items) => items.clone(),
        serde_json::Value::Object(map) => match map.get("passages") {
            Some(serde_json::Value::Array(items)) => items.clone(),
            _ => bail!("expected an array of passages or an object with a `passages` array"),
        },
        _ => bail!("expected an array of passages or an object with a `passages` array"),
    };
    list.into_iter()
        .enumerate()
        .map(|(i, item)| match item {
            serde_json::Value::String(text) => Ok(Passage {
                id: format!("p{}", i + 1),
                text,
                source_url: String::new(),
                section: String::new(),
                score: None,
            }),
            other => serde_json::from_value::<Passage>(other)
                .with_context(|| format!("passage {}", i + 1)),
        })
        .collect()
}
