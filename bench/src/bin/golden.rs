//! Regression tool: prints every judgement (verdict, reasons, evidence, suggested, idle) over
//! the dev cases, all 2,000 HaluEval QA rows (plus multi-passage variants that exercise Rule 4,
//! damping, idle citations and uncited claims) and the bench case, one per line.
//!
//! Record before a change, compare after it (any difference is a behaviour change):
//!
//! ```sh
//! cargo run --release -p groundcite-bench --bin golden > /tmp/golden-before.txt
//! # ... change ...
//! cargo run --release -p groundcite-bench --bin golden | diff /tmp/golden-before.txt -
//! ```
//!
//! The data are read from `shared/` beside the repository, as the tests do (override with the
//! dev-cases path and the HaluEval path as first and second arguments).

use groundcite_verify::{Claim, Judgement, LexicalVerifier, Verifier};
use serde_json::Value;

#[path = "../../../crates/verify/benches/data.rs"]
mod data;

/// Split after `.`/`!`/`?` followed by whitespace (as `tests/dev_cases.rs`).
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

fn print(tag: &str, i: usize, j: &Judgement) {
    let reasons: Vec<String> = j.reasons.iter().map(|r| r.to_string()).collect();
    let ev = j
        .evidence
        .as_ref()
        .map(|e| format!("{}:{}..{}", e.passage, e.start, e.end));
    println!(
        "{tag}#{i} {:?} {reasons:?} ev={ev:?} sugg={:?} idle={:?}",
        j.verdict, j.suggested, j.idle_citations
    );
}

#[derive(serde::Deserialize)]
struct Row {
    knowledge: String,
    question: String,
    right_answer: String,
    hallucinated_answer: String,
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let dev = args.get(1).map(String::as_str).unwrap_or(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../shared/cases/dev.jsonl"
    ));
    let hal = args.get(2).map(String::as_str).unwrap_or(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../shared/datasets/halueval/qa-dev.jsonl"
    ));
    let v = LexicalVerifier::default();

    // Dev cases: every sentence alone, all sentences in one call, each sentence uncited.
    let data = std::fs::read_to_string(dev).expect("read dev cases");
    for line in data.lines().filter(|l| !l.trim().is_empty()) {
        let case: Value = serde_json::from_str(line).unwrap();
        let id = case["id"].as_str().unwrap_or("?").to_owned();
        let passages: Vec<&str> = case["passages"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p["text"].as_str().unwrap())
            .collect();
        let question = case["question"].as_str();
        let sentences = split_sentences(case["answer"].as_str().unwrap());
        let cites: Vec<Vec<usize>> = sentences.iter().map(|s| cited(s, passages.len())).collect();
        for (i, s) in sentences.iter().enumerate() {
            let j = v.verify(
                question,
                &passages,
                &[Claim {
                    text: s,
                    cited: &cites[i],
                }],
            );
            print(&format!("dev:{id}:one"), i, &j[0]);
            let j = v.verify(
                None,
                &passages,
                &[Claim {
                    text: s,
                    cited: &[],
                }],
            );
            print(&format!("dev:{id}:uncited"), i, &j[0]);
        }
        let claims: Vec<Claim<'_>> = sentences
            .iter()
            .zip(&cites)
            .map(|(s, c)| Claim { text: s, cited: c })
            .collect();
        for (i, j) in v.verify(question, &passages, &claims).iter().enumerate() {
            print(&format!("dev:{id}:all"), i, j);
        }
    }

    // HaluEval: the test's setup, plus three-passage variants.
    let data = std::fs::read_to_string(hal).expect("read HaluEval");
    let rows: Vec<Row> = data
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).expect("row"))
        .collect();
    for (r, row) in rows.iter().enumerate() {
        let right = format!("{} [1]", row.right_answer.trim());
        let hall = format!("{} [1]", row.hallucinated_answer.trim());
        let claims = [
            Claim {
                text: &right,
                cited: &[1],
            },
            Claim {
                text: &hall,
                cited: &[1],
            },
        ];
        let j = v.verify(Some(&row.question), &[row.knowledge.as_str()], &claims);
        print(&format!("hal:{r}"), 0, &j[0]);
        print(&format!("hal:{r}"), 1, &j[1]);

        let n = rows.len();
        let passages = [
            rows[(r + 1) % n].knowledge.as_str(),
            row.knowledge.as_str(),
            rows[(r + 2) % n].knowledge.as_str(),
        ];
        let claims = [
            Claim {
                text: &right,
                cited: &[1],
            },
            Claim {
                text: &hall,
                cited: &[2],
            },
            Claim {
                text: &right,
                cited: &[2, 3],
            },
            Claim {
                text: row.right_answer.trim(),
                cited: &[],
            },
            Claim {
                text: row.hallucinated_answer.trim(),
                cited: &[],
            },
        ];
        let q = if r % 2 == 0 {
            Some(row.question.as_str())
        } else {
            None
        };
        for (i, j) in v.verify(q, &passages, &claims).iter().enumerate() {
            print(&format!("hal3:{r}"), i, j);
        }
    }

    // The bench case.
    for (i, j) in v
        .verify(data::QUESTION, &data::PASSAGES, &data::CLAIMS)
        .iter()
        .enumerate()
    {
        print("bench", i, j);
    }
}
