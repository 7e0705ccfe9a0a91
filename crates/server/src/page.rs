//! The web page at `/`: one static HTML file (inline CSS and vanilla JS,
//! no CDN), embedded in the binary.
//!
//! The page builds every piece of passage and model text with
//! `textContent`, never `innerHTML`; as a second line of defence it is served
//! with a Content-Security-Policy that allows only its own inline script (by
//! SHA-256 hash), so an injected `<script>` would not run even if it reached
//! the DOM.

use std::sync::LazyLock;

use axum::http::{HeaderValue, header};
use axum::response::{IntoResponse, Response};
use base64::Engine as _;
use sha2::{Digest, Sha256};

/// The page.
pub const INDEX_HTML: &str = include_str!("../static/index.html");

/// The CSP header value: the inline script by hash, styles inline, fetches
/// to this origin only, no framing, no plugins, no forms.
pub static CSP: LazyLock<String> = LazyLock::new(|| {
    let hashes: Vec<String> = inline_scripts(INDEX_HTML)
        .map(|body| {
            let digest = Sha256::digest(body.as_bytes());
            format!(
                "'sha256-{}'",
                base64::engine::general_purpose::STANDARD.encode(digest)
            )
        })
        .collect();
    format!(
        "default-src 'none'; script-src {}; style-src 'unsafe-inline'; connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
        hashes.join(" ")
    )
});

/// The bodies of the `<script>` elements of a page.
fn inline_scripts(html: &str) -> impl Iterator<Item = &str> {
    html.split("<script>")
        .skip(1)
        .filter_map(|rest| rest.split_once("</script>").map(|(body, _)| body))
}

pub async fn index() -> Response {
    let mut response = INDEX_HTML.into_response();
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/html; charset=utf-8"),
    );
    if let Ok(csp) = HeaderValue::from_str(&CSP) {
        headers.insert(header::CONTENT_SECURITY_POLICY, csp);
    }
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    headers.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_inline_script_hashed_and_no_external_resources() {
        assert_eq!(inline_scripts(INDEX_HTML).count(), 1);
        assert!(CSP.contains("script-src 'sha256-"));
        for banned in [
            "<script src",
            "http://",
            "https://cdn",
            "<link rel=\"stylesheet\"",
        ] {
            assert!(!INDEX_HTML.contains(banned), "page contains {banned}");
        }
    }
}
