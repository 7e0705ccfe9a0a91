//! The Rust side of `bench/python-check.sh`: `Checker::check` (the full
//! check with the default lexical verifier) on every case of a JSONL file,
//! timed the way `bench/python_binding.py` times `groundcite.check` from
//! Python: the median over passes of the mean time per case.
//!
//! `cargo run --release -p groundcite-bench --bin check_timing -- ../shared/cases/dev.jsonl [PASSES]`

use std::time::Instant;

use groundcite_core::case::Case;
use groundcite_engine::{Checker, Settings};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let path = args
        .next()
        .ok_or("usage: check_timing CASES.jsonl [PASSES]")?;
    let passes: usize = args.next().map(|p| p.parse()).transpose()?.unwrap_or(200);
    let text = std::fs::read_to_string(&path).map_err(|e| format!("{path}: {e}"))?;
    let cases: Vec<Case> = text
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(serde_json::from_str)
        .collect::<Result<_, _>>()?;
    let checker = Checker::new(Settings::default().check);
    let mut samples = Vec::with_capacity(passes);
    let mut sentences = 0;
    for _ in 0..passes {
        let started = Instant::now();
        for case in &cases {
            let out = checker.check(case.question.as_deref(), &case.passages, &case.answer);
            sentences += std::hint::black_box(out).sentences.len();
        }
        samples.push(started.elapsed().as_nanos() as f64 / cases.len() as f64);
    }
    samples.sort_by(f64::total_cmp);
    let median = samples[samples.len() / 2];
    println!(
        "rust Checker::check: {median:.0} ns per case (median of {passes} passes over {} cases; {} sentences checked)",
        cases.len(),
        sentences / passes
    );
    Ok(())
}
