//! Which links may leave groundcite: in a source url, a search hit, an API
//! response. Pure.

/// Is `url` a link a reader can follow safely? `http` and `https` urls, the
/// `file` and `doc` urls groundcite makes itself (percent-encoded by the
/// index), and relative urls (no scheme). Never `javascript:`, `data:` or
/// any other scheme, and never a url with a control character or a space
/// (a raw newline in a file name, say). The empty string (no url) is safe.
pub fn is_safe_link(url: &str) -> bool {
    if url.chars().any(|c| c.is_control() || c.is_whitespace()) {
        return false;
    }
    // A scheme is what precedes the first `:` when no `/`, `?` or `#` comes
    // before it (RFC 3986 §4.2: a relative reference's first segment has no
    // colon).
    let end = url.find(['/', '?', '#']).unwrap_or(url.len());
    match url[..end].find(':') {
        None => true,
        Some(colon) => {
            let scheme = url[..colon].to_ascii_lowercase();
            matches!(scheme.as_str(), "http" | "https" | "file" | "doc")
        }
    }
}

/// `url` if it [`is_safe_link`], else the empty string (no link).
pub fn safe_link(url: &str) -> &str {
    if is_safe_link(url) { url } else { "" }
}

/// Empties `url` unless it [`is_safe_link`]: what every response that
/// carries a source url applies to it.
pub fn sanitize(url: &mut String) {
    if !is_safe_link(url) {
        url.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_http_https_our_own_and_relative_links_are_safe() {
        for ok in [
            "",
            "https://handbook.tts.gsa.gov/leave/#sick-leave",
            "HTTP://example.com",
            "/leave/",
            "leave/index.html",
            "?q=a:b",
            "#anchor",
            "file:///tmp/a%20b.md",
            "doc://demo/expenses.md",
            "a/b:c",
        ] {
            assert!(is_safe_link(ok), "{ok}");
        }
        for bad in [
            "javascript:alert(1)",
            "JavaScript://x/%0Aalert(1)",
            " javascript:alert(1)",
            "data:text/html,<script>",
            "vbscript:x",
            "ftp://x",
            "https://x/a\nb",
            "https://x/\u{1b}]8;;",
            "file:///a b.md",
        ] {
            assert!(!is_safe_link(bad), "{bad:?}");
        }
        assert_eq!(safe_link("javascript:x"), "");
        let mut url = String::from("data:text/html,x");
        sanitize(&mut url);
        assert_eq!(url, "");
        let mut url = String::from("https://x/y");
        sanitize(&mut url);
        assert_eq!(url, "https://x/y");
    }
}
