//! `groundcite ingest`, `search`, `ask` and `config`: the pipeline from a
//! folder of documents to a grounded answer.

use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, Result, bail};
use clap::Args;
use futures::StreamExt;
use groundcite_engine::{AskEvent, AskOptions, AskResult, Engine, GeneratorKind, Settings};
use groundcite_index::{ChunkIndex, Index, IngestOptions, Progress};

/// Options every command that reads or writes the index shares.
#[derive(Args, Clone, Default)]
pub struct CommonArgs {
    /// The index directory [default: $GROUNDCITE_INDEX, else ./.groundcite/index].
    #[arg(long, global = true)]
    pub index: Option<PathBuf>,
    /// A groundcite.toml file [default: $GROUNDCITE_CONFIG, else ./groundcite.toml if present].
    #[arg(long, global = true)]
    pub config: Option<PathBuf>,
}

/// Generator selection, the same for `ask` and `serve`.
#[derive(Args, Clone, Default)]
pub struct GeneratorArgs {
    /// extractive (default, offline), openai (any OpenAI-compatible server), anthropic, scripted.
    #[arg(long)]
    pub generator: Option<GeneratorKind>,
    /// Base url of the OpenAI-compatible or Anthropic server.
    #[arg(long)]
    pub base_url: Option<String>,
    /// Model name.
    #[arg(long)]
    pub model: Option<String>,
    /// For --generator scripted: a JSON array or JSONL file of outputs.
    #[arg(long)]
    pub script: Option<PathBuf>,
    /// Passages retrieved per question.
    #[arg(long)]
    pub top_k: Option<usize>,
    /// Retrieval gate threshold (0..1).
    #[arg(long)]
    pub gate_threshold: Option<f32>,
}

/// Settings: file, then environment, then these flags.
pub fn settings(common: &CommonArgs, generator: &GeneratorArgs) -> Result<Settings> {
    let mut s = Settings::load(common.config.as_deref())?;
    if let Some(index) = &common.index {
        s.index = index.clone();
    }
    if let Some(g) = generator.generator {
        s.generator = g;
    }
    if let Some(url) = &generator.base_url {
        s.set_base_url(url.clone());
    }
    if let Some(model) = &generator.model {
        s.set_model(model.clone());
    }
    if let Some(script) = &generator.script {
        s.script = Some(script.clone());
    }
    if let Some(k) = generator.top_k {
        s.top_k = k;
    }
    if let Some(t) = generator.gate_threshold {
        s.gate_threshold = t;
    }
    s.validate()?;
    Ok(s)
}

#[derive(Args)]
pub struct IngestArgs {
    /// Files or folders to ingest (Markdown, HTML, plain text).
    #[arg(required = true)]
    paths: Vec<PathBuf>,
    /// Url template over the file path, e.g. "https://handbook.example.com/{path}/".
    #[arg(long)]
    url_template: Option<String>,
    /// A path prefix removed before the template is applied (e.g. "pages/").
    #[arg(long)]
    strip_prefix: Option<String>,
    /// Base url joined to relative front-matter permalinks.
    #[arg(long)]
    base_url: Option<String>,
    /// Use the TTS handbook preset (url template and prefix).
    #[arg(long)]
    handbook: bool,
}

pub fn run_ingest(common: &CommonArgs, args: IngestArgs) -> Result<ExitCode> {
    let settings = settings(common, &GeneratorArgs::default())?;
    for p in &args.paths {
        if !p.exists() {
            bail!("{}: no such file or directory", p.display());
        }
    }
    let mut opts = if args.handbook {
        IngestOptions::handbook()
    } else {
        IngestOptions::default()
    };
    if args.url_template.is_some() {
        opts.url_template = args.url_template;
    }
    if args.strip_prefix.is_some() {
        opts.strip_prefix = args.strip_prefix;
    }
    if args.base_url.is_some() {
        opts.base_url = args.base_url;
    }
    let mut index = open_chunk_index(&settings.index)?;
    let started = std::time::Instant::now();
    let bar = std::io::stderr().is_terminal().then(|| {
        let bar = indicatif::ProgressBar::new(0);
        bar.set_style(
            indicatif::ProgressStyle::with_template("{bar:40} {pos}/{len} {wide_msg}")
                .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
        );
        bar
    });
    let summary = index.ingest(&args.paths, &opts, &mut |p| {
        if let Some(bar) = &bar {
            match p {
                Progress::Started { total_files } => bar.set_length(total_files as u64),
                Progress::File { path, done, .. } => {
                    bar.set_position(done as u64);
                    bar.set_message(path.display().to_string());
                }
                Progress::Committing => bar.set_message("committing"),
            }
        }
    })?;
    if let Some(bar) = bar {
        bar.finish_and_clear();
    }
    let mut out = std::io::stdout().lock();
    writeln!(
        out,
        "ingested into {}: {} files seen, {} indexed, {} unchanged, {} removed, {} skipped (unsupported), {} chunks written, {} errors, {:.2} s; {} chunks in the index",
        index.location(),
        summary.files_seen,
        summary.indexed,
        summary.unchanged,
        summary.removed,
        summary.skipped,
        summary.chunks,
        summary.errors.len(),
        started.elapsed().as_secs_f64(),
        index.num_chunks()?
    )?;
    for e in &summary.errors {
        eprintln!("groundcite: skipped {e}");
    }
    Ok(if summary.errors.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// The index for writing: PostgreSQL for a `postgres://` url, else the
/// embedded tantivy index in that directory.
fn open_chunk_index(location: &std::path::Path) -> Result<Box<dyn ChunkIndex>> {
    let text = location.to_string_lossy();
    if groundcite_pg::is_postgres_url(&text) {
        let index = groundcite_pg::PgIndex::connect(&text, groundcite_pg::PgOptions::default())?;
        return Ok(Box::new(index));
    }
    let index = Index::open_or_create(location)
        .with_context(|| format!("cannot open the index in {}", location.display()))?;
    Ok(Box::new(index))
}

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
    let engine = Engine::from_settings(settings)?;
    let started = std::time::Instant::now();
    let hits = engine.search(&args.query, args.k)?;
    let elapsed = started.elapsed();
    let mut out = std::io::stdout().lock();
    if args.json {
        serde_json::to_writer_pretty(&mut out, &hits)?;
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
            h.chunk.section,
            h.chunk.source_url
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
        writeln!(out, "      {excerpt}")?;
    }
    writeln!(
        out,
        "({} hits in {:.2} ms)",
        hits.len(),
        elapsed.as_secs_f64() * 1000.0
    )?;
    Ok(ExitCode::SUCCESS)
}

#[derive(Args)]
pub struct AskArgs {
    question: String,
    #[command(flatten)]
    generator: GeneratorArgs,
    /// Print the full structured result as JSON.
    #[arg(long)]
    json: bool,
    /// Print sentences as they are validated.
    #[arg(long)]
    stream: bool,
}

pub fn run_ask(common: &CommonArgs, args: AskArgs) -> Result<ExitCode> {
    let settings = settings(common, &args.generator)?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    runtime.block_on(async move {
        let engine = Engine::from_settings(settings)?;
        let opts = AskOptions::default();
        let result = if args.stream {
            let mut events = engine.ask_stream(&args.question, &opts);
            let mut result = None;
            let mut out = std::io::stdout().lock();
            while let Some(event) = events.next().await {
                match event {
                    AskEvent::Sentence { text, verdict, .. } => {
                        if !args.json {
                            writeln!(out, "[{verdict}] {text}")?;
                            out.flush()?;
                        }
                    }
                    AskEvent::Final(r) => result = Some(*r),
                    AskEvent::Error(e) => return Err(anyhow::Error::new(e)),
                }
            }
            result.context("the stream ended without a result")?
        } else {
            engine.ask(&args.question, &opts).await?
        };
        let mut out = std::io::stdout().lock();
        if args.json {
            serde_json::to_writer_pretty(&mut out, &result)?;
            writeln!(out)?;
        } else {
            print_answer(&mut out, &result)?;
        }
        Ok(ExitCode::SUCCESS)
    })
}

fn print_answer(out: &mut dyn Write, r: &AskResult) -> Result<()> {
    writeln!(out, "{}\n", r.answer)?;
    if let Some(refusal) = &r.refusal {
        let reason = serde_json::to_value(refusal.reason)?;
        writeln!(out, "refused ({})", reason.as_str().unwrap_or("?"))?;
    } else {
        for s in r.sentences.iter().filter(|s| s.factual) {
            if s.verdict.is_flagged() || s.verdict.as_str() == "uncited" {
                writeln!(
                    out,
                    "  ! {}: {} {}",
                    s.verdict.as_str(),
                    s.text,
                    s.reasons.join("; ")
                )?;
            }
        }
        if !r.sources.is_empty() {
            writeln!(out, "sources:")?;
            for s in &r.sources {
                let nums: String = s.passages.iter().map(|k| format!("[{k}]")).collect();
                writeln!(
                    out,
                    "  {nums} {} <{}>\n      \"{}\"",
                    s.label, s.url, s.quote
                )?;
            }
        }
    }
    let t = &r.timings;
    writeln!(
        out,
        "\nstatus: {}   grounded: {}   coverage: {:.0}%   generator: {}{}\ntimings: retrieve {:.1} ms, generate {:.1} ms, check {:.1} ms, total {:.1} ms",
        r.status.as_str(),
        if r.grounded { "yes" } else { "no" },
        r.coverage * 100.0,
        r.generator,
        if r.regenerated {
            " (regenerated once)"
        } else {
            ""
        },
        t.retrieve_ms,
        t.generate_ms,
        t.check_ms,
        t.total_ms
    )?;
    Ok(())
}

#[derive(Args)]
pub struct ConfigArgs {
    #[command(flatten)]
    generator: GeneratorArgs,
}

pub fn run_config(common: &CommonArgs, args: ConfigArgs) -> Result<ExitCode> {
    let settings = settings(common, &args.generator)?;
    print!("{}", settings.to_masked_toml());
    Ok(ExitCode::SUCCESS)
}
