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
    match groundcite_engine::load_embedder(&settings)? {
        Some(model) => println!("# embedding model: {} (loaded)", model.model_id()),
        None => println!("# retrieval: lexical ({})", groundcite_embed::NO_MODEL_HINT),
    }
    Ok(ExitCode::SUCCESS)
}
