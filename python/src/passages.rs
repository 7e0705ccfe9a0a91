//! Passages from whatever a Python caller holds: `str`, mappings,
//! dataclasses, and the document objects of LlamaIndex (`TextNode`,
//! `NodeWithScore`) and LangChain (`Document`).
//!
//! Every text is read as borrowed UTF-8 from the `str` object and copied
//! once, into the passage.

use groundcite_core::Passage;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyMapping, PyString, PyTuple};

use crate::errors;

/// `source[name]` for a mapping (a `dict` without raising), else
/// `source.name`; `None` when it has no such key or attribute.
fn lookup<'py>(source: &Bound<'py, PyAny>, name: &str) -> PyResult<Option<Bound<'py, PyAny>>> {
    if let Ok(dict) = source.cast::<PyDict>() {
        return dict.get_item(name);
    }
    if let Ok(mapping) = source.cast::<PyMapping>() {
        return match mapping.get_item(name) {
            Ok(v) => Ok(Some(v)),
            Err(e) if e.is_instance_of::<pyo3::exceptions::PyKeyError>(source.py()) => Ok(None),
            Err(e) => Err(e),
        };
    }
    match source.getattr(name) {
        Ok(v) => Ok(Some(v)),
        Err(e) if e.is_instance_of::<pyo3::exceptions::PyAttributeError>(source.py()) => Ok(None),
        Err(e) => Err(e),
    }
}

/// The first of `names` that `source` holds as a non-empty string. The
/// text must be a `str`; an id, url or label may also be a number or a
/// path (read as its `str`).
fn field(
    source: &Bound<'_, PyAny>,
    names: &[&str],
    what: &str,
    text_only: bool,
) -> PyResult<Option<String>> {
    for name in names {
        let Some(value) = lookup(source, name)? else {
            continue;
        };
        if value.is_none() {
            continue;
        }
        let string = match value.cast::<PyString>() {
            Ok(s) => s.to_str()?.to_owned(),
            Err(_) if !text_only && !value.is_instance_of::<pyo3::types::PyBool>() => {
                if value.is_instance_of::<pyo3::types::PyInt>()
                    || value.is_instance_of::<pyo3::types::PyFloat>()
                {
                    value.str()?.to_str()?.to_owned()
                } else if let Ok(path) = value.extract::<std::path::PathBuf>() {
                    path.to_string_lossy().into_owned()
                } else {
                    return Err(wrong_type(what, name, &value));
                }
            }
            Err(_) => return Err(wrong_type(what, name, &value)),
        };
        if string.is_empty() {
            continue;
        }
        return Ok(Some(string));
    }
    Ok(None)
}

fn wrong_type(what: &str, name: &str, value: &Bound<'_, PyAny>) -> PyErr {
    let type_name = value
        .get_type()
        .name()
        .map(|n| n.to_string())
        .unwrap_or_default();
    errors::invalid_input(format!("{what}: {name:?} must be a str, not {type_name}"))
}

/// A passage's `metadata` (a mapping), when it has one.
fn metadata<'py>(source: &Bound<'py, PyAny>) -> PyResult<Option<Bound<'py, PyAny>>> {
    Ok(lookup(source, "metadata")?.filter(|m| m.cast::<PyMapping>().is_ok()))
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
    // `(document, score)`, as LangChain's similarity_search_with_score
    // returns them.
    if let Ok(pair) = item.cast::<PyTuple>() {
        if pair.len() == 2 {
            let mut p = passage(&pair.get_item(0)?, n)?;
            let score = pair.get_item(1)?;
            p.score = Some(score.extract::<f32>().map_err(|_| {
                errors::invalid_input(format!(
                    "{what}: a (passage, score) pair needs a number as its score"
                ))
            })?);
            return Ok(p);
        }
    }
    // LlamaIndex's NodeWithScore wraps the node and carries the score.
    let score_holder = item;
    let node = match item.cast::<PyMapping>() {
        Ok(_) => item.clone(),
        Err(_) => lookup(item, "node")?.unwrap_or_else(|| item.clone()),
    };
    let text = match field(&node, TEXT, &what, true)? {
        Some(text) => text,
        None => {
            // A LlamaIndex node whose text lives behind get_content().
            match node.getattr("get_content") {
                Ok(get) if get.is_callable() => {
                    let value = get.call0()?;
                    value
                        .cast::<PyString>()
                        .map_err(|_| {
                            errors::invalid_input(format!(
                                "{what}: get_content() did not return a str"
                            ))
                        })?
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
            Some(m) => field(m, names, &format!("{what}.metadata"), false),
            None => Ok(None),
        }
    };
    let id = match field(&node, ID, &what, false)? {
        Some(id) => id,
        None => from_meta(ID)?.unwrap_or_else(|| n.to_string()),
    };
    let source_url = match field(&node, URL, &what, false)? {
        Some(url) => url,
        None => from_meta(URL)?.unwrap_or_default(),
    };
    let section = match field(&node, SECTION, &what, false)? {
        Some(section) => section,
        None => from_meta(SECTION)?.unwrap_or_default(),
    };
    let score = match score(score_holder, &what)? {
        Some(score) => Some(score),
        None => match &meta {
            Some(m) => score(m, &format!("{what}.metadata"))?,
            None => None,
        },
    };
    Ok(Passage {
        id,
        text,
        source_url,
        section,
        score,
    })
}

fn score(item: &Bound<'_, PyAny>, what: &str) -> PyResult<Option<f32>> {
    match lookup(item, "score")? {
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
            passages
                .get_type()
                .name()
                .map(|n| n.to_string())
                .unwrap_or_default()
        ))
    })?;
    let mut out = Vec::with_capacity(passages.len().unwrap_or(0));
    for (i, item) in iter.enumerate() {
        out.push(passage(&item?, i + 1)?);
    }
    Ok(out)
}
