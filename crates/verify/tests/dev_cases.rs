//! The labelled dev cases of `shared/cases/dev.jsonl` (without `../shared`, the fixtures' part of
//! them): every contradicted sentence flagged as contradicted, at least 90% of unsupported ones
//! flagged, at most 1 in 20 supported ones flagged.

use groundcite_verify::{Claim, LexicalVerifier, Verdict, Verifier};
use serde_json::Value;

/// Split after `.`/`!`/`?` followed by whitespace.
fn split_sentences(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let bytes = text.as_bytes();
    let mut start = 0;
    for i in 0..bytes.len() {
        if matches!(bytes[i], b'.' | b'!' | b'?')
            && bytes.get(i + 1).is_some_and(|b| b.is_ascii_whitespace())
        {
            out.push(text[start..=i].trim());
            start = i + 1;
        }
    }
    if !text[start..].trim().is_empty() {
        out.push(text[start..].trim());
    }
    out
}

/// Numbers in `[n]`, `[1][3]`, `[1, 3]` markers that are valid passage numbers.
fn cited(sentence: &str, n_passages: usize) -> Vec<usize> {
    let mut out = Vec::new();
    let mut rest = sentence;
    while let Some(open) = rest.find('[') {
        let Some(close) = rest[open..].find(']') else {
            break;
        };
        let inner = &rest[open + 1..open + close];
        for part in inner.split(',') {
            if let Ok(k) = part.trim().parse::<usize>()
                && (1..=n_passages).contains(&k)
                && !out.contains(&k)
            {
                out.push(k);
            }
        }
        rest = &rest[open + close + 1..];
    }
    out.sort_unstable();
    out
}

#[test]
fn dev_cases() {
    // Every dev case when ../shared is there, else the fixtures' part of them.
    let (data, _) = groundcite_testdata::read_shared_or_fixture("cases/dev.jsonl");
    let verifier = LexicalVerifier::default();
    let (mut contra, mut contra_ok) = (0, 0);
    let (mut unsup, mut unsup_ok) = (0, 0);
    let (mut sup, mut sup_flagged) = (0, 0);
    let mut unmarked = 0;
    let mut failures = Vec::new();
    for line in data.lines().filter(|l| !l.trim().is_empty()) {
        let case: Value = serde_json::from_str(line).unwrap();
        let passages: Vec<&str> = case["passages"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p["text"].as_str().unwrap())
            .collect();
        let question = case["question"].as_str();
        let answer = case["answer"].as_str().unwrap();
        let sentences = split_sentences(answer);
        for label in case["labels"]["sentences"].as_array().unwrap() {
            let needle = label["match"].as_str().unwrap();
            let label = label["label"].as_str().unwrap();
            let sentence = sentences
                .iter()
                .find(|s| s.contains(needle))
                .expect("labelled sentence");
            let cites = cited(sentence, passages.len());
            let j = verifier
                .verify(
                    question,
                    &passages,
                    &[Claim {
                        text: sentence,
                        cited: &cites,
                    }],
                )
                .remove(0);
            let reasons: Vec<String> = j.reasons.iter().map(|r| r.to_string()).collect();
            println!(
                "{} [{label}] {sentence:?} -> {:?} {reasons:?} suggested {:?}",
                case["id"], j.verdict, j.suggested
            );
            match label {
                "contradicted" => {
                    contra += 1;
                    if j.verdict == Verdict::Contradicted {
                        contra_ok += 1;
                    } else {
                        failures.push(format!("{}: {sentence}", case["id"]));
                    }
                }
                "unsupported" => {
                    unsup += 1;
                    if j.verdict != Verdict::Supported {
                        unsup_ok += 1;
                    }
                }
                "supported" => {
                    sup += 1;
                    if j.verdict != Verdict::Supported {
                        sup_flagged += 1;
                        failures.push(format!("{} (false alarm): {sentence}", case["id"]));
                    }
                }
                "unmarked" => {
                    unmarked += 1;
                    assert!(
                        cites.is_empty(),
                        "unmarked sentence with markers: {sentence}"
                    );
                }
                other => panic!("unknown label {other}"),
            }
        }
    }
    println!(
        "contradicted {contra_ok}/{contra}, unsupported flagged {unsup_ok}/{unsup}, supported flagged {sup_flagged}/{sup}, unmarked {unmarked}"
    );
    assert_eq!(contra_ok, contra, "contradicted misses: {failures:?}");
    assert!(
        unsup_ok * 10 >= unsup * 9,
        "unsupported flagged {unsup_ok}/{unsup}"
    );
    assert!(
        sup_flagged * 20 <= sup,
        "false alarms {sup_flagged}/{sup}: {failures:?}"
    );
}
