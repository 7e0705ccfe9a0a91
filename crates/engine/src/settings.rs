//! One configuration: `groundcite.toml`, then environment variables, then
//! flags (the CLI applies those last). A flag overrides the environment,
//! which overrides the file; every default is documented on its field.
//!
//! | environment variable | field |
//! |---|---|
//! | `GROUNDCITE_CONFIG` | the file to read (default `./groundcite.toml` when it exists) |
//! | `GROUNDCITE_INDEX` | `index` |
//! | `GROUNDCITE_GENERATOR` | `generator` |
//! | `GROUNDCITE_BASE_URL` | `openai.base_url` or `anthropic.base_url` (by generator) |
//! | `GROUNDCITE_MODEL` | `openai.model` or `anthropic.model` (by generator) |
//! | `GROUNDCITE_TOP_K` | `top_k` |
//! | `GROUNDCITE_GATE_THRESHOLD` | `gate_threshold` |
//! | `GROUNDCITE_HANDOFF` | `handoff` |
//! | `GROUNDCITE_AUDIT_PATH` | `audit_path` |
//! | `GROUNDCITE_MODEL_DIR` | `model_dir` |
//! | `GROUNDCITE_VERIFIER` | `check.verifier` (`lexical`, `semantic`) |
//!
//! API keys are never part of the configuration: only the *name* of the
//! variable that holds them (`openai.api_key_env`, default
//! `OPENAI_API_KEY`; `anthropic.api_key_env`, default `ANTHROPIC_API_KEY`).

use std::path::{Path, PathBuf};

use groundcite_core::config::CheckConfig;
use groundcite_llm::{AnthropicConfig, OpenAiConfig};
use serde::{Deserialize, Serialize};

use crate::EngineError;
use crate::answerability::AnswerabilityConfig;
use crate::extractive::ExtractiveConfig;

/// Which generator answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum GeneratorKind {
    /// The embedded extractive generator: offline, no model (default).
    #[default]
    Extractive,
    /// Any OpenAI-compatible Chat Completions server.
    Openai,
    /// Anthropic's Messages API.
    Anthropic,
    /// Replays outputs from `script` (tests, demos, offline replays).
    Scripted,
}

impl std::str::FromStr for GeneratorKind {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s.to_ascii_lowercase().as_str() {
            "extractive" => Ok(GeneratorKind::Extractive),
            "openai" => Ok(GeneratorKind::Openai),
            "anthropic" => Ok(GeneratorKind::Anthropic),
            "scripted" => Ok(GeneratorKind::Scripted),
            other => Err(format!(
                "unknown generator {other:?} (expected extractive, openai, anthropic or scripted)"
            )),
        }
    }
}

/// Where the citation contract (rules and numbered passages) travels.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ContractRole {
    /// In the system message; the question is the user message (default).
    #[default]
    System,
    /// Rules, passages and question in one user message, for chat
    /// templates that drop or mangle system messages (llama-cpp-python's
    /// `gemma` format drops them: the model would see only the question).
    User,
}

/// The demo handbook's hand-off line: only for the demo index.
pub const DEMO_HANDOFF: &str = "For anything the handbook does not cover, contact People Ops.";

/// The effective configuration.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default)]
pub struct Settings {
    /// The index directory. Default: `$GROUNDCITE_INDEX`, else
    /// `./.groundcite/index`. When it is the default and empty, the
    /// embedded demo corpus is ingested on first use.
    pub index: PathBuf,
    /// Passages retrieved per question. Default 5.
    pub top_k: usize,
    /// The retrieval gate: refuse without calling the model when the best
    /// normalised score is below this. Default: the index's calibrated
    /// `DEFAULT_GATE_THRESHOLD`.
    pub gate_threshold: f32,
    /// The hand-off line of a refusal (who to ask instead). Default none;
    /// the demo index (the default location, `demo_on_first_use`) uses the
    /// demo handbook's line, [`DEMO_HANDOFF`]. See [`Settings::handoff_line`].
    pub handoff: String,
    /// Default `extractive`.
    pub generator: GeneratorKind,
    /// For `scripted`: a JSON array or JSONL file of outputs.
    pub script: Option<PathBuf>,
    /// The audit log: a SQLite file, or a `postgres://` URL (the `audit`
    /// table, see `groundcite db migrate`). Default
    /// `./.groundcite/audit.sqlite`.
    pub audit_path: PathBuf,
    /// Ingest the embedded demo corpus when the index at the default
    /// location is empty. Default true.
    pub demo_on_first_use: bool,
    /// Where the contract and passages are sent: `system` or `user`.
    /// Default `system`; use `user` with a local model whose chat template
    /// drops system messages.
    pub contract_role: ContractRole,
    /// A sentence-transformers model folder (`config.json`,
    /// `tokenizer.json`, `model.safetensors`) for semantic retrieval and
    /// checking. Default: `$GROUNDCITE_MODEL_DIR`, else none (lexical
    /// only). A configured folder that is missing or broken is an error,
    /// never a silent fallback to lexical.
    pub model_dir: Option<PathBuf>,
    /// The audit log's per-record cap and retention (`[audit]`:
    /// `max_age_days`, `max_bytes`, `max_record_bytes`).
    pub audit: groundcite_audit::AuditPolicy,
    pub check: CheckConfig,
    pub extractive: ExtractiveConfig,
    /// The model path's gate, extractive selection and `answers_question`
    /// thresholds (`[answerability]`; used only with `model_dir`).
    pub answerability: AnswerabilityConfig,
    pub openai: OpenAiConfig,
    pub anthropic: AnthropicConfig,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            index: groundcite_index::Index::default_dir(),
            top_k: 5,
            gate_threshold: groundcite_index::DEFAULT_GATE_THRESHOLD,
            handoff: String::new(),
            generator: GeneratorKind::Extractive,
            script: None,
            audit_path: PathBuf::from("./.groundcite/audit.sqlite"),
            demo_on_first_use: true,
            contract_role: ContractRole::System,
            model_dir: None,
            audit: groundcite_audit::AuditPolicy::default(),
            check: CheckConfig::default(),
            extractive: ExtractiveConfig::default(),
            answerability: AnswerabilityConfig::default(),
            openai: OpenAiConfig::default(),
            anthropic: AnthropicConfig::default(),
        }
    }
}

impl Settings {
    /// Reads the file (if any) and applies the environment.
    pub fn load(file: Option<&Path>) -> Result<Settings, EngineError> {
        let env_file = std::env::var_os("GROUNDCITE_CONFIG").map(PathBuf::from);
        let path = file.map(Path::to_path_buf).or(env_file);
        let mut settings = match &path {
            Some(p) => Settings::from_file(p)?,
            None if Path::new("groundcite.toml").exists() => {
                Settings::from_file(Path::new("groundcite.toml"))?
            }
            None => Settings::default(),
        };
        settings.apply_env(|k| std::env::var(k).ok())?;
        Ok(settings)
    }

    pub fn from_file(path: &Path) -> Result<Settings, EngineError> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| EngineError::Config(format!("{}: {e}", path.display())))?;
        Settings::from_toml(&text)
            .map_err(|e| EngineError::Config(format!("{}: {e}", path.display())))
    }

    /// Parses a `groundcite.toml`. A key this version does not read is an
    /// error naming it (with its table) and the nearest known key, never a
    /// silent default: `topk = 5` would otherwise leave `top_k` at 5 by
    /// luck and `top_k = 8` misspelled at its default.
    pub fn from_toml(text: &str) -> Result<Settings, String> {
        let deserializer = toml::Deserializer::parse(text).map_err(|e| e.to_string())?;
        let mut unknown = Vec::new();
        let settings: Settings = serde_ignored::deserialize(deserializer, |path| {
            unknown.push(path.to_string());
        })
        .map_err(|e| e.to_string())?;
        match unknown.first() {
            None => Ok(settings),
            Some(key) => Err(unknown_key_message(key)),
        }
    }

    /// Applies `GROUNDCITE_*` variables through `get` (injectable for tests).
    pub fn apply_env(&mut self, get: impl Fn(&str) -> Option<String>) -> Result<(), EngineError> {
        let bad = |k: &str, v: &str, why: &str| EngineError::Config(format!("{k}={v:?}: {why}"));
        if let Some(v) = get("GROUNDCITE_INDEX") {
            self.index = PathBuf::from(v);
        }
        if let Some(v) = get("GROUNDCITE_GENERATOR") {
            self.generator = v
                .parse()
                .map_err(|e: String| bad("GROUNDCITE_GENERATOR", &v, &e))?;
        }
        if let Some(v) = get("GROUNDCITE_BASE_URL") {
            self.set_base_url(v);
        }
        if let Some(v) = get("GROUNDCITE_MODEL") {
            self.set_model(v);
        }
        if let Some(v) = get("GROUNDCITE_TOP_K") {
            self.top_k = v
                .parse()
                .map_err(|_| bad("GROUNDCITE_TOP_K", &v, "not a whole number"))?;
        }
        if let Some(v) = get("GROUNDCITE_GATE_THRESHOLD") {
            self.gate_threshold = v
                .parse()
                .map_err(|_| bad("GROUNDCITE_GATE_THRESHOLD", &v, "not a number"))?;
        }
        if let Some(v) = get("GROUNDCITE_HANDOFF") {
            self.handoff = v;
        }
        if let Some(v) = get("GROUNDCITE_AUDIT_PATH") {
            self.audit_path = PathBuf::from(v);
        }
        if let Some(v) = get("GROUNDCITE_VERIFIER") {
            self.check.verifier = serde_json::from_value(serde_json::Value::String(v.clone()))
                .map_err(|_| {
                    bad(
                        "GROUNDCITE_VERIFIER",
                        &v,
                        "expected lexical, semantic or llm",
                    )
                })?;
        }
        if let Some(v) = get(groundcite_embed::MODEL_DIR_ENV).filter(|v| !v.is_empty()) {
            self.model_dir = Some(PathBuf::from(v));
        }
        Ok(())
    }

    /// Whether the index is the demo's: the default location, where the
    /// embedded demo handbook is ingested on first use.
    pub fn is_demo_index(&self) -> bool {
        self.demo_on_first_use && self.index == groundcite_index::Index::default_dir()
    }

    /// The hand-off line a refusal ends with: `handoff` when set, the demo
    /// handbook's for the demo index, else none. The demo's "contact People
    /// Ops" never reaches another corpus.
    pub fn handoff_line(&self) -> &str {
        if self.handoff.is_empty() && self.is_demo_index() {
            DEMO_HANDOFF
        } else {
            &self.handoff
        }
    }

    /// Sets the base url of the selected HTTP generator.
    pub fn set_base_url(&mut self, url: String) {
        match self.generator {
            GeneratorKind::Anthropic => self.anthropic.base_url = url,
            _ => self.openai.base_url = url,
        }
    }

    /// Sets the model of the selected HTTP generator.
    pub fn set_model(&mut self, model: String) {
        match self.generator {
            GeneratorKind::Anthropic => self.anthropic.model = model,
            _ => self.openai.model = model,
        }
    }

    /// Checks values that would fail later in a confusing way.
    /// The most a whole answer may take with a remote generator: two
    /// attempts (the answer and one regeneration), each with its retries
    /// and their backoffs, each within `timeout_secs`. A stream that keeps
    /// sending chunks never resets it. `None` for local generators.
    pub fn answer_deadline(&self) -> Option<std::time::Duration> {
        let t = match self.generator {
            GeneratorKind::Openai => &self.openai.transport,
            GeneratorKind::Anthropic => &self.anthropic.transport,
            GeneratorKind::Extractive | GeneratorKind::Scripted => return None,
        };
        let tries = f64::from(t.max_retries) + 1.0;
        let backoff = t.max_backoff_ms as f64 / 1000.0 * f64::from(t.max_retries);
        let secs =
            2.0 * (t.timeout_secs.max(0.0) * tries + backoff + t.connect_timeout_secs.max(0.0));
        std::time::Duration::try_from_secs_f64(secs).ok()
    }

    pub fn validate(&self) -> Result<(), EngineError> {
        match self.check.verifier {
            groundcite_support::VerifierKind::Semantic if self.model_dir.is_none() => {
                return Err(EngineError::Config(format!(
                    "check.verifier = \"semantic\" needs model_dir: {}",
                    groundcite_embed::FETCH_HINT
                )));
            }
            groundcite_support::VerifierKind::Llm => {
                return Err(EngineError::Config(
                    "check.verifier = \"llm\" is not available yet: use \"lexical\" or \"semantic\""
                        .into(),
                ));
            }
            _ => {}
        }
        if self.top_k == 0 || self.top_k > 50 {
            return Err(EngineError::Config(format!(
                "top_k = {} (expected 1..=50)",
                self.top_k
            )));
        }
        if !(0.0..=1.0).contains(&self.gate_threshold) {
            return Err(EngineError::Config(format!(
                "gate_threshold = {} (expected 0..=1)",
                self.gate_threshold
            )));
        }
        if self.generator == GeneratorKind::Scripted && self.script.is_none() {
            return Err(EngineError::Config(
                "generator = scripted needs `script` (a JSON array or JSONL file of outputs)"
                    .into(),
            ));
        }
        Ok(())
    }

    /// The effective configuration as TOML, with the state of each secret
    /// shown masked (`set` / `not set`), never its value.
    pub fn to_masked_toml(&self) -> String {
        let mut shown = self.clone();
        // A database url's password never prints.
        if let Some(url) = self
            .index
            .to_str()
            .filter(|u| groundcite_pg::is_postgres_url(u))
        {
            shown.index = PathBuf::from(groundcite_pg::redact_url(url));
        }
        if let Some(url) = self
            .audit_path
            .to_str()
            .filter(|u| groundcite_pg::is_postgres_url(u))
        {
            shown.audit_path = PathBuf::from(groundcite_pg::redact_url(url));
        }
        let mut out =
            toml::to_string_pretty(&shown).unwrap_or_else(|e| format!("# cannot render: {e}\n"));
        for var in [&self.openai.api_key_env, &self.anthropic.api_key_env] {
            let state = if std::env::var_os(var).is_some_and(|v| !v.is_empty()) {
                "set, value hidden"
            } else {
                "not set"
            };
            out.push_str(&format!("# {var}: {state}\n"));
        }
        out
    }
}

/// "unknown key `check.bad_id_polcy`; did you mean `check.bad_id_policy`?":
/// the candidates are the keys the default configuration writes at the
/// same level (optional keys included, as `null`).
fn unknown_key_message(path: &str) -> String {
    let (table, key) = match path.rsplit_once('.') {
        Some((table, key)) => (Some(table), key),
        None => (None, path),
    };
    let defaults = serde_json::to_value(Settings::default()).unwrap_or_default();
    let level = match table {
        Some(table) => table.split('.').try_fold(&defaults, |v, part| v.get(part)),
        None => Some(&defaults),
    };
    let nearest = level
        .and_then(serde_json::Value::as_object)
        .into_iter()
        .flat_map(|map| map.keys())
        .map(|known| (strsim::jaro_winkler(key, known), known))
        .filter(|(score, _)| *score >= 0.8)
        .max_by(|a, b| a.0.total_cmp(&b.0));
    let full = |k: &str| match table {
        Some(table) => format!("{table}.{k}"),
        None => k.to_string(),
    };
    match nearest {
        Some((_, known)) => format!(
            "unknown key `{path}`; did you mean `{}`? (`groundcite config` prints every key)",
            full(known)
        ),
        None => format!("unknown key `{path}` (`groundcite config` prints every key)"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::load_embedder;

    #[test]
    fn env_overrides_file_and_bad_values_are_named() {
        let mut s = Settings::from_toml(
            "top_k = 3\ngenerator = \"openai\"\n[openai]\nmodel = \"file-model\"\n",
        )
        .unwrap();
        assert_eq!(s.top_k, 3);
        s.apply_env(|k| match k {
            "GROUNDCITE_MODEL" => Some("env-model".into()),
            "GROUNDCITE_TOP_K" => Some("7".into()),
            _ => None,
        })
        .unwrap();
        assert_eq!((s.top_k, s.openai.model.as_str()), (7, "env-model"));
        let err = s
            .apply_env(|k| (k == "GROUNDCITE_TOP_K").then(|| "many".into()))
            .unwrap_err();
        assert!(err.to_string().contains("GROUNDCITE_TOP_K"), "{err}");
        assert!(Settings::from_toml("top_k = \"x\"").is_err());
    }

    /// The model folder comes from the file, then `GROUNDCITE_MODEL_DIR`;
    /// an empty variable does not unset a configured folder.
    #[test]
    fn model_dir_from_file_then_environment() {
        let mut s = Settings::from_toml("model_dir = \"models/a\"\n").unwrap();
        assert_eq!(s.model_dir.as_deref(), Some(Path::new("models/a")));
        s.apply_env(|k| (k == "GROUNDCITE_MODEL_DIR").then(String::new))
            .unwrap();
        assert_eq!(s.model_dir.as_deref(), Some(Path::new("models/a")));
        s.apply_env(|k| (k == "GROUNDCITE_MODEL_DIR").then(|| "models/b".into()))
            .unwrap();
        assert_eq!(s.model_dir.as_deref(), Some(Path::new("models/b")));
        s.apply_env(|k| (k == "GROUNDCITE_VERIFIER").then(|| "semantic".into()))
            .unwrap();
        assert_eq!(s.check.verifier, groundcite_support::VerifierKind::Semantic);
        assert!(s.validate().is_ok(), "semantic with a model folder");
        let err = s
            .apply_env(|k| (k == "GROUNDCITE_VERIFIER").then(|| "nli".into()))
            .unwrap_err();
        assert!(err.to_string().contains("GROUNDCITE_VERIFIER"), "{err}");
        let err = load_embedder(&Settings {
            model_dir: Some("/nonexistent/model".into()),
            ..Settings::default()
        })
        .unwrap_err();
        assert!(err.to_string().contains("/nonexistent/model"), "{err}");
        assert!(load_embedder(&Settings::default()).unwrap().is_none());
    }

    /// A `groundcite.toml` written when each backend section listed its own
    /// timeouts and retries still reads the same, and `groundcite config`
    /// writes them back in the same place.
    #[test]
    fn transport_keys_of_existing_files_keep_working() {
        let file = "generator = \"anthropic\"\n\
                    [openai]\nmodel = \"llama3.2\"\ntimeout_secs = 30\nmax_retries = 0\n\
                    [anthropic]\nmode = \"native_citations\"\nconnect_timeout_secs = 2.5\n\
                    backoff_ms = 250\nmax_backoff_ms = 4000\nmax_retry_after_secs = 5\n";
        let s = Settings::from_toml(file).unwrap();
        assert_eq!(s.openai.model, "llama3.2");
        assert_eq!(s.openai.transport.timeout_secs, 30.0);
        assert_eq!(s.openai.transport.max_retries, 0);
        assert_eq!(s.openai.transport.backoff_ms, 500, "defaults fill the rest");
        let a = &s.anthropic.transport;
        assert_eq!(
            s.anthropic.mode,
            groundcite_llm::AnthropicMode::NativeCitations
        );
        assert_eq!(
            (a.connect_timeout_secs, a.backoff_ms, a.max_backoff_ms),
            (2.5, 250, 4000)
        );
        assert_eq!((a.max_retry_after_secs, a.max_retries), (5.0, 2));
        let text = s.to_masked_toml();
        let openai = &text[text.find("[openai]\n").unwrap()..text.find("[anthropic]").unwrap()];
        assert!(openai.contains("\ntimeout_secs = 30.0\n"), "{text}");
        assert!(openai.contains("\nmax_retries = 0\n"), "{text}");
        assert!(!text.contains("transport"), "{text}");
        let again = Settings::from_toml(&text).unwrap();
        assert_eq!(again.openai, s.openai);
        assert_eq!(again.anthropic, s.anthropic);
    }

    /// Issue 14: a misspelt key is an error naming it and the key meant,
    /// at the top level and in a table; every key the configuration
    /// writes reads back.
    #[test]
    fn unknown_keys_are_errors_with_a_suggestion() {
        let err = Settings::from_toml("topk = 5\n").unwrap_err();
        assert!(err.contains("unknown key `topk`"), "{err}");
        assert!(err.contains("did you mean `top_k`?"), "{err}");
        let err = Settings::from_toml("[check]\nbad_id_polcy = \"strip\"\n").unwrap_err();
        assert!(err.contains("`check.bad_id_polcy`"), "{err}");
        assert!(err.contains("`check.bad_id_policy`"), "{err}");
        let err = Settings::from_toml("zzz = 1\n").unwrap_err();
        assert!(!err.contains("did you mean"), "{err}");
        let written = Settings::default().to_masked_toml();
        Settings::from_toml(&written).unwrap();
        let err = Settings::from_file(Path::new("/nonexistent/groundcite.toml")).unwrap_err();
        assert!(
            err.to_string().contains("/nonexistent/groundcite.toml"),
            "{err}"
        );
    }

    /// Issue 14: the demo's hand-off line is the demo's only.
    #[test]
    fn the_demo_handoff_stays_on_the_demo_index() {
        assert_eq!(Settings::default().handoff_line(), DEMO_HANDOFF);
        let own = Settings {
            index: PathBuf::from("/srv/handbook-index"),
            ..Settings::default()
        };
        assert_eq!(own.handoff_line(), "");
        let set = Settings {
            handoff: "Ask the IT desk.".into(),
            ..own
        };
        assert_eq!(set.handoff_line(), "Ask the IT desk.");
    }

    #[test]
    fn masked_config_never_prints_a_key() {
        let s = Settings::default();
        let text = s.to_masked_toml();
        assert!(text.contains("api_key_env = \"OPENAI_API_KEY\""));
        assert!(text.contains("# OPENAI_API_KEY: "));
        let pg = Settings {
            index: PathBuf::from("postgres://user:hunter2@db.internal:5432/groundcite"),
            ..Settings::default()
        };
        let text = pg.to_masked_toml();
        assert!(!text.contains("hunter2"), "{text}");
        assert!(text.contains("db.internal"), "{text}");
    }
}
