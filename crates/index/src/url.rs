//! Source URLs for chunks. Pure: no I/O.
//!
//! Precedence: the page's front-matter `permalink` (absolute, or joined to
//! `base_url` when relative), else the URL template over the relative path,
//! else a `file://` URL of the absolute path (or `doc://root/path` for
//! in-memory documents). The chunk's heading anchor is appended as `#anchor`.

use std::path::Path;

/// Expands a URL template. Placeholders: `{path}` (relative path without its
/// extension and without a trailing `index`), `{file}` (relative path as is).
/// `pages/getting-started/piv.md` with prefix `pages/` stripped and template
/// `https://handbook.tts.gsa.gov/{path}/` → `https://handbook.tts.gsa.gov/getting-started/piv/`.
pub fn expand_template(template: &str, rel_path: &str) -> String {
    let no_ext = match rel_path.rsplit_once('.') {
        Some((stem, ext)) if !ext.contains('/') => stem,
        _ => rel_path,
    };
    let path = if no_ext == "index" {
        ""
    } else {
        no_ext.strip_suffix("/index").unwrap_or(no_ext)
    };
    let mut t = template.to_string();
    if path.is_empty() {
        t = t.replace("{path}/", "");
    }
    t.replace("{path}", &encode_path(path))
        .replace("{file}", &encode_path(rel_path))
}

/// Joins a permalink to a base URL when it is relative. `None` for a
/// permalink that is not a safe link (`javascript:`, `data:`, any scheme
/// but `http` and `https`: [`groundcite_core::link::is_safe_link`]); the
/// caller falls back to the next url and warns ([`unsafe_permalink`]).
pub fn join_permalink(base_url: Option<&str>, permalink: &str) -> Option<String> {
    if unsafe_permalink(permalink) {
        return None;
    }
    if permalink.contains("://") {
        return Some(permalink.to_string());
    }
    let base = base_url?;
    Some(format!(
        "{}/{}",
        base.trim_end_matches('/'),
        permalink.trim_start_matches('/')
    ))
}

/// Is this front-matter permalink refused? Only `http`, `https` and
/// relative permalinks are taken.
pub fn unsafe_permalink(permalink: &str) -> bool {
    let lower = permalink.to_ascii_lowercase();
    !groundcite_core::link::is_safe_link(permalink)
        || lower.starts_with("file:")
        || lower.starts_with("doc:")
}

/// A `file://` URL for an absolute path, percent-encoded.
pub fn file_url(abs: &Path) -> String {
    let s = abs.to_string_lossy().replace('\\', "/");
    let s = if s.starts_with('/') {
        s
    } else {
        format!("/{s}")
    };
    format!("file://{}", encode_path(&s))
}

/// The page URL by the precedence above.
pub fn page_url(
    rel_path: &str,
    permalink: Option<&str>,
    base_url: Option<&str>,
    template: Option<&str>,
    fallback: impl FnOnce() -> String,
) -> String {
    if let Some(url) = permalink.and_then(|p| join_permalink(base_url, p)) {
        return url;
    }
    match template {
        Some(t) => expand_template(t, rel_path),
        None => fallback(),
    }
}

/// Appends `#anchor` when there is one and the URL has no fragment yet.
pub fn with_anchor(url: &str, anchor: Option<&str>) -> String {
    match anchor {
        Some(a) if !a.is_empty() && !url.contains('#') => format!("{url}#{a}"),
        _ => url.to_string(),
    }
}

/// Percent-encodes every byte of a path but the unreserved characters,
/// `/` and the sub-delimiters that are safe in a path (RFC 3986): a file
/// name with a newline, a space, quotes or non-ASCII letters becomes a url
/// with none of them raw.
fn encode_path(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for &b in s.as_bytes() {
        let keep = b.is_ascii_alphanumeric() || b"-._~/!$&'()*+,;=:@".contains(&b);
        if keep {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const HB: &str = "https://handbook.tts.gsa.gov/{path}/";

    #[test]
    fn template() {
        assert_eq!(
            expand_template(HB, "getting-started/piv.md"),
            "https://handbook.tts.gsa.gov/getting-started/piv/"
        );
        assert_eq!(
            expand_template(HB, "tools/index.md"),
            "https://handbook.tts.gsa.gov/tools/"
        );
        assert_eq!(
            expand_template(HB, "index.md"),
            "https://handbook.tts.gsa.gov/"
        );
        assert_eq!(
            expand_template("https://x/{file}", "a b.md"),
            "https://x/a%20b.md"
        );
    }

    #[test]
    fn permalink_precedence() {
        let u = page_url(
            "x.md",
            Some("/training/"),
            Some("https://h.gov/"),
            Some(HB),
            || unreachable!(),
        );
        assert_eq!(u, "https://h.gov/training/");
        let u = page_url(
            "x.md",
            Some("https://e.com/exp/"),
            None,
            None,
            || unreachable!(),
        );
        assert_eq!(u, "https://e.com/exp/");
        let u = page_url("x.md", Some("/rel/"), None, None, || "file:///x.md".into());
        assert_eq!(u, "file:///x.md");
        assert_eq!(file_url(Path::new("/a b/c.md")), "file:///a%20b/c.md");
        assert_eq!(
            with_anchor("https://h/x/", Some("sick-leave")),
            "https://h/x/#sick-leave"
        );
        assert_eq!(with_anchor("https://h/x/", None), "https://h/x/");
    }
}
