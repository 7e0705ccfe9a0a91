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

/// One non-blank line of a JSON-lines stream, not yet parsed: its 1-based
/// number and its bytes (without the line break).
pub struct RawLine {
    pub line: usize,
    pub bytes: Vec<u8>,
}

/// The non-blank lines of a JSON-lines stream, read one at a time, so a
/// file of any size is read in bounded memory. A line longer than
/// [`MAX_INPUT_BYTES`] (or an endless one, such as `/dev/zero`) is an
/// error naming the file and line, as is a read error.
pub struct JsonLines<R> {
    reader: R,
    name: String,
    line: usize,
    done: bool,
    /// The longest line read ([`MAX_INPUT_BYTES`]).
    max_line: u64,
}

impl<R: std::io::BufRead> JsonLines<R> {
    /// The lines of `reader`; `name` (the file) appears in every error.
    pub fn new(reader: R, name: impl Into<String>) -> JsonLines<R> {
        JsonLines {
            reader,
            name: name.into(),
            line: 0,
            done: false,
            max_line: MAX_INPUT_BYTES,
        }
    }

    /// The file's name, as errors give it.
    pub fn name(&self) -> &str {
        &self.name
    }
}

impl<R: std::io::BufRead> Iterator for JsonLines<R> {
    type Item = Result<RawLine>;

    fn next(&mut self) -> Option<Result<RawLine>> {
        use std::io::{BufRead, Read};
        while !self.done {
            self.line += 1;
            let mut bytes = Vec::new();
            let read = (&mut self.reader)
                .take(self.max_line + 1)
                .read_until(b'\n', &mut bytes);
            match read {
                Err(e) => {
                    self.done = true;
                    return Some(Err(anyhow::Error::new(e)
                        .context(format!("cannot read {} (line {})", self.name, self.line))));
                }
                Ok(0) => self.done = true,
                Ok(_) => {
                    if bytes.last() == Some(&b'\n') {
                        bytes.pop();
                    } else if bytes.len() as u64 > self.max_line {
                        self.done = true;
                        return Some(Err(anyhow::anyhow!(
                            "{}:{}: a line longer than {} bytes: not read",
                            self.name,
                            self.line,
                            self.max_line
                        )));
                    }
                    if bytes.last() == Some(&b'\r') {
                        bytes.pop();
                    }
                    if !bytes.iter().all(u8::is_ascii_whitespace) {
                        return Some(Ok(RawLine {
                            line: self.line,
                            bytes,
                        }));
                    }
                }
            }
        }
        None
    }
}

/// Opens a JSONL case file (`-` is standard input) as its lines.
pub fn case_lines(path: &Path) -> Result<JsonLines<Box<dyn std::io::BufRead + Send>>> {
    if path == Path::new("-") {
        let stdin: Box<dyn std::io::BufRead + Send> =
            Box::new(std::io::BufReader::new(std::io::stdin()));
        return Ok(JsonLines::new(stdin, "<stdin>"));
    }
    let file =
        std::fs::File::open(path).with_context(|| format!("cannot read {}", path.display()))?;
    let reader: Box<dyn std::io::BufRead + Send> =
        Box::new(std::io::BufReader::with_capacity(1 << 16, file));
    Ok(JsonLines::new(reader, path.display().to_string()))
}

/// Parses one line of a case file: the case, or the error naming `name`
/// and the line (with the `id`, when it could be read).
pub fn parse_case(name: &str, raw: &RawLine) -> CaseLine {
    let line = raw.line;
    let where_ = format!("{name}:{line}");
    let Ok(text) = std::str::from_utf8(&raw.bytes) else {
        return CaseLine {
            line,
            case: Err(format!("{where_}: not valid UTF-8")),
            id: None,
        };
    };
    let case = match serde_json::from_str::<Case>(text) {
        Ok(case) => case
            .validate()
            .map(|()| case)
            .map_err(|e| format!("{where_}: {e}")),
        Err(e) => Err(format!("{where_}: malformed case: {e}")),
    };
    // The id of a case that failed, for its error line.
    let id = match &case {
        Ok(c) => Some(c.id.clone()),
        Err(_) => serde_json::from_str::<serde_json::Value>(text)
            .ok()
            .and_then(|v| v.get("id").and_then(|id| id.as_str().map(str::to_string))),
    };
    CaseLine { line, case, id }
}

/// Reads a JSONL case file (`-`: standard input) one case at a time.
/// Blank lines are skipped; every other line gives a case or an error, so
/// one bad line never stops the others. A read error ends the iteration.
pub fn read_cases(path: &Path) -> Result<impl Iterator<Item = Result<CaseLine>>> {
    let lines = case_lines(path)?;
    let name = lines.name().to_string();
    Ok(lines.map(move |raw| raw.map(|raw| parse_case(&name, &raw))))
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
    let passages = list
        .into_iter()
        .enumerate()
        .map(|(i, item)| {
            let n = i + 1;
            if let serde_json::Value::Object(map) = &item
                && let Some(key) = map.keys().find(|k| !PASSAGE_FIELDS.contains(&k.as_str()))
            {
                bail!("passage {n}: unknown field `{key}`{}", suggest(key));
            }
            // One element as the HTTP API reads it (a string, or an object
            // whose id may be left out); numbered once the list is read.
            groundcite_core::passage::deserialize_one(item)
                .map_err(|e| anyhow::anyhow!("passage {n}: {e}; {PASSAGES_FORMAT}"))
        })
        .collect::<Result<Vec<Passage>>>()?;
    Ok(groundcite_core::passage::number_unnamed(passages))
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

    /// `title` is a label; a misspelt field is an error with the
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

    fn lines_of(text: &[u8], max_line: u64) -> Vec<Result<(usize, String), String>> {
        let mut lines = JsonLines::new(text, "f.jsonl");
        lines.max_line = max_line;
        lines
            .map(|l| {
                l.map(|l| (l.line, String::from_utf8(l.bytes).unwrap()))
                    .map_err(|e| format!("{e:#}"))
            })
            .collect()
    }

    #[test]
    fn json_lines_skip_blank_lines_and_keep_numbers() {
        let got = lines_of(b"a\r\n\n  \nb\nc", 100);
        let want: Vec<Result<(usize, String), String>> = vec![
            Ok((1, "a".to_string())),
            Ok((4, "b".to_string())),
            Ok((5, "c".to_string())),
        ];
        assert_eq!(got, want);
    }

    #[test]
    fn a_line_too_long_is_an_error_after_the_lines_before_it() {
        let got = lines_of(b"ab\n0123456789\ncd\n", 5);
        assert_eq!(got.len(), 2, "{got:?}: reading stops at the error");
        assert_eq!(got[0], Ok((1, "ab".to_string())));
        assert_eq!(
            got[1],
            Err("f.jsonl:2: a line longer than 5 bytes: not read".to_string())
        );
        // A line of exactly the limit is read.
        assert_eq!(lines_of(b"01234\n", 5), vec![Ok((1, "01234".to_string()))]);
    }
}
