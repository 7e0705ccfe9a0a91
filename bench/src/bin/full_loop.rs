//! Runs the full check (structure, support, sources) on one of the bench's
//! 5-passage cases many times: for instruction counts under
//! `valgrind --tool=callgrind` and quick timings.
//! `cargo run --release -p groundcite-bench --bin full_loop [PASSES] [rule4|kb]`
//! (`rule4`: `full_check_5_passages_3_sentences`, the default; `kb`:
//! `full_check_5x1KB_3_sentences`).
use groundcite_core::check::check;
use groundcite_core::config::CheckConfig;
use groundcite_verify::LexicalVerifier;
use std::hint::black_box;

#[path = "../../../crates/verify/benches/data.rs"]
mod data;

#[path = "../../../crates/core/benches/cases.rs"]
mod cases;

fn main() {
    let (passages, answer, question) = if std::env::args().nth(2).as_deref() == Some("kb") {
        cases::five_kb_case()
    } else {
        cases::five_passage_case()
    };
    let passes: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(20_000);
    let config = CheckConfig::default();
    let verifier = LexicalVerifier::default();
    let start = std::time::Instant::now();
    for _ in 0..passes {
        black_box(check(
            Some(&question),
            black_box(&passages),
            black_box(&answer),
            &config,
            &verifier,
        ));
    }
    let per = start.elapsed().as_nanos() as f64 / passes as f64;
    println!("{per:.0} ns per check over {passes} passes");
}
