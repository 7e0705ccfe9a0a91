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
    Ok(ExitCode::SUCCESS)
}
