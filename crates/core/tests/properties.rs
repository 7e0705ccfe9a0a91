//! Property tests: spans slice back, nothing panics, cited ids are the ids
//! of the parsed markers.

use groundcite_core::marker::Markers;
use groundcite_core::sentence::segment;
use groundcite_core::{Report, refusal};
use proptest::prelude::*;

fn answerish() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        Just("Claims settle in 30 days".to_string()),
        Just(". ".to_string()),
        Just("? ".to_string()),
        Just("[2]".to_string()),
        Just("[1][3]".to_string()),
        Just("[1, 3]".to_string()),
        Just("[2-4]".to_string()),
        Just("[2–4]".to_string()),
        Just("[0]".to_string()),
        Just("[99999999999999999999999]".to_string()),
        Just("[text](https://x.example)".to_string()),
        Just("[^1]".to_string()),
        Just("\n".to_string()),
        Just("\n\n".to_string()),
        Just("- ".to_string()),
        Just("1. ".to_string()),
        Just("## ".to_string()),
        Just("e.g. ".to_string()),
        Just("U.S. ".to_string()),
        Just("$51.75".to_string()),
        Just("…".to_string()),
        Just("\"".to_string()),
        Just("é".to_string()),
        Just("Not covered by the provided documents.".to_string()),
        "[a-zA-Z0-9 .,\\[\\]\\-–!?\n]{0,12}",
        any::<String>(),
    ];
    prop::collection::vec(piece, 0..24).prop_map(|v| v.concat())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 1000, ..ProptestConfig::default() })]

    #[test]
    fn sentence_spans_slice_back(text in answerish()) {
        let mut last_end = 0;
        for s in segment(&text) {
            prop_assert!(s.start < s.end && s.end <= text.len());
            prop_assert!(text.is_char_boundary(s.start) && text.is_char_boundary(s.end));
            prop_assert!(s.start >= last_end, "sentences overlap");
            let t = &text[s.start..s.end];
            prop_assert_eq!(t.trim(), t);
            last_end = s.end;
        }
    }

    #[test]
    fn answer_unit_spans_slice_back_in_order(text in answerish()) {
        for u in groundcite_core::unit::units(&[("Section", &text)]) {
            prop_assert!(!u.spans.is_empty());
            let mut last_end = 0;
            for s in &u.spans {
                prop_assert!(s.start < s.end && s.end <= text.len());
                prop_assert!(text.is_char_boundary(s.start) && text.is_char_boundary(s.end));
                prop_assert!(s.start >= last_end, "spans out of order");
                last_end = s.end;
            }
        }
    }

    #[test]
    fn marker_spans_slice_back(text in answerish()) {
        let m = Markers::parse(&text);
        for mk in &m.markers {
            prop_assert!(text.is_char_boundary(mk.start) && text.is_char_boundary(mk.end));
            let t = &text[mk.span()];
            prop_assert!(t.starts_with('[') && t.ends_with(']'));
        }
    }

    #[test]
    fn cited_ids_are_exactly_the_marker_ids(text in answerish(), n in 0usize..6) {
        let r = Report::check(&text, n);
        let mut ids: Vec<u64> = r.markers.markers.iter().flat_map(|m| r.markers.ids_of(m)).collect();
        ids.sort_unstable();
        ids.dedup();
        prop_assert_eq!(&r.cited, &ids);
        let bad: Vec<u64> = ids.iter().copied().filter(|&id| id == 0 || id > n as u64).collect();
        prop_assert_eq!(&r.bad_ids, &bad);
        for s in &r.sentences {
            prop_assert!(text.is_char_boundary(s.start) && text.is_char_boundary(s.end));
        }
        prop_assert!((0.0..=1.0).contains(&r.coverage));
    }

    #[test]
    fn arbitrary_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..256), n in 0usize..4) {
        let text = String::from_utf8_lossy(&bytes);
        let r = Report::check(&text, n);
        let _ = refusal::detect(&text);
        prop_assert!(r.sentences.iter().all(|s| s.end <= text.len()));
    }
}
