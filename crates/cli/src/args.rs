//! Options shared by the commands that read the configuration: the index
//! and config file flags, the generator flags, and the settings they make.

use std::path::PathBuf;

use anyhow::Result;
use clap::Args;
use groundcite_engine::{Configured, GeneratorKind, Override, Settings};

/// Options every command that reads or writes the index shares.
#[derive(Args, Clone, Default)]
pub struct CommonArgs {
    /// The index directory [default: $GROUNDCITE_INDEX, else ./.groundcite/index].
    #[arg(long, global = true)]
    pub index: Option<PathBuf>,
    /// A groundcite.toml file [default: $GROUNDCITE_CONFIG, else ./groundcite.toml if present].
    #[arg(long, global = true)]
    pub config: Option<PathBuf>,
    /// A sentence-transformers model folder for semantic retrieval and checking
    /// [default: $GROUNDCITE_MODEL_DIR, else none: lexical only].
    #[arg(long, global = true)]
    pub model_dir: Option<PathBuf>,
    /// groundcite's trained judges, for `--set check.verifier=trained`
    /// [default: $GROUNDCITE_JUDGES_DIR, else none].
    #[arg(long, global = true)]
    pub judges_dir: Option<PathBuf>,
    /// Set any configuration key, e.g. --set check.bad_id_policy=refuse
    /// (repeatable; over the file and the environment; `groundcite config
    /// --show-origin` lists every key).
    #[arg(long = "set", global = true, value_name = "KEY=VALUE")]
    pub set: Vec<String>,
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
    let settings = configured(common, generator)?.settings;
    settings.validate()?;
    Ok(settings)
}

/// The layered configuration with the origin of each value: the flags
/// are its last layer (`--set` first, then the named flags).
pub fn configured(common: &CommonArgs, generator: &GeneratorArgs) -> Result<Configured> {
    let mut flags = Vec::new();
    for set in &common.set {
        flags.push(Override::parse_set(set)?);
    }
    let path = |p: &PathBuf| p.to_string_lossy().into_owned();
    if let Some(index) = &common.index {
        flags.push(Override::flag("index", path(index), "--index"));
    }
    if let Some(dir) = &common.model_dir {
        flags.push(Override::flag("model_dir", path(dir), "--model-dir"));
    }
    if let Some(dir) = &common.judges_dir {
        flags.push(Override::flag("judges_dir", path(dir), "--judges-dir"));
    }
    if let Some(g) = generator.generator {
        flags.push(Override::flag("generator", g.as_str(), "--generator"));
    }
    if let Some(url) = &generator.base_url {
        flags.push(Override::flag("base_url", url, "--base-url"));
    }
    if let Some(model) = &generator.model {
        flags.push(Override::flag("model", model, "--model"));
    }
    if let Some(script) = &generator.script {
        flags.push(Override::flag("script", path(script), "--script"));
    }
    if let Some(k) = generator.top_k {
        flags.push(Override::flag("top_k", k.to_string(), "--top-k"));
    }
    if let Some(t) = generator.gate_threshold {
        flags.push(Override::flag(
            "gate_threshold",
            t.to_string(),
            "--gate-threshold",
        ));
    }
    Ok(Settings::configure(
        common.config.as_deref(),
        &groundcite_engine::settings::env_vars(),
        &flags,
    )?)
}

/// Says, on stderr, that the first run ingests the embedded demo handbook
/// (before the engine does it), and how to use one's own documents. Quiet
/// when the index exists or is elsewhere.
pub fn announce_demo(settings: &Settings) {
    if settings.is_demo_index() && !settings.index.exists() {
        eprintln!(
            "groundcite: no index yet at {}: ingesting the embedded demo handbook there \
             (policies of a fictional company) so you can try it. For your own documents: \
             groundcite ingest PATH... (or --index DIR)",
            settings.index.display()
        );
    }
}
