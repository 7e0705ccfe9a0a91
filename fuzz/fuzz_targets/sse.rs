//! The server-sent-events parser: the same events whatever the chunking
//! of the bytes (split at every point the first byte picks).
#![no_main]

use groundcite_llm::sse::SseParser;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&step, bytes)) = data.split_first() else {
        return;
    };
    let mut whole = SseParser::default();
    let Ok(mut expected) = whole.push(bytes) else {
        return;
    };
    expected.extend(whole.finish());
    let mut chunked = SseParser::default();
    let mut got = Vec::new();
    for chunk in bytes.chunks(usize::from(step).max(1)) {
        got.extend(chunked.push(chunk).expect("a chunking of accepted bytes is accepted"));
    }
    got.extend(chunked.finish());
    assert_eq!(got, expected);
});
