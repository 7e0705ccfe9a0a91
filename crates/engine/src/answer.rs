//! What `ask` returns: the result, its refusal, its attempts and timings,
//! and the events of a streamed answer. Plain data, serialised as the
//! public JSON contract (`docs/report.md`).

use groundcite_core::Passage;
use groundcite_core::check::{Counts, Findings};
use groundcite_llm::LlmError;
use serde::Serialize;

use crate::EngineError;
use crate::answerability::AnswersQuestion;

/// Per-request options.
#[derive(Debug, Clone, Default, Serialize, serde::Deserialize)]
pub struct AskOptions {
    /// Passages to retrieve (default: `Settings::top_k`).
    pub top_k: Option<usize>,
}

/// Why an answer was refused (the `reason` of a refusal).
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RefusalReason {
    /// The best retrieval score was under the gate: the model was not called.
    Gate,
    /// The model refused (the refusal sentence or the sentinel).
    Sentinel,
    /// The answer failed validation (ids never sent after the
    /// regeneration, or flagged sentences under the `refuse` policy).
    Validation,
    /// With an embedding model: a strong passage was found but no
    /// sentence of the passages sent answers the question. The refusal
    /// lists the closest passages, linked.
    NoDirectAnswer,
}

impl RefusalReason {
    /// The JSON name: `gate`, `sentinel`, `validation`,
    /// `no_direct_answer`.
    pub fn as_str(self) -> &'static str {
        match self {
            RefusalReason::Gate => "gate",
            RefusalReason::Sentinel => "sentinel",
            RefusalReason::Validation => "validation",
            RefusalReason::NoDirectAnswer => "no_direct_answer",
        }
    }
}

/// A refusal that helps: what was searched, what would be needed, the
/// nearest topics the corpus does cover, and whom to ask.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AskRefusal {
    /// Why the answer was refused.
    pub reason: RefusalReason,
    /// The question as searched (trimmed).
    pub searched: String,
    /// What the model said it would need (the text after
    /// `NOT_IN_SOURCES:`); `None` when it said nothing more.
    pub needed: Option<String>,
    /// Section labels (or titles) of the best hits, deduplicated, at most
    /// three.
    pub nearest_topics: Vec<String>,
    /// Whom to ask instead (the `handoff` setting); empty when none.
    pub handoff: String,
    /// `no_direct_answer`: the closest passages (with their links), best
    /// first. Empty otherwise.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub closest_passages: Vec<SentPassageInfo>,
}

impl AskRefusal {
    /// The refusal of `question` (searched as typed, trimmed).
    pub fn new(
        reason: RefusalReason,
        question: &str,
        needed: Option<String>,
        nearest_topics: Vec<String>,
        handoff: impl Into<String>,
    ) -> AskRefusal {
        AskRefusal {
            reason,
            searched: question.trim().to_string(),
            needed,
            nearest_topics,
            handoff: handoff.into(),
            closest_passages: Vec::new(),
        }
    }
}

/// A passage as sent: its number and where it came from.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SentPassageInfo {
    /// Its number, from 1: the `k` of `[k]`.
    pub n: usize,
    /// The passage's stable id.
    pub id: String,
    /// Where a reader opens it; empty when the link is not safe.
    pub source_url: String,
    /// Its section label.
    pub section: String,
    /// The retrieval score; `None` when the passage has none.
    pub score: Option<f32>,
}

impl SentPassageInfo {
    /// The passages sent, numbered from 1 in order.
    pub fn numbered(sent: &[Passage]) -> Vec<SentPassageInfo> {
        sent.iter()
            .enumerate()
            .map(|(i, p)| SentPassageInfo {
                n: i + 1,
                id: p.id.clone(),
                source_url: groundcite_core::link::safe_link(&p.source_url).to_string(),
                section: p.section.clone(),
                score: p.score,
            })
            .collect()
    }
}

/// One generation attempt, kept for the audit log.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Attempt {
    /// The model's output as returned (empty when the call failed).
    pub raw: String,
    /// Ids it cited that were never sent.
    pub bad_ids: Vec<u64>,
    /// The error's message when the call failed; `None` otherwise.
    pub error: Option<String>,
    /// Why the model stopped, as its server reported it (`length`: cut
    /// at `max_tokens`). Absent when the call failed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub finish_reason: Option<String>,
}

impl Attempt {
    /// A call that failed: no text, the error's message.
    pub fn failed(error: &LlmError) -> Attempt {
        Attempt {
            raw: String::new(),
            bad_ids: Vec::new(),
            error: Some(error.to_string()),
            finish_reason: None,
        }
    }
}

/// Milliseconds per stage.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize)]
pub struct Timings {
    /// Retrieving the passages, in milliseconds.
    pub retrieve_ms: f64,
    /// With an embedding model: judging whether the sent passages answer
    /// the question (their sentences embedded and scored); 0 without one.
    pub gate_ms: f64,
    /// Generating the answer (every attempt, with its citation
    /// validation), in milliseconds.
    pub generate_ms: f64,
    /// Checking the answer served, in milliseconds.
    pub check_ms: f64,
    /// The whole request, in milliseconds.
    pub total_ms: f64,
    /// Streaming only: time to the first validated sentence.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub first_sentence_ms: Option<f64>,
}

/// The full result of `ask`: the check report's findings (flattened: the
/// same JSON fields as `CheckOutput`'s) plus the question, the answer
/// served, the passages sent, the refusal and timings.
///
/// A refusal claims nothing: its findings are
/// [`Findings::nothing_claimed`] (status `no_evidence`), and `refusal`
/// says why.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AskResult {
    /// The question, as asked.
    pub question: String,
    /// The text served (after the policy; the refusal rendered when refused).
    pub answer: String,
    /// The check report's findings on the answer served (flattened into
    /// this object's JSON).
    #[serde(flatten)]
    pub findings: Findings,
    /// How many sentences the answer has, and of each verdict.
    pub counts: Counts,
    /// The passages sent, numbered: `[k]` is the k-th.
    pub passages: Vec<SentPassageInfo>,
    /// Why the answer is a refusal; `None` when it is not one.
    pub refusal: Option<AskRefusal>,
    /// The relevance claim: does the answer served address the question?
    /// `null` for a refusal (it claims nothing). Without an embedding
    /// model the verdict is `unchecked` (method `lexical`). `grounded`
    /// requires `supported` and a `yes` here.
    pub answers_question: Option<AnswersQuestion>,
    /// Milliseconds per stage.
    pub timings: Timings,
    /// Every generation attempt's raw output (two when it regenerated).
    pub attempts: Vec<Attempt>,
    /// The generator's name: `extractive`, `openai`, `anthropic` or
    /// `scripted`.
    pub generator: String,
    /// Which retrieval found the passages: `lexical` or `hybrid`.
    pub retrieval: Retrieval,
    /// The first attempt was rejected and the model asked once more.
    pub regenerated: bool,
    /// Why the model stopped on the attempt served (`stop`, `length`,
    /// `end_turn`, `max_tokens`, ...); `null` when no answer was served.
    pub finish_reason: Option<String>,
    /// The attempt served was cut at the token limit: its unfinished last
    /// sentence was dropped before the check.
    pub truncated: bool,
    /// How the model was asked on the last attempt: `structured` (JSON
    /// under a schema whose ids are the passages sent, rendered to
    /// markers) or `free_text`; `null` when no model answered (the gate).
    pub generation_mode: Option<GenerationMode>,
}

/// How an answer was generated.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum GenerationMode {
    /// JSON constrained by the answer schema (citation ids an `enum` of
    /// the passages sent), rendered to marker text before validation.
    Structured,
    /// Text with the model's own `[k]` markers: the backend cannot take a
    /// schema (or rejected it, or `openai.structured = "off"`), or ignored
    /// it and answered in text.
    FreeText,
}

impl GenerationMode {
    /// The JSON name: `structured` or `free_text`.
    pub fn as_str(self) -> &'static str {
        match self {
            GenerationMode::Structured => "structured",
            GenerationMode::FreeText => "free_text",
        }
    }
}

impl AskResult {
    /// Empties every url that is not a safe link
    /// (`groundcite_core::link::sanitize`): the sources, the passages sent
    /// and a refusal's closest passages. What the service applies to every
    /// answer it sends, whoever made it.
    pub fn sanitize_links(&mut self) {
        self.findings.sanitize_links();
        for p in &mut self.passages {
            groundcite_core::link::sanitize(&mut p.source_url);
        }
        if let Some(refusal) = &mut self.refusal {
            for p in &mut refusal.closest_passages {
                groundcite_core::link::sanitize(&mut p.source_url);
            }
        }
    }
}

impl std::ops::Deref for AskResult {
    type Target = Findings;

    fn deref(&self) -> &Findings {
        &self.findings
    }
}

impl std::ops::DerefMut for AskResult {
    fn deref_mut(&mut self) -> &mut Findings {
        &mut self.findings
    }
}

/// Which retrieval ran: BM25 alone, or dense vectors fused with BM25
/// (a model configured and the index ingested with it).
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Retrieval {
    /// BM25 alone.
    Lexical,
    /// Dense vectors fused with BM25.
    Hybrid,
}

impl Retrieval {
    /// The JSON name: `lexical` or `hybrid`.
    pub fn as_str(self) -> &'static str {
        match self {
            Retrieval::Lexical => "lexical",
            Retrieval::Hybrid => "hybrid",
        }
    }
}

/// A streamed sentence whose markers all resolve (the data of an SSE
/// `sentence` event).
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StreamedSentence {
    /// Its position among the sentences streamed, from 0.
    pub index: usize,
    /// The sentence's text.
    pub text: String,
    /// Byte span into the answer.
    pub start: usize,
    /// End of the byte span (exclusive).
    pub end: usize,
    /// Ids cited, sorted, unique.
    pub citations: Vec<u64>,
    /// Its markers, byte spans into the answer.
    pub markers: Vec<groundcite_core::check::MarkerOut>,
    /// `supported`, `contradicted`, `unsupported`, `uncited` (or
    /// `unchecked` with support checking off).
    pub verdict: String,
}

/// The sentences streamed so far are withdrawn (the data of an SSE
/// `retract` event): their attempt was rejected; the final answer
/// replaces them.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Retraction {
    /// How many sentences are withdrawn (all sent so far).
    pub count: usize,
    /// `regenerated`, `refused`, `dropped` or `error`.
    pub reason: String,
}

/// Events of a streamed answer.
#[derive(Debug)]
pub enum AskEvent {
    /// A sentence whose markers all resolve (and, with support checking
    /// on, its verdict). Never sent for a sentence with an id never sent.
    Sentence(StreamedSentence),
    /// Every `Sentence` sent so far is withdrawn: the attempt they came
    /// from was rejected. Sent before `Final` (or `Error`), whose answer
    /// replaces them.
    Retract(Retraction),
    /// The full result. When no `Retract` came before it, the sentences
    /// streamed are sentences of its `answer`.
    Final(Box<AskResult>),
    /// A failure. Last event (after a `Retract` if sentences were shown).
    Error(EngineError),
}

/// The first line of a `no_direct_answer` refusal, and what the CLI and
/// the page say of an answer that does not address the question.
pub const NO_DIRECT_ANSWER: &str = "The sources found don't answer this directly.";

/// The headline of an answer whose cited sentences are stated in the
/// sources but whose relevance to the question was not judged (no
/// embedding model): never "Checked".
pub const SOURCES_FOUND_UNJUDGED: &str = "Sources found; not checked that they answer you.";

/// The refusal as a reader sees it: the contract's sentence, what was
/// searched, what would be needed, the nearest topics, the hand-off.
pub fn render_refusal(r: &AskRefusal) -> String {
    // "Not covered" only when nothing relevant was found: a refusal that
    // links passages on the topic says they don't answer it.
    let related = r.reason == RefusalReason::NoDirectAnswer || !r.closest_passages.is_empty();
    let mut out = String::from(if related {
        NO_DIRECT_ANSWER
    } else {
        groundcite_core::REFUSAL_SENTENCE
    });
    out.push_str(&format!("\nSearched for: \"{}\".", r.searched));
    if !r.closest_passages.is_empty() {
        out.push_str("\nClosest passages:");
        for p in &r.closest_passages {
            let label = if p.section.is_empty() {
                &p.id
            } else {
                &p.section
            };
            out.push_str(&format!("\n- {label} <{}>", p.source_url));
        }
    }
    if let Some(needed) = &r.needed {
        out.push_str(&format!("\nWould be needed: {needed}."));
    }
    if !r.nearest_topics.is_empty() {
        out.push_str(&format!(
            "\nNearest topics the documents do cover: {}.",
            r.nearest_topics.join("; ")
        ));
    }
    if !r.handoff.is_empty() {
        out.push('\n');
        out.push_str(&r.handoff);
    }
    out
}
