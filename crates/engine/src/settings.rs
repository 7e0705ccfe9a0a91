//! One configuration: the defaults, then `groundcite.toml`, then
//! environment variables, then flags. A flag overrides the environment,
//! which overrides the file; every default is documented on its field.
//! [`Settings::configure`] merges the layers with figment and remembers
//! where each value came from ([`Configured::origin`], `groundcite config
//! --show-origin`).
//!
//! **Every key** can come from each layer. In the environment a key is
//! `GROUNDCITE_` and its path in capitals, a table's key after `__`:
//! `top_k` is `GROUNDCITE_TOP_K`, `check.bad_id_policy` is
//! `GROUNDCITE_CHECK__BAD_ID_POLICY`, `check.limits.max_markers` is
//! `GROUNDCITE_CHECK__LIMITS__MAX_MARKERS`. On the command line any key is
//! `--set KEY=VALUE` (the CLI's `--index`, `--top-k`, ... are the same).
//! Three short names route to a key: `verifier` (`GROUNDCITE_VERIFIER`) is
//! `check.verifier`; `base_url` and `model` (`GROUNDCITE_BASE_URL`,
//! `GROUNDCITE_MODEL`, `--base-url`, `--model`) are those of the selected
//! generator (`openai.*`, or `anthropic.*` for `generator = "anthropic"`).
//! A value is read as the key's type (a number, `true`/`false`, text); an
//! empty variable leaves an optional key (such as `model_dir`) unset.
//!
//! A `GROUNDCITE_*` variable that is not a key and not one of
//! [`NOT_CONFIG_VARS`] (the service's own variables) is an error naming the
//! key meant, as an unknown key of the file is: `GROUNDCITE_TOPK=3` never
//! passes silently.
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

mod layers;

pub use layers::{
    CONFIG_ENV, ConfigEntry, Configured, ENV_PREFIX, NOT_CONFIG_VARS, Origin, Override, env_var,
    env_vars,
};

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

impl GeneratorKind {
    /// The name the configuration uses.
    pub fn as_str(self) -> &'static str {
        match self {
            GeneratorKind::Extractive => "extractive",
            GeneratorKind::Openai => "openai",
            GeneratorKind::Anthropic => "anthropic",
            GeneratorKind::Scripted => "scripted",
        }
    }
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

/// The demo corpus's name on the web page: only for the demo index.
pub const DEMO_CORPUS: &str = "Northwind Labs employee handbook (demo)";
/// The demo's example questions on the web page: only for the demo index.
pub const DEMO_EXAMPLES: [&str; 3] = [
    "How long does reimbursement take?",
    "How many days of annual leave do I get?",
    "What should I do in my first week?",
];

/// The web page's words (`[page]` in `groundcite.toml`). Every field
/// empty (the default) means: the demo's words on the demo index, plain
/// ones elsewhere (see [`Settings::page`]).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct PageSettings {
    /// The page's title and heading. Default `groundcite`.
    pub title: String,
    /// The corpus named on the home page. Default: the demo's name on the
    /// demo index, else the index location.
    pub corpus: String,
    /// The question box's placeholder. Default "Ask a question about the
    /// indexed documents".
    pub placeholder: String,
    /// Example questions on the home page, one button each. Default: the
    /// demo's on the demo index, else none.
    pub examples: Vec<String>,
}

impl PageSettings {
    /// The title when none is configured.
    pub const DEFAULT_TITLE: &'static str = "groundcite";
    /// The placeholder when none is configured.
    pub const DEFAULT_PLACEHOLDER: &'static str = "Ask a question about the indexed documents";

    /// The plain words: default title and placeholder, no corpus named,
    /// no examples (a server with no index, tests).
    pub fn plain() -> PageSettings {
        PageSettings {
            title: PageSettings::DEFAULT_TITLE.into(),
            placeholder: PageSettings::DEFAULT_PLACEHOLDER.into(),
            ..PageSettings::default()
        }
    }
}

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
    /// table, see `groundcite db migrate`); `off` writes none. Default:
    /// beside the index ([`audit_beside`]): `audit.sqlite` in the folder
    /// that holds the index folder (`./.groundcite/audit.sqlite` for the
    /// default index), or the index's own database for a PostgreSQL index.
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
    /// checking. Default: `$GROUNDCITE_MODEL_DIR`, else
    /// [`DEFAULT_MODEL_DIR`] when a model was fetched there
    /// (`scripts/fetch-model.sh`), else none (lexical only); `off` turns it
    /// off. A configured folder that is missing or broken is an error,
    /// never a silent fallback to lexical.
    pub model_dir: Option<PathBuf>,
    /// groundcite's trained judges (the released ones are the repository's
    /// `models/groundcite-judges`), for `check.verifier = "trained"`; they
    /// need `model_dir` too (the model they were trained from). Default:
    /// `$GROUNDCITE_JUDGES_DIR`, else none. A configured folder that is
    /// missing or broken is an error.
    pub judges_dir: Option<PathBuf>,
    /// How an ingest with a model computes the chunks' and the answer
    /// units' vectors: `pooled-chunks` (the default: each unit embedded on
    /// its own, each chunk's vector pooled from its units' passes: each
    /// token through the model once), `separate` (the chunk embedded on its
    /// own too: about twice the ingest time, the same answers) or
    /// `pooled-units` (each unit pooled from its chunk's pass: about the
    /// default's time, a weaker sentence choice; `pooled` names it too).
    /// BENCHMARKS.md has the figures. An index is read with the scheme it
    /// was built with: changing it means ingesting again.
    pub unit_vectors: groundcite_index::vectors::UnitVectorScheme,
    /// The audit log's per-record cap and retention (`[audit]`:
    /// `max_age_days`, `max_bytes`, `max_record_bytes`).
    pub audit: groundcite_audit::AuditPolicy,
    /// The citation contract and its checks (`[check]`).
    pub check: CheckConfig,
    /// The extractive generator's thresholds without a model (`[extractive]`).
    pub extractive: ExtractiveConfig,
    /// The model path's gate, extractive selection and `answers_question`
    /// thresholds (`[answerability]`; used only with `model_dir`).
    pub answerability: AnswerabilityConfig,
    /// The OpenAI-compatible generator (`[openai]`; used with
    /// `generator = "openai"` or `judge.backend = "openai"`).
    pub openai: OpenAiConfig,
    /// The Anthropic generator (`[anthropic]`; used with
    /// `generator = "anthropic"` or `judge.backend = "anthropic"`).
    pub anthropic: AnthropicConfig,
    /// The LLM judge of `check.verifier = "llm"` (`[judge]`: `backend`, `concurrency`,
    /// `deadline_secs`, `max_passage_chars`, `max_tokens`).
    pub judge: crate::judge::JudgeSettings,
    /// The web page's title, corpus name, placeholder and example
    /// questions (`[page]`); see [`Settings::page`].
    pub page: PageSettings,
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
            audit_path: audit_beside(&groundcite_index::Index::default_dir()),
            demo_on_first_use: true,
            contract_role: ContractRole::System,
            model_dir: None,
            judges_dir: None,
            unit_vectors: groundcite_index::vectors::UnitVectorScheme::default(),
            audit: groundcite_audit::AuditPolicy::default(),
            check: CheckConfig::default(),
            extractive: ExtractiveConfig::default(),
            answerability: AnswerabilityConfig::default(),
            openai: OpenAiConfig::default(),
            anthropic: AnthropicConfig::default(),
            judge: crate::judge::JudgeSettings::default(),
            page: PageSettings::default(),
        }
    }
}

impl Settings {
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

    /// The page's words with every default filled: what is configured,
    /// else the demo's on the demo index (as [`Settings::handoff_line`]),
    /// else plain ones. The corpus defaults to the index location (a
    /// database url without its password).
    pub fn page(&self) -> PageSettings {
        let demo = self.is_demo_index();
        let or = |set: &str, default: &str| {
            if set.trim().is_empty() {
                default.to_string()
            } else {
                set.trim().to_string()
            }
        };
        let location = self.index.display().to_string();
        let location = if groundcite_pg::is_postgres_url(&location) {
            groundcite_pg::redact_url(&location)
        } else {
            location
        };
        PageSettings {
            title: or(&self.page.title, PageSettings::DEFAULT_TITLE),
            corpus: or(
                &self.page.corpus,
                if demo { DEMO_CORPUS } else { &location },
            ),
            placeholder: or(&self.page.placeholder, PageSettings::DEFAULT_PLACEHOLDER),
            examples: if self.page.examples.is_empty() && demo {
                DEMO_EXAMPLES.iter().map(|q| q.to_string()).collect()
            } else {
                self.page
                    .examples
                    .iter()
                    .map(|q| q.trim().to_string())
                    .filter(|q| !q.is_empty())
                    .collect()
            },
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

    /// Refuses a configuration that cannot run: a verifier or scorer
    /// without the model folders it needs, `top_k` outside
    /// `1..=MAX_TOP_K`, `gate_threshold` outside `0..=1`, or `scripted`
    /// without `script`.
    pub fn validate(&self) -> Result<(), EngineError> {
        match self.check.verifier {
            groundcite_verify::VerifierKind::Semantic if self.model_dir.is_none() => {
                return Err(EngineError::Config(format!(
                    "check.verifier = \"semantic\" needs model_dir: {}",
                    groundcite_embed::FETCH_HINT
                )));
            }
            groundcite_verify::VerifierKind::Llm => self.judge.validate(self.generator)?,
            groundcite_verify::VerifierKind::Trained
                if self.judges_dir.is_none() || self.model_dir.is_none() =>
            {
                return Err(EngineError::Config(format!(
                    "check.verifier = \"trained\" needs judges_dir and model_dir: {}",
                    crate::JUDGES_HINT
                )));
            }
            _ => {}
        }
        if self.answerability.scorer == crate::UnitScorer::Trained
            && (self.judges_dir.is_none() || self.model_dir.is_none())
        {
            return Err(EngineError::Config(format!(
                "answerability.scorer = \"trained\" needs judges_dir and model_dir: {}",
                crate::JUDGES_HINT
            )));
        }
        if !(1..=crate::MAX_TOP_K).contains(&self.top_k) {
            return Err(EngineError::Config(format!(
                "top_k = {} (expected 1..={})",
                self.top_k,
                crate::MAX_TOP_K
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
        let shown = self.masked();
        let mut out =
            toml::to_string_pretty(&shown).unwrap_or_else(|e| format!("# cannot render: {e}\n"));
        for var in [&self.openai.api_key_env, &self.anthropic.api_key_env] {
            out.push_str(&format!("# {var}: {}\n", secret_state(var)));
        }
        out
    }

    /// The same settings with every database url's password hidden: what
    /// `groundcite config` prints.
    pub fn masked(&self) -> Settings {
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
        shown
    }

    /// Where the audit log is written: `None` when `audit_path` is `off`
    /// (or `none`, or empty).
    pub fn audit_location(&self) -> Option<&Path> {
        let empty = self
            .audit_path
            .to_str()
            .is_some_and(|v| v.trim().is_empty());
        if empty || turned_off(&self.audit_path) {
            None
        } else {
            Some(&self.audit_path)
        }
    }
}

/// Whether a folder or file setting says `off` (or `none`): the feature is
/// off rather than pointed at a path of that name.
pub(crate) fn turned_off(path: &Path) -> bool {
    path.to_str()
        .is_some_and(|v| matches!(v.trim(), "off" | "none"))
}

/// Where `scripts/fetch-model.sh` puts the embedding model and where every
/// command looks for it when `model_dir` is not set (relative to the
/// working directory, as the default index `./.groundcite/index` is).
pub const DEFAULT_MODEL_DIR: &str = ".groundcite/models/all-MiniLM-L6-v2";

/// Whether the variable holding an API key is set, never its value.
pub fn secret_state(var: &str) -> &'static str {
    if std::env::var_os(var).is_some_and(|v| !v.is_empty()) {
        "set, value hidden"
    } else {
        "not set"
    }
}

/// The audit log of an index: `audit.sqlite` inside the index folder, or
/// beside it when the index is in groundcite's own `.groundcite` folder
/// (`.groundcite/index` → `.groundcite/audit.sqlite`); the same database for
/// a PostgreSQL index (its `audit` table). Never in a folder of the user's
/// that merely holds the index: two indexes side by side keep two logs.
pub fn audit_beside(index: &Path) -> PathBuf {
    if index.to_str().is_some_and(groundcite_pg::is_postgres_url) {
        return index.to_path_buf();
    }
    let in_own_folder = index
        .parent()
        .and_then(Path::file_name)
        .is_some_and(|name| name == ".groundcite");
    if in_own_folder {
        index.with_file_name(groundcite_index::AUDIT_FILE)
    } else {
        index.join(groundcite_index::AUDIT_FILE)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::load_embedder;

    fn env(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    fn toml_file(text: &str) -> tempfile::NamedTempFile {
        let file = tempfile::NamedTempFile::new().unwrap();
        std::fs::write(file.path(), text).unwrap();
        file
    }

    #[test]
    fn env_overrides_file_and_bad_values_are_named() {
        let file =
            toml_file("top_k = 3\ngenerator = \"openai\"\n[openai]\nmodel = \"file-model\"\n");
        let only_file = Settings::configure(Some(file.path()), &[], &[]).unwrap();
        assert_eq!(only_file.settings.top_k, 3);
        let c = Settings::configure(
            Some(file.path()),
            &env(&[("GROUNDCITE_MODEL", "env-model"), ("GROUNDCITE_TOP_K", "7")]),
            &[],
        )
        .unwrap();
        assert_eq!(
            (c.settings.top_k, c.settings.openai.model.as_str()),
            (7, "env-model")
        );
        let err = Settings::configure(None, &env(&[("GROUNDCITE_TOP_K", "many")]), &[])
            .unwrap_err()
            .to_string();
        assert!(err.contains("GROUNDCITE_TOP_K"), "{err}");
        assert!(err.contains("not a whole number"), "{err}");
        assert!(Settings::from_toml("top_k = \"x\"").is_err());
    }

    /// Every key from every layer, nested keys from the
    /// environment (`__`), flags over the environment over the file, and
    /// each value's origin.
    #[test]
    fn every_key_from_every_layer_with_its_origin() {
        let file = toml_file("top_k = 3\n[check]\nbad_id_policy = \"strip\"\n");
        let c = Settings::configure(
            Some(file.path()),
            &env(&[
                ("GROUNDCITE_CHECK__BAD_ID_POLICY", "refuse"),
                ("GROUNDCITE_CHECK__LIMITS__MAX_MARKERS", "12"),
                ("GROUNDCITE_OPENAI__TIMEOUT_SECS", "30"),
                ("GROUNDCITE_GATE_THRESHOLD", "0.5"),
                ("GROUNDCITE_API_KEY", "not a key of the configuration"),
                ("PATH", "/bin"),
            ]),
            &[
                Override::flag("gate_threshold", "0.25", "--gate-threshold"),
                Override::parse_set("answerability.min_answer=0.5").unwrap(),
                Override::parse_set("demo_on_first_use=false").unwrap(),
            ],
        )
        .unwrap();
        let s = &c.settings;
        assert_eq!(s.top_k, 3);
        assert_eq!(
            serde_json::to_value(s.check.bad_id_policy).unwrap(),
            "refuse"
        );
        assert_eq!(s.check.limits.max_markers, 12);
        assert_eq!(s.openai.transport.timeout_secs, 30.0);
        assert_eq!(s.gate_threshold, 0.25);
        assert_eq!(s.answerability.min_answer, 0.5);
        assert!(!s.demo_on_first_use);
        assert_eq!(c.origin("top_k"), Origin::File(file.path().to_path_buf()));
        assert_eq!(
            c.origin("check.bad_id_policy"),
            Origin::Env("GROUNDCITE_CHECK__BAD_ID_POLICY".into())
        );
        assert_eq!(
            c.origin("gate_threshold"),
            Origin::Flag("--gate-threshold".into())
        );
        assert_eq!(
            c.origin("answerability.min_answer"),
            Origin::Flag("--set answerability.min_answer".into())
        );
        assert_eq!(c.origin("handoff"), Origin::Default);
        let entries = c.entries();
        let timeout = entries
            .iter()
            .find(|e| e.key == "openai.timeout_secs")
            .unwrap();
        assert_eq!(
            timeout.origin,
            Origin::Env("GROUNDCITE_OPENAI__TIMEOUT_SECS".into())
        );
        assert_eq!(timeout.value, 30.0);
        assert!(entries.iter().any(|e| e.key == "check.limits.max_passages"));
    }

    /// An unknown variable or `--set` key is an error naming the
    /// key meant; the service's own variables are not keys and pass.
    #[test]
    fn unknown_variables_and_set_keys_are_errors_with_a_suggestion() {
        let err = Settings::configure(None, &env(&[("GROUNDCITE_TOPK", "3")]), &[])
            .unwrap_err()
            .to_string();
        assert!(err.contains("`GROUNDCITE_TOPK`"), "{err}");
        assert!(err.contains("did you mean `GROUNDCITE_TOP_K`"), "{err}");
        let err = Settings::configure(
            None,
            &env(&[("GROUNDCITE_CHECK_BAD_ID_POLICY", "refuse")]),
            &[],
        )
        .unwrap_err()
        .to_string();
        assert!(
            err.contains("did you mean `GROUNDCITE_CHECK__BAD_ID_POLICY`"),
            "{err}"
        );
        let err = Settings::configure(
            None,
            &[],
            &[Override::parse_set("check.bad_id_polcy=refuse").unwrap()],
        )
        .unwrap_err()
        .to_string();
        assert!(err.contains("did you mean `check.bad_id_policy`"), "{err}");
        assert!(err.contains("--set check.bad_id_polcy"), "{err}");
        assert!(Override::parse_set("top_k").is_err());
        let err = Settings::configure(
            None,
            &env(&[("GROUNDCITE_CHECK__BAD_ID_POLICY", "never")]),
            &[],
        )
        .unwrap_err()
        .to_string();
        assert!(err.contains("GROUNDCITE_CHECK__BAD_ID_POLICY"), "{err}");
        for var in NOT_CONFIG_VARS.iter().filter(|v| **v != CONFIG_ENV) {
            Settings::configure(None, &env(&[(var, "x")]), &[]).unwrap();
        }
        Settings::configure(None, &env(&[("GROUNDCITE_TEST_DATABASE_URL", "x")]), &[]).unwrap();
    }

    /// Every `GROUNDCITE_*` variable a script of the repository reads or
    /// sets is a configuration key or one of [`NOT_CONFIG_VARS`]: a script
    /// variable left exported never makes the binary it calls fail.
    #[test]
    fn every_script_variable_is_known() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        let mut files = Vec::new();
        for dir in [".ci", "scripts", "bench", "python/examples", "python/tests"] {
            for entry in std::fs::read_dir(root.join(dir)).unwrap() {
                let path = entry.unwrap().path();
                if path.is_file() {
                    files.push(path);
                }
            }
        }
        assert!(files.len() > 5, "{files:?}");
        let mut seen = std::collections::BTreeSet::new();
        for path in &files {
            let Ok(text) = std::fs::read_to_string(path) else {
                continue;
            };
            for (at, _) in text.match_indices(ENV_PREFIX) {
                let name: String = text[at..]
                    .chars()
                    .take_while(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || *c == '_')
                    .collect();
                // A prefix written on its own (`GROUNDCITE_BENCH_*`) is not a variable.
                if name.len() > ENV_PREFIX.len() && !name.ends_with('_') {
                    seen.insert((name, path.clone()));
                }
            }
        }
        assert!(
            seen.iter().any(|(n, _)| n == "GROUNDCITE_LLAMA_VENV"),
            "{seen:?}"
        );
        for (name, path) in &seen {
            // The value may not parse as the key's type; only "unknown variable" matters.
            if let Err(e) = Settings::configure(None, &env(&[(name, "1")]), &[]) {
                let e = e.to_string();
                assert!(
                    !e.contains("unknown variable"),
                    "{} uses {name}: {e}",
                    path.display()
                );
            }
        }
    }

    /// The audit log lives in the index folder (beside it in groundcite's
    /// own `.groundcite` folder) unless set; `off` writes none.
    #[test]
    fn the_audit_log_is_in_the_index_folder() {
        let c =
            Settings::configure(None, &env(&[("GROUNDCITE_INDEX", "/srv/idx/tts")]), &[]).unwrap();
        assert_eq!(
            c.settings.audit_path,
            Path::new("/srv/idx/tts/audit.sqlite")
        );
        let c = Settings::configure(
            None,
            &env(&[("GROUNDCITE_INDEX", "/work/.groundcite/index")]),
            &[],
        )
        .unwrap();
        assert_eq!(
            c.settings.audit_path,
            Path::new("/work/.groundcite/audit.sqlite")
        );
        assert_eq!(c.origin("audit_path"), Origin::Default);
        let url = "postgres://u@db/groundcite";
        let c = Settings::configure(None, &[], &[Override::flag("index", url, "--index")]).unwrap();
        assert_eq!(c.settings.audit_path, Path::new(url));
        let c = Settings::configure(
            None,
            &env(&[
                ("GROUNDCITE_INDEX", "/srv/idx/tts"),
                ("GROUNDCITE_AUDIT_PATH", "/var/a.sqlite"),
            ]),
            &[],
        )
        .unwrap();
        assert_eq!(
            c.settings.audit_location(),
            Some(Path::new("/var/a.sqlite"))
        );
        let c = Settings::configure(None, &env(&[("GROUNDCITE_AUDIT_PATH", "off")]), &[]).unwrap();
        assert_eq!(c.settings.audit_location(), None);
    }

    /// The model folder comes from the file, then `GROUNDCITE_MODEL_DIR`;
    /// an empty variable does not unset a configured folder.
    #[test]
    fn model_dir_from_file_then_environment() {
        let file = toml_file("model_dir = \"models/a\"\n");
        let load = |pairs: &[(&str, &str)]| {
            Settings::configure(Some(file.path()), &env(pairs), &[]).map(|c| c.settings)
        };
        let s = load(&[]).unwrap();
        assert_eq!(s.model_dir.as_deref(), Some(Path::new("models/a")));
        let s = load(&[("GROUNDCITE_MODEL_DIR", "")]).unwrap();
        assert_eq!(s.model_dir.as_deref(), Some(Path::new("models/a")));
        let s = load(&[("GROUNDCITE_MODEL_DIR", "models/b")]).unwrap();
        assert_eq!(s.model_dir.as_deref(), Some(Path::new("models/b")));
        let s = load(&[("GROUNDCITE_VERIFIER", "semantic")]).unwrap();
        assert_eq!(s.check.verifier, groundcite_verify::VerifierKind::Semantic);
        assert!(s.validate().is_ok(), "semantic with a model folder");
        let err = load(&[("GROUNDCITE_VERIFIER", "nli")]).unwrap_err();
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

    /// A misspelt key is an error naming it and the key meant,
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

    /// The demo's hand-off line is the demo's only.
    #[test]
    fn the_demo_page_words_stay_on_the_demo_index() {
        let demo = Settings::default().page();
        assert_eq!(demo.corpus, DEMO_CORPUS);
        assert_eq!(demo.examples.len(), DEMO_EXAMPLES.len());
        let own = Settings {
            index: PathBuf::from("/srv/handbook-index"),
            ..Settings::default()
        };
        let page = own.page();
        assert_eq!(page.title, "groundcite");
        assert_eq!(page.corpus, "/srv/handbook-index");
        assert!(page.examples.is_empty(), "{page:?}");
        assert!(!page.placeholder.contains("reimburse"));
        let set = Settings::from_toml(
            "index = \"/srv/i\"\n[page]\ntitle = \"Handbook\"\ncorpus = \"TTS handbook\"\nplaceholder = \"Ask the handbook\"\nexamples = [\"How do I request leave?\", \" \"]\n",
        )
        .unwrap()
        .page();
        assert_eq!(
            set,
            PageSettings {
                title: "Handbook".into(),
                corpus: "TTS handbook".into(),
                placeholder: "Ask the handbook".into(),
                examples: vec!["How do I request leave?".into()],
            }
        );
        let db = Settings {
            index: PathBuf::from("postgres://user:hunter2@db.internal:5432/groundcite"),
            ..Settings::default()
        };
        assert!(!db.page().corpus.contains("hunter2"), "{:?}", db.page());
        assert!(
            Settings::from_toml("[page]\ntitel = \"x\"\n").is_err(),
            "an unknown [page] key is an error"
        );
    }

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
