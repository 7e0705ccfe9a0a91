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

/// What a passages file holds, for error messages.
pub const PASSAGES_FORMAT: &str = "expected JSON: an array of passages such as \
[{\"id\": \"p1\", \"text\": \"...\", \"label\": \"...\", \"url\": \"...\"}] \
(only `text` is required; `title` or `section` may stand for `label`, `source_url` for `url`), \
an array of strings, or an object with a `passages` array";

/// The fields a passage object may have (`groundcite_core::Passage` and
/// its aliases).
const PASSAGE_FIELDS: [&str; 8] = [
    "id",
    "text",
    "label",
    "title",
    "section",
    "url",
    "source_url",
    "score",
];

/// Reads passages: a JSON array of passage objects (or of strings), or an
/// object with a `passages` array.
pub fn read_passages(path: &Path) -> Result<Vec<Passage>> {
    let text = read_text(path)?;
    parse_passages(&text).with_context(|| format!("{}: cannot read passages", path.display()))
}

/// Parses passages. A passage without an `id` is numbered `p1`, `p2`, ...
/// as strings are; a field no passage has is an error naming it and the
/// field it is nearest to (`lable` → `label`), never silently dropped.
pub fn parse_passages(text: &str) -> Result<Vec<Passage>> {
    let value: serde_json::Value = serde_json::from_str(text)
        .map_err(|e| anyhow::anyhow!("not valid JSON ({e}); {PASSAGES_FORMAT}"))?;
    let list = match value {
        serde_json::Value::Array(items) => items,
        serde_json::Value::Object(mut map) => match map.remove("passages") {
            Some(serde_json::Value::Array(items)) => items,
            _ => bail!("{PASSAGES_FORMAT}"),
        },
        _ => bail!("{PASSAGES_FORMAT}"),
    };
    list.into_iter()
        .enumerate()
        .map(|(i, item)| {
            let n = i + 1;
            match item {
                serde_json::Value::String(text) => Ok(Passage {
                    id: format!("p{n}"),
                    text,
                    source_url: String::new(),
                    section: String::new(),
                    score: None,
                }),
                serde_json::Value::Object(mut map) => {
                    if let Some(key) = map.keys().find(|k| !PASSAGE_FIELDS.contains(&k.as_str())) {
                        bail!("passage {n}: unknown field `{key}`{}", suggest(key));
                    }
                    map.entry("id")
                        .or_insert_with(|| serde_json::Value::String(format!("p{n}")));
                    serde_json::from_value::<Passage>(serde_json::Value::Object(map))
                        .map_err(|e| anyhow::anyhow!("passage {n}: {e}; {PASSAGES_FORMAT}"))
                }
                _ => bail!("passage {n}: {PASSAGES_FORMAT}"),
            }
        })
        .collect()
}

/// "; did you mean `label`?" for the nearest passage field, if any is near.
fn suggest(key: &str) -> String {
    PASSAGE_FIELDS
        .iter()
        .map(|known| (strsim::jaro_winkler(key, known), known))
        .filter(|(score, _)| *score >= 0.8)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, known)| format!("; did you mean `{known}`?"))
        .unwrap_or_else(|| format!(" (a passage has {})", PASSAGE_FIELDS.join(", ")))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 14: `title` is a label; a misspelt field is an error with the
    /// field meant; text that is not JSON says what format is expected.
    #[test]
    fn passages_read_title_and_reject_unknown_fields() {
        let p = parse_passages(r#"[{"title": "Leave", "text": "13 days."}, "Plain."]"#).unwrap();
        assert_eq!((p[0].id.as_str(), p[0].section.as_str()), ("p1", "Leave"));
        assert_eq!((p[1].id.as_str(), p[1].text.as_str()), ("p2", "Plain."));
        let err = parse_passages(r#"[{"id": "a", "text": "x", "lable": "L"}]"#).unwrap_err();
        assert!(
            format!("{err}").contains("unknown field `lable`; did you mean `label`?"),
            "{err}"
        );
        let err = parse_passages("hello").unwrap_err().to_string();
        assert!(err.starts_with("not valid JSON"), "{err}");
        assert!(err.contains("an array of passages"), "{err}");
        let err = parse_passages(r#"{"docs": []}"#).unwrap_err().to_string();
        assert!(err.contains("an array of passages"), "{err}");
    }
}
