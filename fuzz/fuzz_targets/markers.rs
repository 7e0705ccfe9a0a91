//! Citation markers: every span is inside the text on character
//! boundaries, in order; neutralising keeps the length and leaves no marker.
#![no_main]

use groundcite_text::Markers;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|text: &str| {
    let markers = Markers::parse(text);
    let mut last = 0;
    for m in &markers.markers {
        assert!(last <= m.start && m.start < m.end && m.end <= text.len());
        assert!(text.is_char_boundary(m.start) && text.is_char_boundary(m.end));
        assert_eq!(&text[m.start..m.start + 1], "[");
        last = m.end;
        for _ in markers.ids_of(m) {}
    }
    let neutral = groundcite_text::marker::neutralize(text);
    assert_eq!(neutral.len(), text.len());
    assert!(Markers::parse(&neutral).markers.is_empty());
});
