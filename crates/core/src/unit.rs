//! Answer units: the pieces of a passage that can answer a question on
//! their own, and the text an embedding model reads for each. Prose
//! sentences; list items after their lead-in ("You can carry over:" …);
//! table rows as `header: cell; header: cell.` after the section label.
//! Pure: the index embeds them at ingest and the answerability judgement
//! and the extractive generator read the same units at ask time, so the
//! vectors stored for a chunk line up with the units of that chunk.

use std::ops::Range;

use crate::sentence::{SentenceKind, segment};

/// What a unit is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UnitKind {
    /// A prose sentence of four words or more, or one that introduces a list.
    Prose,
    /// A list item; `lead_in` is the index of the sentence that introduced
    /// the list (it ends with a colon), when there is one.
    ListItem {
        /// The index, among the units [`units`] returns, of the lead-in sentence; `None`
        /// when the list has none.
        lead_in: Option<usize>,
    },
    /// A table row, written as `header: cell; header: cell.`
    TableRow,
}

/// One answer unit of the passages sent: what the extractive generator
/// may serve (cleaned, with its passage number) and what is embedded.
#[derive(Debug, Clone, PartialEq)]
pub struct AnswerUnit {
    /// The passage it comes from, numbered from 1 (`[k]`).
    pub passage: usize,
    /// The text served: bullets, emphasis and line breaks removed,
    /// bracketed numbers neutralised (never read as citations).
    pub text: String,
    /// Prose sentence, list item or table row.
    pub kind: UnitKind,
    /// What is embedded: the text; for a list item, after its lead-in;
    /// for a table row, after the passage's section label.
    pub embedded: String,
    /// Where `embedded` is read from in the passage's text, as byte spans
    /// in order: the sentence; for a list item, its lead-in (when it has
    /// one) and the item; for a table row, the table's header row and the
    /// row (the section label, which is not in the text, is the caller's
    /// to add). An embedder that encodes the whole passage pools a unit's
    /// vector from the tokens of these spans.
    pub spans: Vec<Range<usize>>,
}

/// The answer units of passages given as `(section, text)`, passage `k`
/// being `passages[k-1]`, in passage order. Headings are skipped; prose
/// of fewer than four words is skipped (too short to answer alone, though
/// it may still introduce a list).
pub fn units(passages: &[(&str, &str)]) -> Vec<AnswerUnit> {
    let mut out: Vec<AnswerUnit> = Vec::new();
    for (k, (section, text)) in passages.iter().enumerate() {
        let mut header: Option<(Vec<String>, Range<usize>)> = None;
        let mut lead_in: Option<usize> = None;
        for s in segment(text) {
            let raw = s.text(text);
            let span = s.start..s.end;
            let is_row =
                s.kind == SentenceKind::TableRow || (raw.contains(" | ") && !raw.contains('\n'));
            if s.kind == SentenceKind::Heading {
                lead_in = None;
                continue;
            }
            if is_row {
                let cells = table_cells(raw);
                if cells
                    .iter()
                    .all(|c| c.chars().all(|ch| matches!(ch, '-' | ':' | ' ')))
                {
                    continue; // the |---|---| separator
                }
                let Some((h, header_span)) = &header else {
                    header = Some((cells, span));
                    continue;
                };
                let row = table_row(h, &cells);
                if row.is_empty() {
                    continue;
                }
                let row = crate::marker::neutralize(&format!("{row}.")).into_owned();
                // A row names its subject in the heading above the table
                // ("Daily rates"), not in its cells.
                let embedded = if section.is_empty() {
                    row.clone()
                } else {
                    format!("{section}: {row}")
                };
                out.push(AnswerUnit {
                    passage: k + 1,
                    embedded,
                    text: row,
                    kind: UnitKind::TableRow,
                    spans: vec![header_span.clone(), span],
                });
                continue;
            }
            header = None;
            let clean = clean_sentence(raw);
            if clean.is_empty() {
                continue;
            }
            if s.kind == SentenceKind::ListItem {
                let (embedded, spans) = match lead_in {
                    Some(i) => (
                        format!("{} {clean}", out[i].text),
                        vec![out[i].spans[0].clone(), span],
                    ),
                    None => (clean.clone(), vec![span]),
                };
                out.push(AnswerUnit {
                    passage: k + 1,
                    text: clean,
                    kind: UnitKind::ListItem { lead_in },
                    embedded,
                    spans,
                });
                continue;
            }
            let introduces = clean.ends_with(':');
            if clean.split_whitespace().count() < 4 && !introduces {
                lead_in = None;
                continue;
            }
            lead_in = introduces.then_some(out.len());
            out.push(AnswerUnit {
                passage: k + 1,
                embedded: clean.clone(),
                text: clean,
                kind: UnitKind::Prose,
                spans: vec![span],
            });
        }
    }
    out
}

/// The cells of a Markdown table row, trimmed.
pub fn table_cells(row: &str) -> Vec<String> {
    let row = row.trim().trim_start_matches('|').trim_end_matches('|');
    row.split('|').map(|c| c.trim().replace("**", "")).collect()
}

/// A table row under its header: `header: cell; header: cell` (empty
/// cells left out; a cell under an empty header alone).
pub fn table_row(header: &[String], cells: &[String]) -> String {
    header
        .iter()
        .zip(cells)
        .filter(|(_, c)| !c.is_empty())
        .map(|(h, c)| {
            if h.is_empty() {
                c.clone()
            } else {
                format!("{h}: {c}")
            }
        })
        .collect::<Vec<_>>()
        .join("; ")
}

/// Strips list bullets, emphasis and line breaks from a passage sentence,
/// and rewrites bracketed numbers so they can't be read as citations.
pub fn clean_sentence(raw: &str) -> String {
    let mut s = raw
        .trim()
        .trim_start_matches(['-', '*', '+', '•'])
        .trim_start()
        .to_string();
    // "1. Do this" → "Do this"
    if let Some(rest) = s
        .split_once(". ")
        .filter(|(n, _)| !n.is_empty() && n.len() <= 3 && n.bytes().all(|b| b.is_ascii_digit()))
        .map(|(_, r)| r.to_string())
    {
        s = rest;
    }
    let s = s.replace("**", "").replace("__", "");
    let s = s.split_whitespace().collect::<Vec<_>>().join(" ");
    crate::marker::neutralize(&s).into_owned()
}
