//! `groundcite._native`: the Python package's compiled half.
//!
//! The pure core (check, prompt, resolve, gate) and the engine (index,
//! search, ask) behind a thin layer that only converts: passages in
//! (`passages`), typed reports out (`report`), errors as exceptions with
//! the service's codes (`errors`). Checks, searches, ingests and answers
//! run with the GIL released.

mod errors;
mod index;
mod passages;
mod report;

use std::path::PathBuf;
use std::sync::{Arc, OnceLock};

use groundcite_core::{Passage, prompt};
use groundcite_engine::settings::Override;
use groundcite_engine::{Checker, ContractRole, PromptOutput, Settings};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyFloat, PyInt, PyMapping, PyString};

use report::{Owner, Report, Source, to_py};

/// A configuration: the defaults, then a `groundcite.toml` when given, then
/// `overrides` (keys as in the file, dotted or nested:
/// `{"check.bad_id_policy": "refuse"}` or `{"check": {"bad_id_policy":
/// "refuse"}}`). Unlike the CLI, it never reads `GROUNDCITE_*` variables or
/// a `groundcite.toml` it was not given.
///
/// The checker it configures is built once, here: a `model_dir` that is
/// missing or broken, or an unknown key, is a `ConfigError` now.
#[pyclass(frozen, module = "groundcite")]
pub struct Config {
    pub settings: Settings,
    /// What it was built from, so an index can layer its own keys on top.
    pub file: Option<PathBuf>,
    pub flags: Vec<Override>,
    checker: Checker,
}

fn flatten(prefix: &str, value: &Bound<'_, PyAny>, out: &mut Vec<Override>) -> PyResult<()> {
    if let Ok(mapping) = value.cast::<PyMapping>() {
        for item in mapping.items()?.iter() {
            let (key, value): (Bound<'_, PyAny>, Bound<'_, PyAny>) = item.extract()?;
            let key = key.cast::<PyString>().map_err(|_| {
                errors::invalid_input(format!("config: keys must be str, not {}", key.get_type()))
            })?;
            let key = key.to_str()?;
            let full = if prefix.is_empty() {
                key.to_owned()
            } else {
                format!("{prefix}.{key}")
            };
            flatten(&full, &value, out)?;
        }
        return Ok(());
    }
    let text = if value.is_instance_of::<PyBool>() {
        if value.extract::<bool>()? {
            "true"
        } else {
            "false"
        }
        .to_owned()
    } else if value.is_instance_of::<PyString>() {
        value.extract::<String>()?
    } else if value.is_instance_of::<PyInt>() || value.is_instance_of::<PyFloat>() {
        value.str()?.to_str()?.to_owned()
    } else if let Ok(path) = value.extract::<PathBuf>() {
        path.to_string_lossy().into_owned()
    } else {
        return Err(errors::invalid_input(format!(
            "config: {prefix} = {}: expected a str, number, bool or path (set lists in a groundcite.toml)",
            value.repr()?
        )));
    };
    out.push(Override::flag(prefix, text, &format!("config[{prefix:?}]")));
    Ok(())
}

impl Config {
    pub fn build(path: Option<PathBuf>, overrides: Option<&Bound<'_, PyAny>>) -> PyResult<Config> {
        let flags = overrides_of(overrides)?;
        let settings = Settings::explicit(path.as_deref(), &flags)
            .map_err(errors::engine)?
            .settings;
        settings.validate().map_err(errors::engine)?;
        let embedder = groundcite_engine::load_embedder(&settings).map_err(errors::engine)?;
        let checker = Checker::from_settings(&settings, embedder).map_err(errors::engine)?;
        Ok(Config {
            settings,
            file: path,
            flags,
            checker,
        })
    }
}

/// `overrides` (a mapping, nested or dotted) as flag layers.
pub fn overrides_of(overrides: Option<&Bound<'_, PyAny>>) -> PyResult<Vec<Override>> {
    let mut flags = Vec::new();
    if let Some(overrides) = overrides.filter(|o| !o.is_none()) {
        if overrides.cast::<PyMapping>().is_err() {
            return Err(errors::invalid_input(format!(
                "config: expected a mapping of keys to values, got {}",
                overrides.get_type()
            )));
        }
        flatten("", overrides, &mut flags)?;
    }
    Ok(flags)
}

#[pymethods]
impl Config {
    #[new]
    #[pyo3(signature = (path=None, overrides=None))]
    fn new(path: Option<PathBuf>, overrides: Option<&Bound<'_, PyAny>>) -> PyResult<Config> {
        Config::build(path, overrides)
    }

    /// Every setting, as `groundcite config --json` shows them (secrets
    /// masked).
    fn to_dict(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        to_py(py, &self.settings.masked())
    }

    /// The support verifier the checks run: `lexical`, `semantic` or `llm`.
    #[getter]
    fn verifier(&self) -> &'static str {
        self.checker.verifier().kind().as_str()
    }

    fn __repr__(&self) -> String {
        format!("Config(verifier={:?})", self.verifier())
    }
}

/// The defaults and their checker, built on first use.
fn defaults() -> &'static (Checker, Settings) {
    static DEFAULTS: OnceLock<(Checker, Settings)> = OnceLock::new();
    DEFAULTS.get_or_init(|| {
        let settings = Settings::default();
        (Checker::new(settings.check.clone()), settings)
    })
}

/// The checker of `config`: a `Config`, a mapping of overrides (built for
/// this call), or the defaults.
fn with_checker<T>(
    config: Option<&Bound<'_, PyAny>>,
    f: impl FnOnce(&Checker, &Settings) -> PyResult<T>,
) -> PyResult<T> {
    let (checker, settings) = defaults();
    match config {
        None => f(checker, settings),
        Some(c) if c.is_none() => f(checker, settings),
        Some(c) => match c.cast::<Config>() {
            Ok(config) => {
                let config = config.get();
                f(&config.checker, &config.settings)
            }
            Err(_) => {
                let config = Config::build(None, Some(c))?;
                f(&config.checker, &config.settings)
            }
        },
    }
}

fn answer_text(answer: &Bound<'_, PyAny>) -> PyResult<String> {
    let answer = answer.cast::<PyString>().map_err(|_| {
        errors::invalid_input(format!("answer: expected a str, got {}", answer.get_type()))
    })?;
    let text = answer.to_str()?;
    if text.trim().is_empty() {
        return Err(errors::error("empty_answer", "the answer is empty".into()));
    }
    Ok(text.to_owned())
}

/// Checks `answer` against `passages` (the passages sent, in order: `[k]`
/// is `passages[k-1]`): markers, bad ids, unmarked factual sentences,
/// coverage, support of every cited sentence by what its passage says, and
/// the sources. Findings are in the report, never raised.
#[pyfunction]
#[pyo3(signature = (passages, answer, question=None, config=None))]
fn check(
    py: Python<'_>,
    passages: &Bound<'_, PyAny>,
    answer: &Bound<'_, PyAny>,
    question: Option<String>,
    config: Option<&Bound<'_, PyAny>>,
) -> PyResult<Report> {
    let passages = passages::extract(passages)?;
    let answer = answer_text(answer)?;
    with_checker(config, |checker, _| {
        checker
            .admit(&passages, &answer)
            .map_err(|e| errors::error("limit_exceeded", e.to_string()))?;
        let output = py.detach(|| checker.check(question.as_deref(), &passages, &answer));
        Ok(Report {
            owner: Arc::new(Owner::Check { output, answer }),
        })
    })
}

/// The status and sources of an answer: what a reader clicks.
#[pyclass(frozen, module = "groundcite")]
pub struct Resolution {
    owner: Arc<Owner>,
}

#[pymethods]
impl Resolution {
    /// `ok`, `unverified` or `no_evidence`.
    #[getter]
    fn status(&self) -> &'static str {
        self.owner.findings().status.as_str()
    }
    #[getter]
    fn sources(&self) -> Vec<Source> {
        report::views(
            &self.owner,
            self.owner.findings().sources.len(),
            |owner, i| Source { owner, i },
        )
    }
    /// `{"status": ..., "sources": [...]}`, the sources as in the check's
    /// JSON.
    fn to_dict(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        let f = self.owner.findings();
        to_py(
            py,
            &serde_json::json!({"status": f.status, "sources": f.sources}),
        )
    }
    fn __repr__(&self) -> String {
        let f = self.owner.findings();
        format!(
            "Resolution(status={:?}, sources={})",
            f.status.as_str(),
            f.sources.len()
        )
    }
}

/// Resolves `answer`'s markers into sources (one per document, quoting the
/// evidence) and a status: `no_evidence` for a refusal, `unverified` when a
/// marker names a passage never sent, else `ok`.
#[pyfunction]
#[pyo3(signature = (answer, passages, config=None))]
fn resolve(
    py: Python<'_>,
    answer: &Bound<'_, PyAny>,
    passages: &Bound<'_, PyAny>,
    config: Option<&Bound<'_, PyAny>>,
) -> PyResult<Resolution> {
    let report = check(py, passages, answer, None, config)?;
    Ok(Resolution {
        owner: report.owner,
    })
}

/// The contract and the context for `question` over `passages`: trimmed to
/// the token budget, then numbered densely.
#[pyclass(frozen, module = "groundcite")]
pub struct Prompt {
    output: PromptOutput,
    role: ContractRole,
}

/// A passage of the context as numbered: `[n]` is this passage, `text` is
/// what was sent. A prompt's passages, in order, are what to check its
/// answer against: `check(prompt.passages, answer)`.
#[pyclass(frozen, get_all, module = "groundcite")]
pub struct PromptPassage {
    pub n: usize,
    pub id: String,
    pub source_url: String,
    pub section: String,
    pub text: String,
    /// Cut to fit the token budget.
    pub trimmed: bool,
    pub score: Option<f32>,
}

#[pymethods]
impl PromptPassage {
    fn __repr__(&self) -> String {
        format!(
            "PromptPassage(n={}, id={:?}, trimmed={})",
            self.n,
            self.id,
            if self.trimmed { "True" } else { "False" }
        )
    }
}

#[pymethods]
impl Prompt {
    /// The contract: the rules, the refusal form and the numbered passages.
    #[getter]
    fn system(&self) -> &str {
        &self.output.system
    }
    /// The question.
    #[getter]
    fn user(&self) -> &str {
        &self.output.user
    }
    #[getter]
    fn passages(&self) -> Vec<PromptPassage> {
        self.output
            .passages
            .iter()
            .map(|p| PromptPassage {
                n: p.n,
                id: p.id.clone(),
                source_url: p.source_url.clone(),
                section: p.section.clone(),
                text: p.text.clone(),
                trimmed: p.trimmed,
                score: p.score,
            })
            .collect()
    }
    /// Chat messages for an OpenAI-style API: a system and a user message,
    /// or one user message when the configuration's `contract_role` is
    /// `user` (for chat templates that drop system messages).
    fn messages(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        let messages = match self.role {
            ContractRole::System => serde_json::json!([
                {"role": "system", "content": self.output.system},
                {"role": "user", "content": self.output.user},
            ]),
            ContractRole::User => {
                let whole = prompt::Prompt {
                    system: self.output.system.clone(),
                    user: self.output.user.clone(),
                }
                .as_user_message();
                serde_json::json!([{"role": "user", "content": whole}])
            }
        };
        to_py(py, &messages)
    }
    /// As `POST /v1/prompt` returns it.
    fn to_dict(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        to_py(py, &self.output)
    }
    fn __repr__(&self) -> String {
        format!("Prompt(passages={})", self.output.passages.len())
    }
}

/// Renders the citation contract for `question` over `passages`.
#[pyfunction]
#[pyo3(signature = (question, passages, config=None))]
fn render_prompt(
    question: &str,
    passages: &Bound<'_, PyAny>,
    config: Option<&Bound<'_, PyAny>>,
) -> PyResult<Prompt> {
    if question.trim().is_empty() {
        return Err(errors::error(
            "empty_question",
            "the question is empty".into(),
        ));
    }
    let passages: Vec<Passage> = passages::extract(passages)?;
    with_checker(config, |checker, settings| {
        Ok(Prompt {
            output: checker.prompt(question, &passages),
            role: settings.contract_role,
        })
    })
}

/// The retrieval gate: answer only when the best score reaches `min_best`
/// (default: the index's calibrated threshold, 0.45 on groundcite's
/// normalised scores). False for no scores.
#[pyfunction]
#[pyo3(signature = (scores, min_best=None))]
fn should_answer(scores: Vec<f32>, min_best: Option<f32>) -> bool {
    groundcite_core::gate::should_answer(
        &scores,
        min_best.unwrap_or(groundcite_index::DEFAULT_GATE_THRESHOLD),
    )
}

/// The message that asks a model to answer again after it cited ids never
/// sent (the one regeneration the contract allows), as the engine sends it.
#[pyfunction]
fn corrective_message(bad_ids: Vec<u64>, n_passages: usize) -> String {
    prompt::corrective_message(&bad_ids, n_passages)
}

/// The exact refusal sentence of the contract.
const REFUSAL: &str = groundcite_core::refusal::REFUSAL_SENTENCE;

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(check, m)?)?;
    m.add_function(wrap_pyfunction!(resolve, m)?)?;
    m.add_function(wrap_pyfunction!(render_prompt, m)?)?;
    m.add_function(wrap_pyfunction!(should_answer, m)?)?;
    m.add_function(wrap_pyfunction!(corrective_message, m)?)?;
    m.add_class::<Config>()?;
    m.add_class::<Report>()?;
    m.add_class::<report::Sentence>()?;
    m.add_class::<report::Marker>()?;
    m.add_class::<report::Span>()?;
    m.add_class::<report::Evidence>()?;
    m.add_class::<Source>()?;
    m.add_class::<report::Refusal>()?;
    m.add_class::<report::Counts>()?;
    m.add_class::<report::Answer>()?;
    m.add_class::<Resolution>()?;
    m.add_class::<Prompt>()?;
    m.add_class::<PromptPassage>()?;
    m.add_class::<index::Index>()?;
    m.add_class::<index::Hit>()?;
    m.add_class::<index::IngestSummary>()?;
    m.add_class::<index::AskStream>()?;
    m.add_class::<index::StreamedSentence>()?;
    m.add_class::<index::Retraction>()?;
    m.add("REFUSAL", REFUSAL)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
