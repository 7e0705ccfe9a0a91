//! `groundcite search`: the top-k chunks with normalised scores.

use std::io::Write;
use std::process::ExitCode;

use anyhow::Result;
use clap::Args;
use groundcite_engine::Engine;

use crate::args::{CommonArgs, GeneratorArgs, announce_demo, settings};
use crate::render::safe;

#[derive(Args)]
pub struct SearchArgs {
    query: String,
    /// How many chunks.
    #[arg(short, long, default_value_t = 5)]
    k: usize,
    #[arg(long)]
    json: bool,
}

pub fn run_search(common: &CommonArgs, args: SearchArgs) -> Result<ExitCode> {
    let settings = settings(common, &GeneratorArgs::default())?;
    announce_demo(&settings);
    let engine = Engine::from_settings(settings)?;
    let started = std::time::Instant::now();
    let hits = engine.search(&args.query, args.k)?;
    let elapsed = started.elapsed();
    let mut out = std::io::stdout().lock();
    if args.json {
        let json = serde_json::json!({"retrieval": engine.retrieval(), "hits": hits});
        serde_json::to_writer_pretty(&mut out, &json)?;
        writeln!(out)?;
        return Ok(ExitCode::SUCCESS);
    }
    for (i, h) in hits.iter().enumerate() {
        writeln!(
            out,
            "{:>2}. {:.2} (bm25 {:.2})  {}  <{}>",
            i + 1,
            h.score,
            h.raw_score,
            safe(&h.chunk.section),
            safe(&h.chunk.source_url)
        )?;
        let excerpt: String = h
            .chunk
            .text
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
            .chars()
            .take(160)
            .collect();
        writeln!(out, "      {}", safe(&excerpt))?;
    }
    writeln!(
        out,
        "({} hits in {:.2} ms, {} retrieval)",
        hits.len(),
        elapsed.as_secs_f64() * 1000.0,
        engine.retrieval().as_str()
    )?;
    Ok(ExitCode::SUCCESS)
}
