//! `groundcite config`: the effective configuration, secrets masked, and
//! where each value came from.

use std::io::Write;
use std::process::ExitCode;

use anyhow::Result;
use clap::Args;
use groundcite_engine::settings::secret_state;

use crate::args::{CommonArgs, GeneratorArgs, configured};

const AFTER_HELP: &str = "\
Every key can come from the file, the environment or a flag: `top_k` is
GROUNDCITE_TOP_K or --set top_k=8, `check.bad_id_policy` is
GROUNDCITE_CHECK__BAD_ID_POLICY or --set check.bad_id_policy=refuse.
A flag overrides the environment, which overrides the file.

Examples:
  groundcite config
  groundcite config --show-origin
  GROUNDCITE_CHECK__BAD_ID_POLICY=refuse groundcite config --show-origin --json
  groundcite --set top_k=8 --config groundcite.toml config --show-origin";

#[derive(Args)]
#[command(after_help = AFTER_HELP)]
pub struct ConfigArgs {
    #[command(flatten)]
    generator: GeneratorArgs,
    /// Print every key with its value and where the value came from
    /// (default, file PATH, env VAR, flag --FLAG).
    #[arg(long)]
    show_origin: bool,
    /// Print JSON: `settings`, `origins` (each key's source), `secrets`
    /// (set or not, never the value) and `retrieval`.
    #[arg(long)]
    json: bool,
}

pub fn run_config(common: &CommonArgs, args: ConfigArgs) -> Result<ExitCode> {
    let configured = configured(common, &args.generator)?;
    let settings = &configured.settings;
    settings.validate()?;
    // Which path runs is never silent: the model is loaded here, so a
    // configured folder that is broken fails now, naming the file.
    let postgres = groundcite_pg::is_postgres_url(&settings.index.to_string_lossy());
    let (retrieval, note) = match groundcite_engine::load_embedder(settings)? {
        Some(model) => (
            "hybrid",
            format!(
                "dense vectors of {} fused with {}; the index must be ingested with this model",
                model.model_id(),
                if postgres {
                    "PostgreSQL full-text search"
                } else {
                    "BM25"
                }
            ),
        ),
        None => ("lexical", groundcite_embed::NO_MODEL_HINT.to_string()),
    };
    let secrets: Vec<(&str, &str)> = [
        &settings.openai.api_key_env,
        &settings.anthropic.api_key_env,
    ]
    .into_iter()
    .map(|var| (var.as_str(), secret_state(var)))
    .collect();
    let mut out = std::io::stdout().lock();
    if args.json {
        let origins: serde_json::Map<String, serde_json::Value> = configured
            .entries()
            .into_iter()
            .map(|e| (e.key, serde_json::to_value(e.origin).unwrap_or_default()))
            .collect();
        let json = serde_json::json!({
            "settings": settings.masked(),
            "origins": origins,
            "secrets": secrets.iter().map(|(var, state)| serde_json::json!({"variable": var, "state": state})).collect::<Vec<_>>(),
            "retrieval": {"method": retrieval, "note": note},
        });
        serde_json::to_writer_pretty(&mut out, &json)?;
        writeln!(out)?;
        return Ok(ExitCode::SUCCESS);
    }
    if args.show_origin {
        let entries = configured.entries();
        let shown: Vec<(String, String)> = entries
            .iter()
            .map(|e| {
                let value = match &e.value {
                    serde_json::Value::Null => "(unset)".to_string(),
                    // An f32 key reads as written (0.1), not widened
                    // (0.10000000149011612).
                    serde_json::Value::Number(n)
                        if n.as_f64()
                            .is_some_and(|f| f64::from(f as f32) == f && n.is_f64()) =>
                    {
                        (n.as_f64().unwrap_or_default() as f32).to_string()
                    }
                    v => v.to_string(),
                };
                (
                    format!("{} = {}", e.key, crate::render::safe(&value)),
                    e.origin.to_string(),
                )
            })
            .collect();
        let width = shown
            .iter()
            .map(|(kv, _)| kv.chars().count())
            .max()
            .unwrap_or(0);
        for (kv, origin) in shown {
            writeln!(out, "{kv:<width$}  # {}", crate::render::safe(&origin))?;
        }
    } else {
        write!(out, "{}", settings.to_masked_toml())?;
    }
    for (var, state) in &secrets {
        if args.show_origin {
            writeln!(out, "# {var}: {state}")?;
        }
    }
    writeln!(out, "# retrieval: {retrieval} ({note})")?;
    Ok(ExitCode::SUCCESS)
}
