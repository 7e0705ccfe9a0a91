//! HaluEval QA: right answers must come out `Supported`, hallucinated ones flagged.
//!
//! `cargo run --release -p groundcite-bench --bin halueval -- /work/shared/datasets/halueval/qa-dev.jsonl`
//! Add `--show-misses N` to print up to N misses of rows 0..1000 (the tuning half).

use groundcite_verify::{Claim, LexicalVerifier, Verdict, Verifier};

#[derive(serde::Deserialize)]
struct Row {
    knowledge: String,
    question: String,
    right_answer: String,
    hallucinated_answer: String,
}

fn judge(v: &LexicalVerifier, row: &Row, answer: &str) -> groundcite_verify::Judgement {
    let text = format!("{} [1]", answer.trim());
    let claims = [Claim {
        text: &text,
        cited: &[1],
    }];
    v.verify(Some(&row.question), &[row.knowledge.as_str()], &claims)
        .remove(0)
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let path = args
        .get(1)
        .map(String::as_str)
        .unwrap_or("/work/shared/datasets/halueval/qa-dev.jsonl");
    let show: usize = args
        .iter()
        .position(|a| a == "--show-misses")
        .and_then(|i| args.get(i + 1))
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    let data = std::fs::read_to_string(path).expect("read the HaluEval file");
    let rows: Vec<Row> = data
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).expect("row"))
        .collect();
    // Optional overrides for tuning: SUPPORT_CONFIG='{"adjacent_factor":0.5}'
    let config = std::env::var("SUPPORT_CONFIG")
        .ok()
        .map(|s| serde_json::from_str(&s).expect("SUPPORT_CONFIG is a SupportConfig JSON object"))
        .unwrap_or_default();
    let v = LexicalVerifier::new(config);
    let mut results = Vec::with_capacity(rows.len());
    let mut shown = 0;
    let start = std::time::Instant::now();
    for (i, row) in rows.iter().enumerate() {
        let r = judge(&v, row, &row.right_answer);
        let h = judge(&v, row, &row.hallucinated_answer);
        let right_ok = r.verdict == Verdict::Supported;
        let hall_ok = h.verdict != Verdict::Supported;
        if i < 1000 && shown < show && (!right_ok || !hall_ok) {
            shown += 1;
            println!("--- row {i}\nQ: {}\nK: {}", row.question, row.knowledge);
            if !right_ok {
                println!(
                    "RIGHT flagged: {} -> {:?} {}",
                    row.right_answer,
                    r.verdict,
                    reasons(&r)
                );
            }
            if !hall_ok {
                println!(
                    "HALLU passed:  {} -> {}",
                    row.hallucinated_answer,
                    reasons(&h)
                );
            }
        }
        results.push((right_ok, hall_ok));
    }
    let elapsed = start.elapsed();
    let report = |name: &str, slice: &[(bool, bool)]| {
        if slice.is_empty() {
            return;
        }
        let n = slice.len() as f64;
        let right = slice.iter().filter(|r| r.0).count() as f64 / n;
        let hall = slice.iter().filter(|r| r.1).count() as f64 / n;
        println!(
            "{name:<12} n={:<5} right->Supported {:6.2}%  hallucinated->flagged {:6.2}%  balanced {:6.2}%",
            slice.len(),
            right * 100.0,
            hall * 100.0,
            (right + hall) * 50.0
        );
    };
    let split = results.len().min(1000);
    report("rows 0..1000", &results[..split]);
    report("rows 1000..", &results[split..]);
    report("overall", &results);
    println!(
        "{} verifications in {:.1} ms",
        results.len() * 2,
        elapsed.as_secs_f64() * 1e3
    );
}

fn reasons(j: &groundcite_verify::Judgement) -> String {
    j.reasons
        .iter()
        .map(|r| r.to_string())
        .collect::<Vec<_>>()
        .join("; ")
}
