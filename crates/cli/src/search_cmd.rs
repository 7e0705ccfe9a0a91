//! `groundcite search`: the top-k chunks with normalised scores.

use std::io::Write;
use std::process::ExitCode;

use anyhow::Result;
use clap::Args;
use groundcite_engine::Engine;

use crate::args::{CommonArgs, GeneratorArgs, announce_demo, settings};
use crate::render::{self, safe};

const AFTER_HELP: &str = "\
Each hit shows two scores. `score` is what the gate reads: the share of
the query's terms the chunk contains, weighted by how rare each term is
(0..1; 1.00 means every term was found, so several hits can read 1.00).
`bm25` is the raw BM25 score that ranks them (term frequency and chunk
length included); with a model, `score` is the hybrid fusion's.

Examples:
  groundcite search \"reimbursement deadline\"
  groundcite search --top-k 10 \"travel card\"
  groundcite --index /tmp/tts search --json \"sick leave for bereavement\"";

#[derive(Args)]
#[command(after_help = AFTER_HELP)]
pub struct SearchArgs {
    /// The words to search for (a question works too).
    query: String,
    /// How many chunks, 1..=50 [default: the configured top_k, 5]. The same
    /// key and check as `ask --top-k`.
    #[arg(short = 'k', long = "top-k", visible_alias = "k")]
    top_k: Option<usize>,
    /// Print `{retrieval, hits}` as JSON: each hit's chunk (id, text,
    /// section, source url, offsets), `score` and `raw_score` (bm25).
    #[arg(long)]
    json: bool,
}

pub fn run_search(common: &CommonArgs, args: SearchArgs) -> Result<ExitCode> {
    let generator = GeneratorArgs {
        top_k: args.top_k,
        ..GeneratorArgs::default()
    };
    let settings = settings(common, &generator)?;
    announce_demo(&settings);
    let k = settings.top_k;
    let engine = Engine::from_settings(settings)?;
    let started = std::time::Instant::now();
    let hits = engine.search(&args.query, k)?;
    let elapsed = started.elapsed();
    let mut out = anstream::stdout().lock();
    if args.json {
        let json = serde_json::json!({"retrieval": engine.retrieval(), "hits": hits});
        serde_json::to_writer_pretty(&mut out, &json)?;
        writeln!(out)?;
        return Ok(ExitCode::SUCCESS);
    }
    for (i, h) in hits.iter().enumerate() {
        writeln!(
            out,
            "{:>2}. score {:.2}  {}  {}  <{}>",
            i + 1,
            h.score,
            render::paint(render::style::DIM, format_args!("bm25 {:.2}", h.raw_score)),
            safe(&render::plain_text(&h.chunk.section)),
            safe(&h.chunk.source_url)
        )?;
        let excerpt: String = render::plain_text(&h.chunk.text)
            .chars()
            .take(160)
            .collect();
        writeln!(out, "      {}", safe(&excerpt))?;
    }
    writeln!(
        out,
        "({} hits in {:.2} ms, {} retrieval; `groundcite search --help` explains the scores)",
        hits.len(),
        elapsed.as_secs_f64() * 1000.0,
        engine.retrieval().as_str()
    )?;
    Ok(ExitCode::SUCCESS)
}
