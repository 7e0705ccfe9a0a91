//! Runs the structural check over the dev answers many times: for
//! instruction counts under `valgrind --tool=callgrind` and quick timings.
//! `cargo run --release -p groundcite-bench --bin structural_loop [PASSES]`
use groundcite_core::Report;
use groundcite_core::case::Case;
use std::hint::black_box;

fn main() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../shared/cases/dev.jsonl");
    let text = std::fs::read_to_string(path).expect("shared/cases/dev.jsonl");
    let cases: Vec<Case> = text
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let passes: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(20_000);
    let mut report = Report::default();
    let start = std::time::Instant::now();
    for _ in 0..passes {
        for c in &cases {
            report.recheck(black_box(&c.answer), c.passages.len());
            black_box(&report);
        }
    }
    let per = start.elapsed().as_nanos() as f64 / (passes * cases.len()) as f64;
    println!(
        "{per:.0} ns per answer over {} answers x {passes} passes",
        cases.len()
    );
}
