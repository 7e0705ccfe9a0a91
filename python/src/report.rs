//! The check's report as typed Python objects.
//!
//! A report keeps the Rust value it was built from; its parts are views
//! into it (a sentence is the report and an index), made when read, so
//! `check()` costs the check and one object. Every object has `to_dict()`,
//! which is exactly the JSON of `groundcite check --json` (the same serde
//! serialisation). Offsets `start` / `end` are byte offsets, as in the JSON;
//! `char_start` / `char_end` are the same spans in `str` indices, for
//! slicing the Python string.

use std::sync::Arc;

use groundcite_core::check::{CheckOutput, Findings, SentenceOut};
use groundcite_engine::AskResult;
use pyo3::prelude::*;
use serde::Serialize;

/// What a report's views read: a check's output or an answer's. One per
/// report, behind an `Arc`: the variants' sizes do not matter.
#[allow(clippy::large_enum_variant)]
pub enum Owner {
    Check { output: CheckOutput, answer: String },
    Ask(AskResult),
}

impl Owner {
    pub fn findings(&self) -> &Findings {
        match self {
            Owner::Check { output, .. } => &output.findings,
            Owner::Ask(result) => &result.findings,
        }
    }

    pub fn answer(&self) -> &str {
        match self {
            Owner::Check { answer, .. } => answer,
            Owner::Ask(result) => &result.answer,
        }
    }

    /// The `str` index of byte offset `byte` of the answer.
    fn char_index(&self, byte: usize) -> usize {
        let answer = self.answer();
        let byte = byte.min(answer.len());
        answer.get(..byte).map_or(byte, |s| s.chars().count())
    }
}

/// One view per item of a list of the findings: `make(owner, i)`.
pub fn views<T>(owner: &Arc<Owner>, len: usize, make: impl Fn(Arc<Owner>, usize) -> T) -> Vec<T> {
    (0..len).map(|i| make(Arc::clone(owner), i)).collect()
}

pub fn to_py<T: Serialize + ?Sized>(py: Python<'_>, value: &T) -> PyResult<Py<PyAny>> {
    Ok(pythonize::pythonize(py, value)
        .map_err(|e| crate::errors::error("internal", e.to_string()))?
        .unbind())
}

/// The JSON name of a unit enum value (`list_item`, `cited`).
fn name<T: Serialize>(value: &T) -> String {
    match serde_json::to_value(value) {
        Ok(serde_json::Value::String(s)) => s,
        _ => String::new(),
    }
}

fn json<T: Serialize + ?Sized>(value: &T) -> PyResult<String> {
    serde_json::to_string(value).map_err(|e| crate::errors::error("internal", e.to_string()))
}

/// The full report of one answer (`groundcite check --json`).
#[pyclass(frozen, module = "groundcite")]
pub struct Report {
    pub owner: Arc<Owner>,
}

fn output(owner: &Owner) -> &CheckOutput {
    match owner {
        Owner::Check { output, .. } => output,
        Owner::Ask(_) => unreachable!("a Report is made from a check"),
    }
}

/// The getters shared by `Report` and `Answer`: the findings' fields.
macro_rules! findings_getters {
    ($ty:ident) => {
        #[pymethods]
        impl $ty {
            /// `ok`, `unverified` (a marker names a passage never sent) or
            /// `no_evidence` (a refusal, or nothing cited).
            #[getter]
            fn status(&self) -> &'static str {
                self.owner.findings().status.as_str()
            }
            /// The support claim: coverage at or over the threshold, no
            /// contradicted or unsupported sentence, status not
            /// `unverified`.
            #[getter]
            fn supported(&self) -> bool {
                self.owner.findings().supported
            }
            /// The claim a reader trusts: `supported`, and for an answer
            /// to a question also judged to answer it
            /// (`answers_question` `yes`, which needs the embedding
            /// model).
            #[getter]
            fn grounded(&self) -> bool {
                self.owner.findings().grounded
            }
            /// Every id cited, sorted, unique.
            #[getter]
            fn cited(&self) -> Vec<u64> {
                self.owner.findings().cited.clone()
            }
            /// Cited ids that were never sent.
            #[getter]
            fn bad_ids(&self) -> Vec<u64> {
                self.owner.findings().bad_ids.clone()
            }
            /// Factual sentences without a marker.
            #[getter]
            fn unmarked(&self) -> Vec<Span> {
                views(
                    &self.owner,
                    self.owner.findings().unmarked.len(),
                    |owner, i| Span { owner, i },
                )
            }
            /// Cited factual sentences over factual sentences (1.0 when none).
            #[getter]
            fn coverage(&self) -> f64 {
                self.owner.findings().coverage
            }
            #[getter]
            fn sentences(&self) -> Vec<Sentence> {
                views(
                    &self.owner,
                    self.owner.findings().sentences.len(),
                    |owner, i| Sentence { owner, i },
                )
            }
            /// One source per document cited, in citation order.
            #[getter]
            fn sources(&self) -> Vec<Source> {
                views(
                    &self.owner,
                    self.owner.findings().sources.len(),
                    |owner, i| Source { owner, i },
                )
            }
            /// `lexical`, `semantic`, `llm`, or None when no support check ran.
            #[getter]
            fn verifier(&self) -> Option<&'static str> {
                self.owner.findings().verifier.map(|v| v.as_str())
            }
        }
    };
}

findings_getters!(Report);

#[pymethods]
impl Report {
    /// The case id, when checking cases; None otherwise.
    #[getter]
    fn id(&self) -> Option<String> {
        output(&self.owner).id.clone()
    }
    /// The refusal form found, when the answer is a refusal.
    #[getter]
    fn refusal(&self) -> Option<Refusal> {
        output(&self.owner).refusal.as_ref().map(|r| Refusal {
            form: name(&r.form),
            needed: r.needed.clone(),
        })
    }
    #[getter]
    fn counts(&self) -> Counts {
        counts(&output(&self.owner).counts)
    }
    #[getter]
    fn malformed_markers(&self) -> usize {
        output(&self.owner).malformed_markers
    }
    /// The answer checked.
    #[getter]
    fn answer(&self) -> &str {
        self.owner.answer()
    }
    /// The report as plain dicts and lists: exactly the JSON of
    /// `groundcite check --json`.
    fn to_dict(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        to_py(py, output(&self.owner))
    }
    /// The report as JSON text.
    fn to_json(&self) -> PyResult<String> {
        json(output(&self.owner))
    }
    fn __repr__(&self) -> String {
        let f = self.owner.findings();
        format!(
            "Report(status={:?}, grounded={}, cited={:?}, bad_ids={:?}, coverage={:.2}, sentences={})",
            f.status.as_str(),
            if f.grounded { "True" } else { "False" },
            f.cited,
            f.bad_ids,
            f.coverage,
            f.sentences.len()
        )
    }
}

/// One sentence of the answer and its verdict.
#[pyclass(frozen, module = "groundcite")]
pub struct Sentence {
    owner: Arc<Owner>,
    i: usize,
}

impl Sentence {
    fn get(&self) -> &SentenceOut {
        &self.owner.findings().sentences[self.i]
    }
}

#[pymethods]
impl Sentence {
    #[getter]
    fn text(&self) -> &str {
        &self.get().text
    }
    /// Byte offset of the sentence in the answer (as in the JSON).
    #[getter]
    fn start(&self) -> usize {
        self.get().start
    }
    #[getter]
    fn end(&self) -> usize {
        self.get().end
    }
    /// `str` index of the sentence in the answer: `answer[char_start:char_end]`.
    #[getter]
    fn char_start(&self) -> usize {
        self.owner.char_index(self.get().start)
    }
    #[getter]
    fn char_end(&self) -> usize {
        self.owner.char_index(self.get().end)
    }
    /// `prose`, `list_item`, `heading` or `table_row`.
    #[getter]
    fn kind(&self) -> String {
        name(&self.get().kind)
    }
    /// The ids this sentence cites.
    #[getter]
    fn citations(&self) -> Vec<u64> {
        self.get().citations.clone()
    }
    #[getter]
    fn markers(&self) -> Vec<Marker> {
        (0..self.get().markers.len())
            .map(|j| Marker {
                owner: Arc::clone(&self.owner),
                i: self.i,
                j,
            })
            .collect()
    }
    #[getter]
    fn factual(&self) -> bool {
        self.get().factual
    }
    /// Why the sentence is factual or not (`cited`, `number`, ...).
    #[getter]
    fn reason(&self) -> String {
        name(&self.get().reason)
    }
    /// `supported`, `contradicted`, `unsupported`, `uncited` or `not_factual`.
    #[getter]
    fn verdict(&self) -> &'static str {
        self.get().verdict.as_str()
    }
    /// The verdict in plain words, the correction first ("" when the
    /// sentence states no fact).
    #[getter]
    fn message(&self) -> &str {
        &self.get().message
    }
    /// The machine reasons (`number_mismatch: "Friday" vs "Wednesday"`).
    #[getter]
    fn reasons(&self) -> Vec<String> {
        self.get().reasons.clone()
    }
    /// The span of a cited passage that supports or contradicts it.
    #[getter]
    fn evidence(&self) -> Option<Evidence> {
        self.get().evidence.as_ref().map(|_| Evidence {
            owner: Arc::clone(&self.owner),
            i: self.i,
        })
    }
    /// Passages that would support it (citation repair).
    #[getter]
    fn suggested(&self) -> Vec<usize> {
        self.get().suggested.clone()
    }
    /// Cited passages that support nothing in it.
    #[getter]
    fn idle_citations(&self) -> Vec<usize> {
        self.get().idle_citations.clone()
    }
    fn to_dict(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        to_py(py, self.get())
    }
    fn __repr__(&self) -> String {
        let s = self.get();
        format!(
            "Sentence({:?}, verdict={:?}, citations={:?})",
            s.text,
            s.verdict.as_str(),
            s.citations
        )
    }
}

/// A citation marker (`[2]`, `[1, 3]`, `[2-4]`): its byte span in the
/// answer and the ids it names, ids never sent included.
#[pyclass(frozen, module = "groundcite")]
pub struct Marker {
    owner: Arc<Owner>,
    i: usize,
    j: usize,
}

impl Marker {
    fn get(&self) -> &groundcite_core::check::MarkerOut {
        &self.owner.findings().sentences[self.i].markers[self.j]
    }
}

#[pymethods]
impl Marker {
    #[getter]
    fn start(&self) -> usize {
        self.get().start
    }
    #[getter]
    fn end(&self) -> usize {
        self.get().end
    }
    #[getter]
    fn char_start(&self) -> usize {
        self.owner.char_index(self.get().start)
    }
    #[getter]
    fn char_end(&self) -> usize {
        self.owner.char_index(self.get().end)
    }
    #[getter]
    fn ids(&self) -> Vec<u64> {
        self.get().ids.clone()
    }
    /// The marker as written in the answer.
    #[getter]
    fn text(&self) -> &str {
        let m = self.get();
        self.owner.answer().get(m.start..m.end).unwrap_or("")
    }
    fn to_dict(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        to_py(py, self.get())
    }
    fn __repr__(&self) -> String {
        format!("Marker({:?}, ids={:?})", self.text(), self.get().ids)
    }
}

/// A factual sentence without a marker.
#[pyclass(frozen, module = "groundcite")]
pub struct Span {
    owner: Arc<Owner>,
    i: usize,
}

impl Span {
    fn get(&self) -> &groundcite_core::check::SpanText {
        &self.owner.findings().unmarked[self.i]
    }
}

#[pymethods]
impl Span {
    #[getter]
    fn text(&self) -> &str {
        &self.get().text
    }
    #[getter]
    fn start(&self) -> usize {
        self.get().start
    }
    #[getter]
    fn end(&self) -> usize {
        self.get().end
    }
    #[getter]
    fn char_start(&self) -> usize {
        self.owner.char_index(self.get().start)
    }
    #[getter]
    fn char_end(&self) -> usize {
        self.owner.char_index(self.get().end)
    }
    fn to_dict(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        to_py(py, self.get())
    }
    fn __str__(&self) -> &str {
        &self.get().text
    }
    fn __repr__(&self) -> String {
        format!("Span({:?})", self.get().text)
    }
}

/// The span of a cited passage that decided a sentence's verdict.
#[pyclass(frozen, module = "groundcite")]
pub struct Evidence {
    owner: Arc<Owner>,
    i: usize,
}

impl Evidence {
    fn get(&self) -> &groundcite_core::check::EvidenceOut {
        self.owner.findings().sentences[self.i]
            .evidence
            .as_ref()
            .expect("made only for a sentence with evidence")
    }
}

#[pymethods]
impl Evidence {
    /// The passage's number (`[k]`).
    #[getter]
    fn passage(&self) -> usize {
        self.get().passage
    }
    #[getter]
    fn quote(&self) -> &str {
        &self.get().quote
    }
    /// Byte offsets of the quote in the passage's text.
    #[getter]
    fn start(&self) -> usize {
        self.get().start
    }
    #[getter]
    fn end(&self) -> usize {
        self.get().end
    }
    fn to_dict(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        to_py(py, self.get())
    }
    fn __repr__(&self) -> String {
        let e = self.get();
        format!("Evidence(passage={}, quote={:?})", e.passage, e.quote)
    }
}

/// A document cited: what a reader clicks.
#[pyclass(frozen, module = "groundcite")]
pub struct Source {
    pub(crate) owner: Arc<Owner>,
    pub(crate) i: usize,
}

impl Source {
    fn get(&self) -> &groundcite_core::resolve::Source {
        &self.owner.findings().sources[self.i]
    }
}

#[pymethods]
impl Source {
    /// The section label.
    #[getter]
    fn label(&self) -> &str {
        &self.get().label
    }
    #[getter]
    fn url(&self) -> &str {
        &self.get().url
    }
    /// The evidence quoted from the document.
    #[getter]
    fn quote(&self) -> &str {
        &self.get().quote
    }
    /// The passage quoted (`[k]`) and the quote's byte span in its text.
    #[getter]
    fn quote_passage(&self) -> usize {
        self.get().quote_passage
    }
    #[getter]
    fn quote_start(&self) -> usize {
        self.get().quote_start
    }
    #[getter]
    fn quote_end(&self) -> usize {
        self.get().quote_end
    }
    /// The passages of this document that were cited.
    #[getter]
    fn passages(&self) -> Vec<usize> {
        self.get().passages.clone()
    }
    /// Byte spans of the answer's markers that cite it.
    #[getter]
    fn markers(&self) -> Vec<(usize, usize)> {
        self.get()
            .markers
            .iter()
            .map(|s| (s.start, s.end))
            .collect()
    }
    fn to_dict(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        to_py(py, self.get())
    }
    fn __repr__(&self) -> String {
        let s = self.get();
        format!("Source(label={:?}, url={:?})", s.label, s.url)
    }
}

/// The refusal form an answer used.
#[pyclass(frozen, get_all, module = "groundcite")]
pub struct Refusal {
    /// `sentence` ("Not covered by the provided documents.") or `sentinel`
    /// (`NOT_IN_SOURCES: ...`).
    pub form: String,
    /// What the sentinel says would be needed.
    pub needed: Option<String>,
}

#[pymethods]
impl Refusal {
    fn to_dict(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        to_py(
            py,
            &serde_json::json!({"form": self.form, "needed": self.needed}),
        )
    }
    fn __repr__(&self) -> String {
        format!("Refusal(form={:?}, needed={:?})", self.form, self.needed)
    }
}

/// How many sentences, and of which verdict.
#[pyclass(frozen, get_all, module = "groundcite")]
#[derive(Serialize)]
pub struct Counts {
    pub sentences: usize,
    pub factual: usize,
    pub supported: usize,
    pub contradicted: usize,
    pub unsupported: usize,
    pub uncited: usize,
}

pub fn counts(c: &groundcite_core::check::Counts) -> Counts {
    Counts {
        sentences: c.sentences,
        factual: c.factual,
        supported: c.supported,
        contradicted: c.contradicted,
        unsupported: c.unsupported,
        uncited: c.uncited,
    }
}

#[pymethods]
impl Counts {
    fn to_dict(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        to_py(py, self)
    }
    fn __repr__(&self) -> String {
        format!(
            "Counts(sentences={}, factual={}, supported={}, contradicted={}, unsupported={}, uncited={})",
            self.sentences,
            self.factual,
            self.supported,
            self.contradicted,
            self.unsupported,
            self.uncited
        )
    }
}

/// The answer served by `Index.ask`: its text, the check's findings, the
/// passages sent, the refusal when it refused.
#[pyclass(frozen, module = "groundcite")]
pub struct Answer {
    pub owner: Arc<Owner>,
}

fn ask(owner: &Owner) -> &AskResult {
    match owner {
        Owner::Ask(result) => result,
        Owner::Check { .. } => unreachable!("an Answer is made from ask"),
    }
}

findings_getters!(Answer);

#[pymethods]
impl Answer {
    #[getter]
    fn question(&self) -> &str {
        &ask(&self.owner).question
    }
    /// The text served (a refusal's text when it refused).
    #[getter]
    fn answer(&self) -> &str {
        &ask(&self.owner).answer
    }
    #[getter]
    fn refused(&self) -> bool {
        ask(&self.owner).refusal.is_some()
    }
    /// Why it refused and what would help, when it refused (a dict:
    /// `reason`, `searched`, `needed`, `nearest_topics`, `handoff`,
    /// `closest_passages`).
    #[getter]
    fn refusal(&self, py: Python<'_>) -> PyResult<Option<Py<PyAny>>> {
        ask(&self.owner)
            .refusal
            .as_ref()
            .map(|r| to_py(py, r))
            .transpose()
    }
    #[getter]
    fn counts(&self) -> Counts {
        counts(&ask(&self.owner).counts)
    }
    /// The passages sent, numbered (dicts: `n`, `id`, `source_url`,
    /// `section`, `score`).
    #[getter]
    fn passages(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        to_py(py, &ask(&self.owner).passages)
    }
    /// `extractive`, or the model backend's name.
    #[getter]
    fn generator(&self) -> &str {
        &ask(&self.owner).generator
    }
    /// `lexical` or `hybrid`.
    #[getter]
    fn retrieval(&self) -> &'static str {
        ask(&self.owner).retrieval.as_str()
    }
    #[getter]
    fn regenerated(&self) -> bool {
        ask(&self.owner).regenerated
    }
    /// Does the answer address the question (`{score, verdict}`; verdict
    /// `unchecked` without a model).
    #[getter]
    fn answers_question(&self, py: Python<'_>) -> PyResult<Option<Py<PyAny>>> {
        ask(&self.owner)
            .answers_question
            .as_ref()
            .map(|a| to_py(py, a))
            .transpose()
    }
    /// Milliseconds per stage (`retrieve_ms`, `gate_ms`, `generate_ms`,
    /// `check_ms`, `total_ms`).
    #[getter]
    fn timings(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        to_py(py, &ask(&self.owner).timings)
    }
    /// Exactly the JSON of `groundcite ask --json`.
    fn to_dict(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        to_py(py, ask(&self.owner))
    }
    fn to_json(&self) -> PyResult<String> {
        json(ask(&self.owner))
    }
    fn __str__(&self) -> &str {
        &ask(&self.owner).answer
    }
    fn __repr__(&self) -> String {
        let a = ask(&self.owner);
        format!(
            "Answer({:?}, status={:?}, grounded={}, refused={})",
            a.answer,
            a.findings.status.as_str(),
            if a.findings.grounded { "True" } else { "False" },
            if a.refusal.is_some() { "True" } else { "False" }
        )
    }
}
