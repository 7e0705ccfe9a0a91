//! Options shared by the commands that read the configuration: the index
//! and config file flags, the generator flags, and the settings they make.

use std::path::PathBuf;

use anyhow::Result;
use clap::Args;
use groundcite_engine::{GeneratorKind, Settings};

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
    if let Some(dir) = &common.model_dir {
        s.model_dir = Some(dir.clone());
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
