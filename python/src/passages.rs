//! Passages from whatever a Python caller holds: `str`, mappings,
//! dataclasses, and the document objects of LlamaIndex (`TextNode`,
//! `NodeWithScore`) and LangChain (`Document`).
//!
//! Every text is read as borrowed UTF-8 from the `str` object and copied
//! once, into the passage.

use groundcite_core::Passage;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyMapping, PyString};

use crate::errors;

/// The first of `names` that `source` holds as a non-empty string: a key
/// of a mapping, or an attribute of an object.
fn field(source: &Bound<'_, PyAny>, names: &[&str], what: &str) -> PyResult<Option<String>> {
    let mapping = source.cast::<PyMapping>().ok();
    for name in names {
        let value = match &mapping {
            Some(m) => match m.get_item(name) {
                Ok(v) => v,
                Err(e) if e.is_instance_of::<pyo3::exceptions::PyKeyError>(source.py()) => {
                    continue;
                }
                Err(e) => return Err(e),
            },
            None => match source.getattr(*name) {
                Ok(v) => v,
                Err(e) if e.is_instance_of::<pyo3::exceptions::PyAttributeError>(source.py()) => {
                    continue;
                }
                Err(e) => return Err(e),
            },
        };
        if value.is_none() {
            continue;
        }
        if let Ok(s) = value.cast::<PyString>() {
            let s = s.to_str()?;
            if s.is_empty() {
                continue;
            }
            return Ok(Some(s.to_owned()));
        }
        // Ids and urls are often numbers or path-like objects.
        if matches!(*name, "id" | "id_" | "node_id" | "doc_id" | "source" | "file_path") {
            return Ok(Some(value.str()?.to_str()?.to_owned()));
        }
        return Err(errors::invalid_input(format!(
            "{what}: {name:?} must be a str, not {}",
            value.get_type().name()?
        )));
    }
    Ok(None)
}

/// A passage's `metadata` (a mapping), when it has one.
fn metadata<'py>(source: &Bound<'py, PyAny>) -> PyResult<Option<Bound<'py, PyAny>>> {
    let value = match source.cast::<PyMapping>() {
        Ok(m) => match m.get_item("metadata") {
            Ok(v) => v,
            Err(_) => return Ok(None),
        },
        Err(_) => match source.getattr("metadata") {
            Ok(v) => v,
            Err(_) => return Ok(None),
        },
    };
    if value.is_none() {
        return Ok(None);
    }
    if value.cast::<PyMapping>().is_ok() || value.cast::<PyDict>().is_ok() {
        Ok(Some(value))
    } else {
        Ok(None)
    }
}

const TEXT: &[&str] = &["text", "page_content", "content"];
const ID: &[&str] = &["id", "id_", "node_id", "doc_id"];
const URL: &[&str] = &["source_url", "url", "source", "file_path"];
const SECTION: &[&str] = &["section", "label", "title"];

/// One passage from `item` (number `n`, 1-based: the default id).
fn passage(item: &Bound<'_, PyAny>, n: usize) -> PyResult<Passage> {
    let what = format!("passages[{}]", n - 1);
    if let Ok(s) = item.cast::<PyString>() {
        return Ok(Passage {
            id: n.to_string(),
            text: s.to_str()?.to_owned(),
            source_url: String::new(),
            section: String::new(),
            score: None,
        });
    }
    // LlamaIndex's NodeWithScore wraps the node and carries the score.
    let score_holder = item;
    let node = match item.getattr("node") {
        Ok(node) if item.cast::<PyMapping>().is_err() => node,
        _ => item.clone(),
    };
    let text = match field(&node, TEXT, &what)? {
        Some(text) => text,
        None => {
            // A LlamaIndex node whose text lives behind get_content().
            match node.getattr("get_content") {
                Ok(get) if get.is_callable() => {
                    let value = get.call0()?;
                    value
                        .cast::<PyString>()
                        .map_err(|_| errors::invalid_input(format!("{what}: get_content() did not return a str")))?
                        .to_str()?
                        .to_owned()
                }
                _ => {
                    return Err(errors::invalid_input(format!(
                        "{what}: no text: expected a str, a mapping with \"text\" or \"page_content\", \
                         or an object with a .text or .page_content attribute (got {})",
                        item.get_type().name()?
                    )));
                }
            }
        }
    };
    let meta = metadata(&node)?;
    let from_meta = |names: &[&str]| -> PyResult<Option<String>> {
        match &meta {
            Some(m) => field(m, names, &format!("{what}.metadata")),
            None => Ok(None),
        }
    };
    let id = match field(&node, ID, &what)? {
        Some(id) => id,
        None => from_meta(ID)?.unwrap_or_else(|| n.to_string()),
    };
    let source_url = match field(&node, URL, &what)? {
        Some(url) => url,
        None => from_meta(URL)?.unwrap_or_default(),
    };
    let section = match field(&node, SECTION, &what)? {
        Some(section) => section,
        None => from_meta(SECTION)?.unwrap_or_default(),
    };
    let score = score(score_holder, &what)?;
    Ok(Passage {
        id,
        text,
        source_url,
        section,
        score,
    })
}

fn score(item: &Bound<'_, PyAny>, what: &str) -> PyResult<Option<f32>> {
    let value = match item.cast::<PyMapping>() {
        Ok(m) => m.get_item("score").ok(),
        Err(_) => item.getattr("score").ok(),
    };
    match value {
        Some(v) if !v.is_none() => v
            .extract::<f32>()
            .map(Some)
            .map_err(|_| errors::invalid_input(format!("{what}: \"score\" must be a number"))),
        _ => Ok(None),
    }
}

/// The passages sent, in order (`[k]` is `passages[k-1]`), from any
/// iterable of the accepted shapes. A bare `str` is refused: it would be
/// read as one passage per character.
pub fn extract(passages: &Bound<'_, PyAny>) -> PyResult<Vec<Passage>> {
    if passages.cast::<PyString>().is_ok() {
        return Err(errors::invalid_input(
            "passages: expected a list of passages, got one str (wrap it in a list)".into(),
        ));
    }
    let iter = passages.try_iter().map_err(|_| {
        errors::invalid_input(format!(
            "passages: expected a list of passages, got {}",
            passages.get_type().name().map(|n| n.to_string()).unwrap_or_default()
        ))
    })?;
    let mut out = Vec::with_capacity(passages.len().unwrap_or(0));
    for (i, item) in iter.enumerate() {
        out.push(passage(&item?, i + 1)?);
    }
    Ok(out)
}
