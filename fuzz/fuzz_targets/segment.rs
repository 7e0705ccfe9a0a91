//! Sentences of answers and of passages: spans in order, inside the text,
//! on character boundaries.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|text: &str| {
    let mut last = 0;
    for s in groundcite_text::segment::segment(text) {
        assert!(last <= s.start && s.start <= s.end && s.end <= text.len(), "{s:?}");
        assert!(text.is_char_boundary(s.start) && text.is_char_boundary(s.end));
        last = s.end;
    }
    let mut spans = Vec::new();
    groundcite_text::sentence_spans(text, &mut spans);
    for &(start, end) in &spans {
        let (start, end) = (start as usize, end as usize);
        assert!(start <= end && end <= text.len(), "{start}..{end}");
        assert!(text.is_char_boundary(start) && text.is_char_boundary(end));
    }
});
