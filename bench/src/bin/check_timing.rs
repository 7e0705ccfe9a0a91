//! The Rust side of `bench/python-check.sh`: `Checker::check` (the full
//! check with the default lexical verifier) on every case of a JSONL file,
//! timed the way `bench/python_binding.py` times `groundcite.check` from
//! Python: the median over passes of the mean time per case.
//!
//! With `--verifier NAME` (`lexical`, `semantic`, `trained`), the check runs
//! with that verifier, its models from GROUNDCITE_MODEL_DIR (else the fetch
//! script's folder) and, for `trained`, GROUNDCITE_JUDGES_DIR (else the
//! repository's `models/groundcite-judges`), and a second line gives each
//! case's own median over the passes: their p50 and p90 over the cases, and
//! the p50 over the cases of each answer length in sentences.
//!
//! `cargo run --release -p groundcite-bench --bin check_timing -- ../shared/cases/dev.jsonl [PASSES] [--verifier NAME]`

use std::path::PathBuf;
use std::time::Instant;

use groundcite_core::case::Case;
use groundcite_engine::{Checker, Settings};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let mut verifier = None;
    if let Some(at) = args.iter().position(|a| a == "--verifier") {
        let name = args.get(at + 1).ok_or("--verifier needs a name")?.clone();
        verifier = Some(name);
        args.drain(at..at + 2);
    }
    let mut args = args.into_iter();
    let path = args
        .next()
        .ok_or("usage: check_timing CASES.jsonl [PASSES] [--verifier NAME]")?;
    let passes: usize = args.next().map(|p| p.parse()).transpose()?.unwrap_or(200);
    let text = std::fs::read_to_string(&path).map_err(|e| format!("{path}: {e}"))?;
    let cases: Vec<Case> = text
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(serde_json::from_str)
        .collect::<Result<_, _>>()?;
    let checker = match &verifier {
        None => Checker::new(Settings::default().check),
        Some(name) => {
            let mut settings = Settings::default();
            settings.check.verifier = serde_json::from_value(serde_json::json!(name))
                .map_err(|_| format!("--verifier {name}: lexical, semantic or trained"))?;
            let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
            settings.model_dir = Some(match std::env::var_os(groundcite_embed::MODEL_DIR_ENV) {
                Some(dir) => PathBuf::from(dir),
                None => root.join(groundcite_embed::DEFAULT_MODEL_DIR),
            });
            settings.judges_dir = Some(match std::env::var_os(groundcite_embed::JUDGES_DIR_ENV) {
                Some(dir) => PathBuf::from(dir),
                None => root.join(groundcite_embed::RELEASED_JUDGES_DIR),
            });
            let embedder = groundcite_engine::load_embedder(&settings)?;
            Checker::from_settings(&settings, embedder)?
        }
    };
    let mut samples = Vec::with_capacity(passes);
    let mut per_case = vec![Vec::with_capacity(passes); cases.len()];
    let mut lengths = vec![0; cases.len()];
    let mut sentences = 0;
    for _ in 0..passes {
        let started = Instant::now();
        for (i, case) in cases.iter().enumerate() {
            let one = Instant::now();
            let out = checker.check(case.question.as_deref(), &case.passages, &case.answer);
            per_case[i].push(one.elapsed().as_secs_f64() * 1e3);
            lengths[i] = std::hint::black_box(out).sentences.len();
            sentences += lengths[i];
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
    if let Some(name) = verifier {
        let medians: Vec<f64> = per_case
            .iter_mut()
            .map(|times| {
                times.sort_by(f64::total_cmp);
                times[times.len() / 2]
            })
            .collect();
        let quantile = |mut values: Vec<f64>, q: f64| {
            values.sort_by(f64::total_cmp);
            values
                .get(((values.len() as f64 * q) as usize).min(values.len().saturating_sub(1)))
                .copied()
                .unwrap_or(f64::NAN)
        };
        let mut by_length = std::collections::BTreeMap::<usize, Vec<f64>>::new();
        for (t, n) in medians.iter().zip(&lengths) {
            by_length.entry(*n).or_default().push(*t);
        }
        let by_length: Vec<String> = by_length
            .into_iter()
            .map(|(n, times)| {
                let count = times.len();
                format!("{n}: {:.2} ms ({count})", quantile(times, 0.5))
            })
            .collect();
        println!(
            "verifier {name}: per case p50 {:.2} ms, p90 {:.2} ms; p50 by sentences in the answer (cases): {}",
            quantile(medians.clone(), 0.5),
            quantile(medians, 0.9),
            by_length.join(", "),
        );
    }
    Ok(())
}
