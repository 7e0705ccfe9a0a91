//! The LLM judge's adapter: support's [`PairJudge`] over a configured LLM backend.
//!
//! Support decides which claims to ask about and reads the replies (pure); this module sends
//! the requests: at most `judge.concurrency` at once, all within `judge.deadline_secs` of the
//! start of the check, at temperature 0, with the reply's JSON schema for backends that take
//! one. The judge owns its backend client and a one-worker runtime, so a check can wait for it
//! from any thread: a plain thread, a blocking task, or a multi-threaded runtime's worker (the
//! wait is then marked blocking, so the runtime moves its other tasks elsewhere).

use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;
use groundcite_llm::{ChatMessage, ChatRequest, Generator, StructuredRequest};
use groundcite_verify::{JudgeRequest, PairJudge};
use serde::{Deserialize, Serialize};

use crate::EngineError;
use crate::settings::{GeneratorKind, Settings};

/// Which backend judges (`judge.backend`): its own section (`[openai]`, `[anthropic]`)
/// configures it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum JudgeBackend {
    /// An OpenAI-compatible server (`[openai]`).
    Openai,
    /// Anthropic's Messages API (`[anthropic]`).
    Anthropic,
}

/// The LLM judge (`[judge]`), used with `check.verifier = "llm"`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct JudgeSettings {
    /// The backend that judges. Default: the generator's, when it is `openai` or `anthropic`;
    /// with another generator, `check.verifier = "llm"` needs this set.
    pub backend: Option<JudgeBackend>,
    /// Judge requests in flight at once. Default 4.
    pub concurrency: usize,
    /// The most one check waits for the judge, in seconds: claims without a verdict by then
    /// keep the rules' verdict with the reason `judge_unavailable`. Default 120.
    pub deadline_secs: f64,
    /// Each cited passage is cut to this many characters (around the rules' evidence).
    /// Default 4,000.
    pub max_passage_chars: usize,
    /// The reply's token budget. Default 256.
    pub max_tokens: u32,
}

impl Default for JudgeSettings {
    fn default() -> Self {
        JudgeSettings {
            backend: None,
            concurrency: 4,
            deadline_secs: 120.0,
            max_passage_chars: 4000,
            max_tokens: 256,
        }
    }
}

impl JudgeSettings {
    /// The backend that judges under `settings`, if any.
    pub fn backend_for(&self, generator: GeneratorKind) -> Option<JudgeBackend> {
        self.backend.or(match generator {
            GeneratorKind::Openai => Some(JudgeBackend::Openai),
            GeneratorKind::Anthropic => Some(JudgeBackend::Anthropic),
            GeneratorKind::Extractive | GeneratorKind::Scripted => None,
        })
    }

    /// Checks the values; `generator` decides the default backend.
    pub fn validate(&self, generator: GeneratorKind) -> Result<(), EngineError> {
        if self.backend_for(generator).is_none() {
            return Err(EngineError::Config(format!(
                "check.verifier = \"llm\" needs an LLM backend to judge with: set \
                 judge.backend = \"openai\" or \"anthropic\" (configured by [openai] or \
                 [anthropic]), or use generator = \"openai\" or \"anthropic\" (the generator \
                 is {})",
                generator.as_str()
            )));
        }
        if self.concurrency == 0 || self.concurrency > 64 {
            return Err(EngineError::Config(format!(
                "judge.concurrency = {} (expected 1..=64)",
                self.concurrency
            )));
        }
        if !(self.deadline_secs.is_finite() && self.deadline_secs > 0.0) {
            return Err(EngineError::Config(format!(
                "judge.deadline_secs = {} (expected a positive number of seconds)",
                self.deadline_secs
            )));
        }
        if self.max_passage_chars < 200 {
            return Err(EngineError::Config(format!(
                "judge.max_passage_chars = {} (expected at least 200)",
                self.max_passage_chars
            )));
        }
        if self.max_tokens < 16 {
            return Err(EngineError::Config(format!(
                "judge.max_tokens = {} (expected at least 16)",
                self.max_tokens
            )));
        }
        Ok(())
    }
}

/// [`PairJudge`] over an LLM backend. See the module documentation.
pub struct GeneratorJudge {
    generator: Arc<dyn Generator>,
    runtime: JudgeRuntime,
    concurrency: usize,
    deadline: Duration,
    max_tokens: u32,
    limits: groundcite_verify::JudgeLimits,
}

impl std::fmt::Debug for GeneratorJudge {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GeneratorJudge")
            .field("generator", &self.generator.name())
            .field("concurrency", &self.concurrency)
            .field("deadline", &self.deadline)
            .finish_non_exhaustive()
    }
}

impl GeneratorJudge {
    /// A judge over `generator` (its own client: requests run on the judge's runtime).
    pub fn new(
        generator: Arc<dyn Generator>,
        settings: &JudgeSettings,
    ) -> Result<GeneratorJudge, EngineError> {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("groundcite-judge")
            .enable_all()
            .build()
            .map_err(|e| EngineError::Internal(format!("starting the judge's runtime: {e}")))?;
        Ok(GeneratorJudge {
            generator,
            runtime: JudgeRuntime(Some(runtime)),
            concurrency: settings.concurrency.max(1),
            deadline: Duration::from_secs_f64(settings.deadline_secs),
            max_tokens: settings.max_tokens,
            limits: groundcite_verify::JudgeLimits {
                max_passage_chars: settings.max_passage_chars,
            },
        })
    }

    /// The judge `settings` configure (`judge.backend`, else the generator's backend).
    pub fn from_settings(settings: &Settings) -> Result<GeneratorJudge, EngineError> {
        settings.judge.validate(settings.generator)?;
        let generator: Arc<dyn Generator> = match settings.judge.backend_for(settings.generator) {
            Some(JudgeBackend::Openai) => Arc::new(groundcite_llm::OpenAiGenerator::new(
                settings.openai.clone(),
            )?),
            Some(JudgeBackend::Anthropic) => Arc::new(groundcite_llm::AnthropicGenerator::new(
                settings.anthropic.clone(),
            )?),
            None => unreachable!("validate checked that a backend is configured"),
        };
        GeneratorJudge::new(generator, &settings.judge)
    }

    /// How much of each cited passage the judge reads.
    pub fn limits(&self) -> groundcite_verify::JudgeLimits {
        self.limits
    }

    /// The backend's name (`openai:MODEL`, `anthropic:MODEL`).
    pub fn name(&self) -> &str {
        self.generator.name()
    }

    fn chat_request(&self, request: &JudgeRequest) -> ChatRequest {
        ChatRequest {
            system: request.system.clone(),
            messages: vec![ChatMessage::user(request.user.clone())],
            max_tokens: Some(self.max_tokens),
            temperature: Some(0.0),
            structured: Some(StructuredRequest {
                schema: groundcite_verify::reply_schema(),
                instruction: String::new(),
            }),
            ..ChatRequest::default()
        }
    }
}

/// The judge's runtime, shut down without waiting when the judge is dropped (dropping a
/// runtime the usual way blocks, which is not allowed inside another runtime, where servers and
/// tests drop their checkers).
struct JudgeRuntime(Option<tokio::runtime::Runtime>);

impl JudgeRuntime {
    fn handle(&self) -> &tokio::runtime::Handle {
        self.0.as_ref().expect("present until dropped").handle()
    }
}

impl Drop for JudgeRuntime {
    fn drop(&mut self) {
        if let Some(runtime) = self.0.take() {
            runtime.shutdown_background();
        }
    }
}

impl PairJudge for GeneratorJudge {
    fn judge(&self, requests: &[JudgeRequest]) -> Vec<Result<String, String>> {
        let chats: Vec<ChatRequest> = requests.iter().map(|r| self.chat_request(r)).collect();
        let generator = Arc::clone(&self.generator);
        let deadline = self.deadline;
        let concurrency = self.concurrency;
        let work = async move {
            let until = tokio::time::Instant::now() + deadline;
            futures::stream::iter(chats)
                .map(|chat| {
                    let answer = generator.generate(&chat);
                    async move {
                        match tokio::time::timeout_at(until, answer).await {
                            Ok(Ok(generation)) => Ok(generation.text),
                            Ok(Err(e)) => Err(e.to_string()),
                            Err(_) => Err(format!(
                                "no verdict within the {} s deadline",
                                deadline.as_secs_f64()
                            )),
                        }
                    }
                })
                .buffered(concurrency)
                .collect::<Vec<_>>()
                .await
        };
        let task = self.runtime.handle().spawn(work);
        let wait = || futures::executor::block_on(task);
        let joined = match tokio::runtime::Handle::try_current() {
            Ok(h) if h.runtime_flavor() == tokio::runtime::RuntimeFlavor::MultiThread => {
                tokio::task::block_in_place(wait)
            }
            _ => wait(),
        };
        joined.unwrap_or_else(|e| {
            let why = format!("the judge's task failed: {e}");
            requests.iter().map(|_| Err(why.clone())).collect()
        })
    }
}
