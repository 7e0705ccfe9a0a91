//! Structured answers: the model replies in JSON whose citation ids a
//! schema restricts to the passages sent, and the reply is rendered to the
//! usual marker text, which is then validated and checked like any answer
//! (the validator stays the judge).
//!
//! The shape asked for:
//!
//! ```json
//! {"sentences": [{"text": "Reimbursements settle within 30 days.", "citations": [2]}],
//!  "refusal": null}
//! ```
//!
//! and, when the passages do not answer, `{"sentences": [], "refusal":
//! {"needed": "..."}}`. [`answer_schema`] is that shape as a JSON schema,
//! with `citations` items an `enum` of `1..=n`; servers that constrain
//! decoding by it (llama.cpp, vLLM, Ollama, OpenAI) cannot produce an id
//! that was never sent.
//!
//! [`render`] turns a whole reply into marker text; [`StreamRenderer`] does
//! the same for a reply arriving in pieces, one complete sentence object at
//! a time, so streaming keeps its hold-back rules. A reply that is not a
//! JSON object (a server that ignored the schema) is passed through as free
//! text; a reply cut before its end keeps only its complete sentences.
//!
//! ```
//! use groundcite_core::RefusalForm;
//! use groundcite_core::structured::render;
//!
//! let raw = r#"{"sentences": [{"text": "Reimbursements settle within 30 days of approval.", "citations": [2]}], "refusal": null}"#;
//! let answer = render(raw, RefusalForm::Sentence).unwrap();
//! assert_eq!(answer.text, "Reimbursements settle within 30 days of approval [2].");
//! assert!(answer.complete);
//! ```

use serde::Deserialize;
use serde_json::{Value, json};

use crate::marker::Markers;
use crate::refusal::{REFUSAL_SENTENCE, RefusalForm, SENTINEL_PREFIX};

/// The JSON schema of a structured answer over `n_passages` passages: an
/// object with `sentences` (each a `text` and its `citations`, ids from
/// `1..=n_passages`, at least one) and `refusal` (`null`, or an object
/// with what would be `needed`). Written to be accepted by OpenAI's strict
/// mode (every property required, no additional properties) and by
/// llama.cpp's schema-to-grammar conversion (`enum`, `anyOf`,
/// `minItems`/`maxItems`).
pub fn answer_schema(n_passages: usize) -> Value {
    let citations = if n_passages == 0 {
        json!({"type": "array", "items": {"type": "integer"}, "maxItems": 0})
    } else {
        let ids: Vec<usize> = (1..=n_passages).collect();
        json!({
            "type": "array",
            "items": {"type": "integer", "enum": ids},
            "minItems": 1,
            "maxItems": n_passages,
        })
    };
    json!({
        "type": "object",
        "properties": {
            "sentences": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {
                        "text": {"type": "string"},
                        "citations": citations,
                    },
                    "required": ["text", "citations"],
                    "additionalProperties": false,
                },
            },
            "refusal": {
                "anyOf": [
                    {"type": "null"},
                    {
                        "type": "object",
                        "properties": {"needed": {"type": "string"}},
                        "required": ["needed"],
                        "additionalProperties": false,
                    },
                ],
            },
        },
        "required": ["sentences", "refusal"],
        "additionalProperties": false,
    })
}

/// A structured reply rendered to marker text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rendered {
    /// The answer as marker text: each sentence's text followed by its
    /// markers (before its final punctuation), sentences joined by a
    /// space; or the refusal in the configured form.
    pub text: String,
    /// The reply was a whole JSON object of the expected shape. `false`:
    /// it was cut (or malformed) and `text` holds only the sentence
    /// objects that were complete.
    pub complete: bool,
}

#[derive(Deserialize)]
struct AnswerWire {
    #[serde(default)]
    sentences: Vec<SentenceWire>,
    #[serde(default)]
    refusal: Option<Value>,
}

#[derive(Deserialize)]
struct SentenceWire {
    #[serde(default)]
    text: String,
    #[serde(default)]
    citations: Vec<Value>,
}

/// Renders a whole structured reply. `None` when `raw` is not a JSON
/// object at all (the server answered in free text: use `raw` as is).
///
/// The refusal is served only when no sentence was given; ids are kept
/// as the model wrote them (in order, without repeats) so that the
/// validator judges them, and markers the model wrote inside a `text` are
/// removed (in this mode `citations` is the only place ids come from).
pub fn render(raw: &str, form: RefusalForm) -> Option<Rendered> {
    if !raw.trim_start().starts_with('{') {
        return None;
    }
    if let Ok(answer) = serde_json::from_str::<AnswerWire>(raw) {
        let mut text = String::new();
        for sentence in &answer.sentences {
            push_sentence(&mut text, sentence);
        }
        if text.is_empty() && answer.refusal.as_ref().is_some_and(|r| !r.is_null()) {
            text = refusal_text(answer.refusal.as_ref(), form);
        }
        return Some(Rendered {
            text,
            complete: true,
        });
    }
    // Cut or malformed: the complete sentence objects.
    let mut renderer = StreamRenderer::default();
    let text = renderer.push(raw);
    Some(Rendered {
        text,
        complete: false,
    })
}

/// The refusal in the configured form: the sentence, or the sentinel with
/// what would be needed.
fn refusal_text(refusal: Option<&Value>, form: RefusalForm) -> String {
    match form {
        RefusalForm::Sentence => REFUSAL_SENTENCE.to_string(),
        RefusalForm::Sentinel => {
            let needed = refusal
                .and_then(|r| r.get("needed"))
                .and_then(Value::as_str)
                .map(str::trim)
                .unwrap_or_default();
            if needed.is_empty() {
                SENTINEL_PREFIX.to_string()
            } else {
                format!("{SENTINEL_PREFIX} {needed}")
            }
        }
    }
}

/// Appends one sentence, after a space when the text is not empty. A
/// sentence with no text is skipped.
fn push_sentence(out: &mut String, sentence: &SentenceWire) {
    let rendered = render_sentence(&sentence.text, &sentence.citations);
    if rendered.is_empty() {
        return;
    }
    if !out.is_empty() {
        out.push(' ');
    }
    out.push_str(&rendered);
}

/// `text` without the markers written inside it, with `[k]` for each id of
/// `citations` (in order, without repeats) before its final punctuation,
/// which is added (a period) when missing so that the next sentence does
/// not run into it. Ids that are not whole numbers are kept as written
/// (`[x]` is no marker; the sentence is then uncited and judged so).
fn render_sentence(text: &str, citations: &[Value]) -> String {
    let markers = Markers::parse(text);
    let mut clean = String::with_capacity(text.len());
    let mut last = 0;
    for m in &markers.markers {
        clean.push_str(&text[last..m.start]);
        last = m.end;
    }
    clean.push_str(&text[last..]);
    let clean = clean.split_whitespace().collect::<Vec<_>>().join(" ");
    // A marker removed before the period leaves " ." behind.
    let clean = clean.replace(" .", ".");
    if clean.is_empty() {
        return String::new();
    }
    let mut ids: Vec<String> = Vec::new();
    for id in citations {
        let id = match id {
            Value::Number(n) => n.to_string(),
            Value::String(s) => s.trim().to_string(),
            other => other.to_string(),
        };
        if !ids.contains(&id) {
            ids.push(id);
        }
    }
    let (body, end) = match clean.char_indices().last() {
        Some((i, '.' | '!' | '?')) => (&clean[..i], &clean[i..]),
        _ => (clean.as_str(), "."),
    };
    let body = body.trim_end();
    let mut out = String::with_capacity(body.len() + 4 * ids.len() + 2);
    out.push_str(body);
    if !ids.is_empty() {
        out.push(' ');
        for id in &ids {
            out.push('[');
            out.push_str(id);
            out.push(']');
        }
    }
    out.push_str(end);
    out
}

/// Where a [`StreamRenderer`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
enum Mode {
    /// Nothing but whitespace yet.
    #[default]
    Start,
    /// Inside a JSON object.
    Json,
    /// Not JSON: the text passes through.
    Free,
}

/// Renders a structured reply as it streams: each complete object of the
/// `sentences` array becomes its marker text as soon as its closing brace
/// arrives. A reply that does not start with `{` passes through unchanged.
///
/// Concatenated, what [`StreamRenderer::push`] and then
/// [`StreamRenderer::finish`] return equals [`render`] of the whole reply.
#[derive(Debug, Clone, Default)]
pub struct StreamRenderer {
    mode: Mode,
    buf: String,
    /// Bytes of `buf` scanned.
    pos: usize,
    /// Open containers: `b'{'` or `b'['`.
    stack: Vec<u8>,
    in_string: bool,
    escaped: bool,
    /// Where the string being read started (its opening quote).
    string_start: usize,
    /// The last string completed directly in the top-level object (a key,
    /// or a value).
    last_top_string: String,
    /// The stack depth of the `sentences` array, while inside it.
    sentences_depth: Option<usize>,
    /// Where the sentence object being read started.
    object_start: Option<usize>,
    /// What was returned so far.
    emitted: String,
}

impl StreamRenderer {
    /// Adds a piece of the reply; returns the marker text it completed.
    pub fn push(&mut self, delta: &str) -> String {
        match self.mode {
            Mode::Free => {
                self.emitted.push_str(delta);
                return delta.to_string();
            }
            Mode::Start => {
                self.buf.push_str(delta);
                let trimmed = self.buf.trim_start();
                if trimmed.is_empty() {
                    return String::new();
                }
                if !trimmed.starts_with('{') {
                    self.mode = Mode::Free;
                    let all = std::mem::take(&mut self.buf);
                    self.emitted.push_str(&all);
                    return all;
                }
                self.mode = Mode::Json;
            }
            Mode::Json => self.buf.push_str(delta),
        }
        let mut out = String::new();
        self.scan(&mut out);
        self.emitted.push_str(&out);
        out
    }

    /// The reply is complete (`raw` is all of it): returns what is left
    /// to show, so that everything returned equals [`render`] of `raw`.
    /// When what was already shown is not a prefix of the full render (it
    /// cannot be, short of a malformed reply), returns nothing more.
    pub fn finish(&mut self, raw: &str, form: RefusalForm) -> String {
        let full = match render(raw, form) {
            Some(rendered) => rendered.text,
            None => raw.to_string(),
        };
        match full.strip_prefix(self.emitted.as_str()) {
            Some(rest) => {
                let rest = rest.to_string();
                self.emitted.push_str(&rest);
                rest
            }
            None => String::new(),
        }
    }

    fn scan(&mut self, out: &mut String) {
        let bytes = self.buf.as_bytes();
        let mut i = self.pos;
        while i < bytes.len() {
            let b = bytes[i];
            if self.in_string {
                if self.escaped {
                    self.escaped = false;
                } else if b == b'\\' {
                    self.escaped = true;
                } else if b == b'"' {
                    self.in_string = false;
                    if self.stack.len() == 1 {
                        let raw = &self.buf[self.string_start..=i];
                        self.last_top_string =
                            serde_json::from_str::<String>(raw).unwrap_or_default();
                    }
                }
                i += 1;
                continue;
            }
            match b {
                b'"' => {
                    self.in_string = true;
                    self.string_start = i;
                }
                b'{' | b'[' => {
                    self.stack.push(b);
                    let depth = self.stack.len();
                    if b == b'[' && depth == 2 && self.last_top_string == "sentences" {
                        self.sentences_depth = Some(depth);
                    } else if b == b'{' && self.sentences_depth == Some(depth - 1) {
                        self.object_start = Some(i);
                    }
                }
                b'}' | b']' => {
                    let depth = self.stack.len();
                    self.stack.pop();
                    if b == b'}'
                        && self.sentences_depth.is_some_and(|d| d + 1 == depth)
                        && let Some(start) = self.object_start.take()
                    {
                        let object = &self.buf[start..=i];
                        if let Ok(sentence) = serde_json::from_str::<SentenceWire>(object) {
                            let mut piece = String::new();
                            if !self.emitted.is_empty() || !out.is_empty() {
                                piece.push(' ');
                            }
                            let rendered = render_sentence(&sentence.text, &sentence.citations);
                            if !rendered.is_empty() {
                                piece.push_str(&rendered);
                                out.push_str(&piece);
                            }
                        }
                    } else if b == b']' && self.sentences_depth == Some(depth) {
                        self.sentences_depth = None;
                    }
                }
                _ => {}
            }
            i += 1;
        }
        self.pos = i;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::validate::Report;

    const FULL: &str = r#"{"sentences": [{"text": "Claims are filed within 60 days.", "citations": [1]}, {"text": "Reimbursements settle within 30 days of approval", "citations": [2, 3, 2]}], "refusal": null}"#;

    #[test]
    fn renders_markers_before_the_final_period() {
        let r = render(FULL, RefusalForm::Sentence).unwrap();
        assert_eq!(
            r.text,
            "Claims are filed within 60 days [1]. Reimbursements settle within 30 days of approval [2][3]."
        );
        assert!(r.complete);
        let report = Report::check(&r.text, 3);
        assert!(report.bad_ids.is_empty());
        assert_eq!(report.unmarked().count(), 0);
    }

    #[test]
    fn markers_written_in_the_text_are_not_ids() {
        let raw = r#"{"sentences": [{"text": "Refunds take 14 days [7].", "citations": [2]}], "refusal": null}"#;
        let r = render(raw, RefusalForm::Sentence).unwrap();
        assert_eq!(r.text, "Refunds take 14 days [2].");
        let raw = r#"{"sentences": [{"text": "Refunds take 14 days [7].", "citations": []}], "refusal": null}"#;
        assert_eq!(
            render(raw, RefusalForm::Sentence).unwrap().text,
            "Refunds take 14 days."
        );
    }

    #[test]
    fn ids_outside_the_schema_reach_the_validator() {
        // A server that ignored the enum: the id is kept for the validator.
        let raw = r#"{"sentences": [{"text": "Refunds take 14 days.", "citations": [7]}], "refusal": null}"#;
        let r = render(raw, RefusalForm::Sentence).unwrap();
        assert_eq!(Report::check(&r.text, 3).bad_ids, [7]);
    }

    #[test]
    fn refusals_in_both_forms() {
        let raw = r#"{"sentences": [], "refusal": {"needed": "the parental leave policy"}}"#;
        assert_eq!(
            render(raw, RefusalForm::Sentence).unwrap().text,
            REFUSAL_SENTENCE
        );
        let sentinel = render(raw, RefusalForm::Sentinel).unwrap().text;
        assert_eq!(sentinel, "NOT_IN_SOURCES: the parental leave policy");
        let report = Report::check(&sentinel, 3);
        assert_eq!(
            report.refusal.unwrap().needed(&sentinel),
            Some("the parental leave policy")
        );
        // Sentences win over a refusal given beside them.
        let both =
            r#"{"sentences": [{"text": "A.", "citations": [1]}], "refusal": {"needed": "x"}}"#;
        assert_eq!(render(both, RefusalForm::Sentence).unwrap().text, "A [1].");
    }

    #[test]
    fn free_text_and_cut_replies() {
        assert_eq!(
            render("Refunds take 14 days [2].", RefusalForm::Sentence),
            None
        );
        let cut = &FULL[..FULL.find("of approval").unwrap()];
        let r = render(cut, RefusalForm::Sentence).unwrap();
        assert_eq!(r.text, "Claims are filed within 60 days [1].");
        assert!(!r.complete);
    }

    #[test]
    fn streaming_in_any_pieces_equals_the_whole_render() {
        let whole = render(FULL, RefusalForm::Sentence).unwrap().text;
        for size in [1, 2, 3, 7, 16, FULL.len()] {
            let mut renderer = StreamRenderer::default();
            let mut shown = String::new();
            let mut after_first_object = None;
            let mut at = 0;
            while at < FULL.len() {
                let end = (at + size).min(FULL.len());
                shown.push_str(&renderer.push(&FULL[at..end]));
                if after_first_object.is_none() && !shown.is_empty() {
                    after_first_object = Some(end);
                }
                at = end;
            }
            shown.push_str(&renderer.finish(FULL, RefusalForm::Sentence));
            assert_eq!(shown, whole, "pieces of {size}");
            // The first sentence is shown as soon as its object closes.
            let first_close = FULL.find("[1]}").unwrap() + 4;
            assert!(after_first_object.unwrap() <= first_close + size);
        }
        // A refusal arrives with the end; free text passes through.
        let raw = r#"{"sentences": [], "refusal": {"needed": "x"}}"#;
        let mut renderer = StreamRenderer::default();
        assert_eq!(renderer.push(raw), "");
        assert_eq!(
            renderer.finish(raw, RefusalForm::Sentence),
            REFUSAL_SENTENCE
        );
        let mut renderer = StreamRenderer::default();
        assert_eq!(renderer.push("  Refunds"), "  Refunds");
        assert_eq!(renderer.push(" take [2]."), " take [2].");
        assert_eq!(
            renderer.finish("  Refunds take [2].", RefusalForm::Sentence),
            ""
        );
    }

    #[test]
    fn strings_with_braces_and_escapes_do_not_confuse_the_scanner() {
        let raw = r#"{"refusal": null, "sentences": [{"text": "Use \"{x}\" and ] carefully.", "citations": [1]}]}"#;
        let mut renderer = StreamRenderer::default();
        let mut shown = String::new();
        for c in raw.chars() {
            shown.push_str(&renderer.push(&c.to_string()));
        }
        assert_eq!(shown, "Use \"{x}\" and ] carefully [1].");
        assert_eq!(renderer.finish(raw, RefusalForm::Sentence), "");
    }

    #[test]
    fn the_schema_restricts_ids_to_the_passages_sent() {
        let schema = answer_schema(3);
        let ids = &schema["properties"]["sentences"]["items"]["properties"]["citations"];
        assert_eq!(ids["items"]["enum"], json!([1, 2, 3]));
        assert_eq!(ids["minItems"], 1);
        assert_eq!(schema["required"], json!(["sentences", "refusal"]));
        let none = answer_schema(0);
        assert_eq!(
            none["properties"]["sentences"]["items"]["properties"]["citations"]["maxItems"],
            0
        );
    }
}
