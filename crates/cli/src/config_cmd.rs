//! `groundcite config`: the effective configuration, secrets masked.

use std::process::ExitCode;

use anyhow::Result;
use clap::Args;

use crate::args::{CommonArgs, GeneratorArgs, settings};

#[derive(Args)]
pub struct ConfigArgs {
    #[command(flatten)]
    generator: GeneratorArgs,
}

pub fn run_config(common: &CommonArgs, args: ConfigArgs) -> Result<ExitCode> {
    let settings = settings(common, &args.generator)?;
    print!("{}", settings.to_masked_toml());
    // Which path runs is never silent: the model is loaded here, so a
    // configured folder that is broken fails now, naming the file.
    let postgres = groundcite_pg::is_postgres_url(&settings.index.to_string_lossy());
    match groundcite_engine::load_embedder(&settings)? {
        Some(model) if postgres => println!(
            "# retrieval: lexical (embedding model {} loaded; the PostgreSQL backend has no vectors yet)",
            model.model_id()
        ),
        Some(model) => println!(
            "# retrieval: hybrid (dense vectors of {} fused with BM25; the index must be ingested with this model)",
            model.model_id()
        ),
        None => println!("# retrieval: lexical ({})", groundcite_embed::NO_MODEL_HINT),
    }
    Ok(ExitCode::SUCCESS)
}
