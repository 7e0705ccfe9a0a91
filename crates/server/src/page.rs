//! The web page at `/`: one HTML template (inline CSS and vanilla JS, no
//! CDN), embedded in the binary and rendered once per state with the
//! configured words ([`render`]: title, corpus name, placeholder, example
//! questions, all HTML-escaped; the script is never templated, so its
//! hash in the CSP holds).
//!
//! The page builds every piece of passage and model text with
//! `textContent`, never `innerHTML`; as a second line of defence it is served
//! with a Content-Security-Policy that allows only its own inline script (by
//! SHA-256 hash), so an injected `<script>` would not run even if it reached
//! the DOM.

use std::sync::LazyLock;

use axum::extract::State;
use axum::http::{HeaderValue, header};
use axum::response::{IntoResponse, Response};
use base64::Engine as _;
use groundcite_engine::PageSettings;
use sha2::{Digest, Sha256};

/// The page's template: `{{title}}`, `{{placeholder}}`, `{{corpus}}` and
/// `{{examples}}` are filled by [`render`].
pub const INDEX_HTML: &str = include_str!("../static/index.html");

/// The page with `page`'s words. A corpus or example list left empty
/// leaves its line out.
pub fn render(page: &PageSettings) -> String {
    let corpus = if page.corpus.is_empty() {
        String::new()
    } else {
        format!(
            "<p class=\"corpus\" id=\"corpus\">Searching <strong>{}</strong></p>",
            escape(&page.corpus)
        )
    };
    let examples = if page.examples.is_empty() {
        String::new()
    } else {
        let buttons: Vec<String> = page
            .examples
            .iter()
            .map(|q| {
                format!(
                    "<button type=\"button\" class=\"example\">{}</button>",
                    escape(q)
                )
            })
            .collect();
        format!(
            "<div class=\"examples\" id=\"examples\"><span>Try:</span> {}</div>",
            buttons.join(" ")
        )
    };
    let (head, script) = INDEX_HTML
        .split_once("<script>")
        .expect("the page has its script");
    let head = head
        .replace("{{title}}", &escape(&page.title))
        .replace("{{placeholder}}", &escape(&page.placeholder))
        .replace("{{corpus}}", &corpus)
        .replace("{{examples}}", &examples);
    format!("{head}<script>{script}")
}

/// Text for HTML content or a quoted attribute value.
fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

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

/// The web page: ask, see cited and checked answers.
#[utoipa::path(
    get, path = "/", operation_id = "page",
    responses((status = 200, description = "HTML.", content_type = "text/html", body = String))
)]
pub async fn index(State(state): State<crate::AppState>) -> Response {
    let mut response = state.page().clone().into_response();
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
    fn the_configured_words_are_escaped_and_the_script_is_untouched() {
        let page = PageSettings {
            title: "Handbook <b>".into(),
            corpus: "TTS \"handbook\"".into(),
            placeholder: "Ask \"me\" <anything>".into(),
            examples: vec!["What's <script>alert(1)</script>?".into()],
        };
        let html = render(&page);
        assert!(html.contains("<title>Handbook &lt;b&gt;</title>"), "{html}");
        assert!(html.contains("placeholder=\"Ask &quot;me&quot; &lt;anything&gt;\""));
        assert!(html.contains("Searching <strong>TTS &quot;handbook&quot;</strong>"));
        assert!(html.contains(
            "<button type=\"button\" class=\"example\">What&#39;s &lt;script&gt;alert(1)&lt;/script&gt;?</button>"
        ));
        assert!(!html.contains("{{"), "every slot is filled");
        let scripts: Vec<&str> = inline_scripts(&html).collect();
        assert_eq!(scripts, inline_scripts(INDEX_HTML).collect::<Vec<_>>());

        let plain = render(&PageSettings::plain());
        assert!(!plain.contains("id=\"corpus\"") && !plain.contains("id=\"examples\""));
        assert!(plain.contains("<title>groundcite</title>"));
    }

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
