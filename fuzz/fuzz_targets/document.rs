//! Ingest of one document (front matter, template tags, Markdown, HTML or
//! text, chunking, urls): an error or chunks whose spans are inside the
//! document; never a panic. The first byte picks the format.
#![no_main]

use groundcite_index::{IngestOptions, prepare_document};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&pick, rest)) = data.split_first() else {
        return;
    };
    let Ok(contents) = std::str::from_utf8(rest) else {
        return;
    };
    let path = ["page.md", "page.html", "page.txt"][usize::from(pick % 3)];
    let opts = IngestOptions::handbook();
    if let Ok(chunks) = prepare_document(path, contents, &opts, || "https://example.com/page/".into()) {
        for c in &chunks {
            assert!(!c.id.is_empty());
            assert!(!c.source_url.contains(['\n', '\r']), "{}", c.source_url);
        }
    }
});
