//! The handbook corpus (`../shared/corpora/tts-handbook/pages`) split into
//! heading sections, and the model folder, for the bench and the
//! `dense_recall` example (a module of both, not a bench of its own; each
//! uses part of it).
#![allow(dead_code)]

use std::path::{Path, PathBuf};

/// One heading section of a page: the heading line and the text up to the
/// next heading.
pub struct Section {
    /// The page's path under `pages/`, as the cases' `gold` names it.
    pub page: String,
    /// The page's `title:` from its front matter (empty when it has none).
    pub title: String,
    pub text: String,
}

pub fn pages_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/corpora/tts-handbook/pages")
}

/// The model folder: GROUNDCITE_MODEL_DIR, else the fetch script's default.
pub fn model_dir() -> PathBuf {
    match std::env::var_os(groundcite_embed::MODEL_DIR_ENV) {
        Some(dir) => PathBuf::from(dir),
        None => PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("../..")
            .join(groundcite_embed::DEFAULT_MODEL_DIR),
    }
}

/// Every Markdown page under `pages/`, in path order, split before each
/// line starting with `#` (outside code fences); the front matter between
/// `---` lines is dropped but for its title, sections without words are
/// skipped.
pub fn sections() -> Vec<Section> {
    let root = pages_dir();
    let mut pages = Vec::new();
    collect(&root, &mut pages);
    pages.sort();
    let mut sections = Vec::new();
    for path in pages {
        let page = path
            .strip_prefix(&root)
            .unwrap()
            .to_string_lossy()
            .replace('\\', "/");
        let text = std::fs::read_to_string(&path).unwrap();
        let mut current = String::new();
        let mut in_fence = false;
        let mut title = String::new();
        let mut lines = text.lines().peekable();
        if lines.peek() == Some(&"---") {
            lines.next();
            for line in lines.by_ref() {
                if line == "---" {
                    break;
                }
                if let Some(value) = line.strip_prefix("title:") {
                    title = value.trim().trim_matches('"').to_owned();
                }
            }
        }
        for line in lines {
            if line.trim_start().starts_with("```") {
                in_fence = !in_fence;
            }
            if !in_fence && line.starts_with('#') && !current.trim().is_empty() {
                let text = std::mem::take(&mut current);
                sections.push(Section {
                    page: page.clone(),
                    title: title.clone(),
                    text,
                });
            }
            current.push_str(line);
            current.push('\n');
        }
        if current.chars().any(char::is_alphanumeric) {
            sections.push(Section {
                page,
                title,
                text: current,
            });
        }
    }
    sections.retain(|s| s.text.chars().any(char::is_alphanumeric));
    sections
}

fn collect(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            collect(&path, out);
        } else if path.extension().is_some_and(|e| e == "md") {
            out.push(path);
        }
    }
}
