//! `Index`: ingest, search and ask over the embedded tantivy index (a
//! folder) or PostgreSQL (`postgres://...`), with the same engine as the
//! CLI and the service.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use futures::StreamExt;
use futures::stream::BoxStream;
use groundcite_engine::settings::Override;
use groundcite_engine::{AskEvent, AskOptions, Engine, MAX_TOP_K, Settings};
use groundcite_index::{ChunkIndex, IngestOptions, Progress};
use pyo3::exceptions::PyFileNotFoundError;
use pyo3::prelude::*;
use pyo3::types::{PyMapping, PyString};

use crate::errors;
use crate::report::{Answer, Owner, to_py};

/// An index of your documents: a folder (created on first ingest) or a
/// `postgres://` URL.
#[pyclass(frozen, module = "groundcite")]
pub struct Index {
    location: String,
    file: Option<PathBuf>,
    flags: Vec<Override>,
    settings: Settings,
    runtime: Arc<tokio::runtime::Runtime>,
    /// Engines by generator (the overrides `ask` was given), built on first
    /// use and dropped by an ingest.
    engines: Mutex<HashMap<String, Engine>>,
}

impl Index {
    /// The settings with the index's own keys and `extra` on top.
    fn settings_with(&self, extra: &[Override]) -> PyResult<Settings> {
        let mut flags = self.flags.clone();
        flags.push(Override::flag(
            "index",
            self.location.clone(),
            "Index(path)",
        ));
        flags.push(Override::flag("demo_on_first_use", "false", "Index(path)"));
        flags.extend_from_slice(extra);
        let settings = Settings::explicit(self.file.as_deref(), &flags)
            .map_err(errors::engine)?
            .settings;
        settings.validate().map_err(errors::engine)?;
        Ok(settings)
    }

    fn engine(&self, py: Python<'_>, generator: Option<&Bound<'_, PyAny>>) -> PyResult<Engine> {
        let extra = match generator {
            None => Vec::new(),
            Some(g) if g.is_none() => Vec::new(),
            Some(g) => match g.cast::<PyString>() {
                Ok(name) => vec![Override::flag(
                    "generator",
                    name.to_str()?.to_owned(),
                    "ask(generator=...)",
                )],
                Err(_) if g.cast::<PyMapping>().is_ok() => crate::overrides_of(Some(g))?,
                Err(_) => {
                    return Err(errors::invalid_input(format!(
                        "generator: expected a name (\"extractive\", \"openai\", \"anthropic\") or a mapping of settings, got {}",
                        g.get_type()
                    )));
                }
            },
        };
        let key = extra
            .iter()
            .map(|o| format!("{}={}", o.key, o.value))
            .collect::<Vec<_>>()
            .join("\n");
        if let Some(engine) = self.engines.lock().expect("engines lock").get(&key) {
            return Ok(engine.clone());
        }
        let settings = self.settings_with(&extra)?;
        let engine = py
            .detach(|| Engine::from_settings(settings))
            .map_err(errors::engine)?;
        self.engines
            .lock()
            .expect("engines lock")
            .insert(key, engine.clone());
        Ok(engine)
    }

    /// The index opened for writing, with the configured model's
    /// vectors when `with_model` (an ingest).
    fn open_for_ingest(&self, with_model: bool) -> PyResult<Box<dyn ChunkIndex>> {
        let embedder = if with_model {
            groundcite_engine::load_embedder(&self.settings)
                .map_err(errors::engine)?
                .map(|e| groundcite_engine::index_embedder(&self.settings, &e))
        } else {
            None
        };
        if groundcite_pg::is_postgres_url(&self.location) {
            let mut index = groundcite_pg::PgIndex::connect(&self.location, Default::default())
                .map_err(|e| errors::error("index_unavailable", e.to_string()))?;
            if let Some(embedder) = embedder {
                index.set_embedder(embedder);
            }
            return Ok(Box::new(index));
        }
        let mut index = groundcite_index::Index::open_or_create(std::path::Path::new(
            &self.location,
        ))
        .map_err(|e| {
            errors::error(
                "index_unavailable",
                format!("cannot open the index in {}: {e}", self.location),
            )
        })?;
        if let Some(embedder) = embedder {
            index.set_embedder(embedder);
        }
        Ok(Box::new(index))
    }

    fn summary(
        &self,
        index: &dyn ChunkIndex,
        summary: groundcite_index::IngestSummary,
        seconds: f64,
    ) -> PyResult<IngestSummary> {
        let list = |l: &[groundcite_index::IngestError]| {
            l.iter()
                .map(|e| (e.path.display().to_string(), e.message.clone()))
                .collect()
        };
        Ok(IngestSummary {
            files_seen: summary.files_seen,
            indexed: summary.indexed,
            unchanged: summary.unchanged,
            removed: summary.removed,
            skipped: summary.skipped,
            chunks_written: summary.chunks,
            chunks_in_index: index
                .num_chunks()
                .map_err(|e| errors::error("index_unavailable", e.to_string()))?,
            errors: list(&summary.errors),
            warnings: list(&summary.warnings),
            embedded: summary.embedded,
            model_changed_from: summary.model_changed.clone(),
            seconds,
        })
    }
}

#[pymethods]
impl Index {
    /// Opens (or, at the first ingest, creates) the index at `path`.
    /// `config` is a `Config` or a mapping of settings (as `Config`'s
    /// `overrides`); `index` and `demo_on_first_use` are the index's own.
    #[new]
    #[pyo3(signature = (path, config=None))]
    fn new(path: PathBuf, config: Option<&Bound<'_, PyAny>>) -> PyResult<Index> {
        let (file, flags) = match config {
            Some(c) if !c.is_none() => match c.cast::<crate::Config>() {
                Ok(config) => {
                    let config = config.get();
                    (config.file.clone(), config.flags.clone())
                }
                Err(_) => (None, crate::overrides_of(Some(c))?),
            },
            _ => (None, Vec::new()),
        };
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("groundcite")
            .enable_all()
            .build()
            .map(Arc::new)
            .map_err(|e| errors::error("internal", format!("starting the runtime: {e}")))?;
        let mut index = Index {
            location: path.to_string_lossy().into_owned(),
            file,
            flags,
            settings: Settings::default(),
            runtime,
            engines: Mutex::new(HashMap::new()),
        };
        index.settings = index.settings_with(&[])?;
        Ok(index)
    }

    /// Where the index is: its folder or URL.
    #[getter]
    fn location(&self) -> &str {
        &self.location
    }

    /// `lexical`, or `hybrid` with a model (`model_dir`) and vectors.
    #[getter]
    fn retrieval(&self, py: Python<'_>) -> PyResult<&'static str> {
        Ok(self.engine(py, None)?.retrieval().as_str())
    }

    /// Applies the pending schema migrations of a PostgreSQL index (as
    /// `groundcite db migrate`: idempotent, safe to run concurrently) and
    /// returns those applied now, `(version, name)`. A folder index needs
    /// none: `[]`.
    fn migrate(&self, py: Python<'_>) -> PyResult<Vec<(i32, String)>> {
        if !groundcite_pg::is_postgres_url(&self.location) {
            return Ok(Vec::new());
        }
        let report = py
            .detach(|| groundcite_pg::migrate(&self.location, &Default::default()))
            .map_err(|e| errors::error("index_unavailable", e.to_string()))?;
        Ok(report
            .applied_now
            .into_iter()
            .map(|(version, name)| (version, name.to_owned()))
            .collect())
    }

    /// How many chunks the index holds (0 before the first ingest).
    fn __len__(&self, py: Python<'_>) -> PyResult<usize> {
        if !groundcite_pg::is_postgres_url(&self.location)
            && !std::path::Path::new(&self.location).exists()
        {
            return Ok(0);
        }
        let index = self.open_for_ingest(false)?;
        let n = py
            .detach(|| index.num_chunks())
            .map_err(|e| errors::error("index_unavailable", e.to_string()))?;
        Ok(n as usize)
    }

    /// Ingests files and folders (Markdown, HTML, text): new and changed
    /// files are (re)chunked, unchanged ones kept, files gone from an
    /// ingested folder removed. A file that cannot be read is listed in
    /// `errors`; the others are ingested.
    ///
    /// `progress`, when given, is called with a dict per step, from the
    /// thread that called `ingest`: `{"stage": "started", "total_files"}`,
    /// `{"stage": "file", "path", "done", "total"}`, `{"stage":
    /// "embedding", "done", "total"}` (with a model), `{"stage":
    /// "indexing_vectors", "chunks"}` (with a model, from 20,000 chunks),
    /// `{"stage": "committing"}`. An exception it raises stops its calls and is raised
    /// once the run (which completes) has been committed.
    #[pyo3(signature = (paths, *, url_template=None, strip_prefix=None, base_url=None, handbook=false, progress=None))]
    #[allow(clippy::too_many_arguments)]
    fn ingest(
        &self,
        py: Python<'_>,
        paths: Vec<PathBuf>,
        url_template: Option<String>,
        strip_prefix: Option<String>,
        base_url: Option<String>,
        handbook: bool,
        progress: Option<Py<PyAny>>,
    ) -> PyResult<IngestSummary> {
        if paths.is_empty() {
            return Err(errors::error(
                "bad_request",
                "ingest: no paths given".into(),
            ));
        }
        for p in &paths {
            if !p.exists() {
                return Err(PyFileNotFoundError::new_err(format!(
                    "{}: no such file or directory",
                    p.display()
                )));
            }
        }
        let mut opts = if handbook {
            IngestOptions::handbook()
        } else {
            IngestOptions::default()
        };
        opts.url_template = url_template.or(opts.url_template);
        opts.strip_prefix = strip_prefix.or(opts.strip_prefix);
        opts.base_url = base_url.or(opts.base_url);
        let mut index = self.open_for_ingest(true)?;
        let started = std::time::Instant::now();
        let mut reporter = Reporter::new(progress);
        let summary = py
            .detach(|| index.ingest(&paths, &opts, &mut |p| reporter.report(p)))
            .map_err(|e| errors::error("index_unavailable", e.to_string()))?;
        let out = self.summary(index.as_ref(), summary, started.elapsed().as_secs_f64());
        drop(index);
        self.engines.lock().expect("engines lock").clear();
        reporter.finish()?;
        out
    }

    /// Ingests the embedded demo handbook (a fictional company's policies):
    /// what the quick start and the examples search. `progress` as
    /// `ingest`'s.
    #[pyo3(signature = (*, progress=None))]
    fn ingest_demo(&self, py: Python<'_>, progress: Option<Py<PyAny>>) -> PyResult<IngestSummary> {
        let mut index = self.open_for_ingest(true)?;
        let started = std::time::Instant::now();
        let opts = IngestOptions::default();
        let mut reporter = Reporter::new(progress);
        let summary = py
            .detach(|| {
                index.ingest_documents(
                    "demo",
                    groundcite_index::demo_documents(),
                    &opts,
                    &mut |p| reporter.report(p),
                )
            })
            .map_err(|e| errors::error("index_unavailable", e.to_string()))?;
        let out = self.summary(index.as_ref(), summary, started.elapsed().as_secs_f64());
        drop(index);
        self.engines.lock().expect("engines lock").clear();
        reporter.finish()?;
        out
    }

    /// The top `k` passages for `query` (hybrid with a model, else BM25),
    /// with normalised scores in 0..1. Hits are passages: pass them to
    /// `check` and `render_prompt` as they are.
    #[pyo3(signature = (query, k=5))]
    fn search(&self, py: Python<'_>, query: &str, k: usize) -> PyResult<Vec<Hit>> {
        check_k("k", k)?;
        if query.trim().is_empty() {
            return Err(errors::error("empty_query", "the query is empty".into()));
        }
        let engine = self.engine(py, None)?;
        let query = query.to_owned();
        let hits = py
            .detach(|| engine.search(&query, k))
            .map_err(errors::engine)?;
        Ok(hits.into_iter().map(Hit::from).collect())
    }

    /// Answers `question`: retrieval, the gate, the generator under the
    /// citation contract, validation (one regeneration on ids never sent),
    /// support checking and sources; or a refusal that helps.
    /// `generator`: None (the configuration's, by default the extractive
    /// generator), a name (`"extractive"`, `"openai"`, `"anthropic"`), or a
    /// mapping of settings (`groundcite.openai_compatible(...)` makes one).
    #[pyo3(signature = (question, *, generator=None, top_k=None))]
    fn ask(
        &self,
        py: Python<'_>,
        question: &str,
        generator: Option<&Bound<'_, PyAny>>,
        top_k: Option<usize>,
    ) -> PyResult<Answer> {
        check_question(question, top_k)?;
        let engine = self.engine(py, generator)?;
        let question = question.to_owned();
        let opts = AskOptions { top_k };
        let result =
            wait(py, &self.runtime, engine.ask(&question, &opts))?.map_err(errors::engine)?;
        Ok(Answer {
            owner: Arc::new(Owner::Ask(result)),
        })
    }

    /// Answers `question` as a stream: each sentence once it is validated
    /// (its markers resolve; with its support verdict), a `Retraction` if
    /// the sentences shown are withdrawn (the answer was regenerated,
    /// refused or a sentence dropped), then the final `Answer`, the same
    /// as `ask` returns. Arguments as `ask`; an error is raised by the
    /// iteration that meets it.
    #[pyo3(signature = (question, *, generator=None, top_k=None))]
    fn ask_stream(
        &self,
        py: Python<'_>,
        question: &str,
        generator: Option<&Bound<'_, PyAny>>,
        top_k: Option<usize>,
    ) -> PyResult<AskStream> {
        check_question(question, top_k)?;
        let engine = self.engine(py, generator)?;
        // The stream's task is spawned on this index's runtime.
        let _entered = self.runtime.enter();
        let stream = engine.ask_stream(question, &AskOptions { top_k });
        Ok(AskStream {
            runtime: Arc::clone(&self.runtime),
            slot: Mutex::new(Slot::Ready(stream)),
        })
    }

    fn __repr__(&self) -> String {
        format!("Index({:?})", self.location)
    }
}

/// Runs `future` on `runtime` without the GIL, in slices of 100 ms between
/// which Python's signal handlers run: Ctrl-C interrupts a slow answer
/// (`KeyboardInterrupt`; the request is dropped) instead of waiting for the
/// model.
fn wait<F: Future + Send>(
    py: Python<'_>,
    runtime: &tokio::runtime::Runtime,
    future: F,
) -> PyResult<F::Output>
where
    F::Output: Send,
{
    let mut future = std::pin::pin!(future);
    loop {
        // The timer is made inside the runtime (it needs its clock).
        let slice = py.detach(|| {
            runtime.block_on(async {
                tokio::time::timeout(std::time::Duration::from_millis(100), future.as_mut()).await
            })
        });
        match slice {
            Ok(output) => return Ok(output),
            Err(_elapsed) => py.check_signals()?,
        }
    }
}

/// An ingest's `progress` callback, called with the GIL taken for each
/// step; the first exception it raises is kept (and no more calls made).
struct Reporter {
    callback: Option<Py<PyAny>>,
    failed: Option<PyErr>,
}

impl Reporter {
    fn new(callback: Option<Py<PyAny>>) -> Reporter {
        Reporter {
            callback,
            failed: None,
        }
    }

    fn report(&mut self, step: Progress) {
        let Some(callback) = &self.callback else {
            return;
        };
        if self.failed.is_some() {
            return;
        }
        let event = match step {
            Progress::Started { total_files } => {
                serde_json::json!({"stage": "started", "total_files": total_files})
            }
            Progress::File { path, done, total } => serde_json::json!({
                "stage": "file", "path": path.display().to_string(), "done": done, "total": total,
            }),
            Progress::Embedding { done, total } => {
                serde_json::json!({"stage": "embedding", "done": done, "total": total})
            }
            Progress::IndexingVectors { chunks } => {
                serde_json::json!({"stage": "indexing_vectors", "chunks": chunks})
            }
            Progress::Committing => serde_json::json!({"stage": "committing"}),
        };
        let outcome = Python::attach(|py| -> PyResult<()> {
            callback.call1(py, (to_py(py, &event)?,))?;
            Ok(())
        });
        if let Err(e) = outcome {
            self.failed = Some(e);
        }
    }

    /// The exception the callback raised, if any.
    fn finish(self) -> PyResult<()> {
        match self.failed {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }
}

/// `ask`'s and `ask_stream`'s checks of their arguments.
fn check_question(question: &str, top_k: Option<usize>) -> PyResult<()> {
    if question.trim().is_empty() {
        return Err(errors::error(
            "empty_question",
            "the question is empty".into(),
        ));
    }
    match top_k {
        Some(k) => check_k("top_k", k),
        None => Ok(()),
    }
}

/// `k` and `top_k` are held to the service's bound, with its message.
fn check_k(name: &str, k: usize) -> PyResult<()> {
    if (1..=MAX_TOP_K).contains(&k) {
        Ok(())
    } else {
        Err(errors::error(
            "invalid_parameter",
            format!("{name} must be between 1 and {MAX_TOP_K}, got {k}"),
        ))
    }
}

/// The events of `Index.ask_stream`: `StreamedSentence`s, maybe a
/// `Retraction`, then the final `Answer`.
#[pyclass(frozen, module = "groundcite")]
pub struct AskStream {
    runtime: Arc<tokio::runtime::Runtime>,
    slot: Mutex<Slot>,
}

/// Where an `AskStream`'s events come from.
enum Slot {
    Ready(BoxStream<'static, AskEvent>),
    /// Being read (by `__next__`, without the GIL).
    Busy,
    /// The final answer or an error has been given.
    Done,
}

#[pymethods]
impl AskStream {
    fn __iter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    fn __next__(&self, py: Python<'_>) -> PyResult<Option<Py<PyAny>>> {
        // The stream is taken out while it is read (the lock is never held
        // while waiting), and put back unless it has ended.
        let taken = {
            let mut slot = self.slot.lock().expect("stream lock");
            match std::mem::replace(&mut *slot, Slot::Busy) {
                Slot::Ready(stream) => stream,
                Slot::Busy => {
                    return Err(errors::error(
                        "bad_request",
                        "this stream is being read by another thread".into(),
                    ));
                }
                Slot::Done => {
                    *slot = Slot::Done;
                    return Ok(None);
                }
            }
        };
        let mut stream = taken;
        // Interrupted (Ctrl-C): the answer is abandoned.
        let event = wait(py, &self.runtime, stream.next()).inspect_err(|_| {
            *self.slot.lock().expect("stream lock") = Slot::Done;
        })?;
        *self.slot.lock().expect("stream lock") = match event {
            None | Some(AskEvent::Final(_)) | Some(AskEvent::Error(_)) => Slot::Done,
            _ => Slot::Ready(stream),
        };
        Ok(Some(match event {
            None => return Ok(None),
            Some(AskEvent::Sentence(s)) => Py::new(py, StreamedSentence(s))?.into_any(),
            Some(AskEvent::Retract(r)) => Py::new(py, Retraction(r))?.into_any(),
            Some(AskEvent::Final(result)) => Py::new(
                py,
                Answer {
                    owner: Arc::new(Owner::Ask(*result)),
                },
            )?
            .into_any(),
            Some(AskEvent::Error(e)) => return Err(errors::engine(e)),
        }))
    }
}

/// A sentence of a streamed answer, shown once its markers resolve.
#[pyclass(frozen, module = "groundcite")]
pub struct StreamedSentence(groundcite_engine::StreamedSentence);

#[pymethods]
impl StreamedSentence {
    /// Its position among the sentences streamed (0-based).
    #[getter]
    fn index(&self) -> usize {
        self.0.index
    }
    #[getter]
    fn text(&self) -> &str {
        &self.0.text
    }
    /// Byte offsets into the answer being streamed.
    #[getter]
    fn start(&self) -> usize {
        self.0.start
    }
    #[getter]
    fn end(&self) -> usize {
        self.0.end
    }
    #[getter]
    fn citations(&self) -> Vec<u64> {
        self.0.citations.clone()
    }
    /// `supported`, `contradicted`, `unsupported`, `uncited`, or
    /// `unchecked` with support checking off.
    #[getter]
    fn verdict(&self) -> &str {
        &self.0.verdict
    }
    /// As the service's `sentence` event.
    fn to_dict(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        to_py(py, &self.0)
    }
    fn __repr__(&self) -> String {
        format!(
            "StreamedSentence({:?}, verdict={:?})",
            self.0.text, self.0.verdict
        )
    }
}

/// The sentences streamed so far are withdrawn; the final answer replaces
/// them.
#[pyclass(frozen, module = "groundcite")]
pub struct Retraction(groundcite_engine::Retraction);

#[pymethods]
impl Retraction {
    /// How many sentences are withdrawn (all shown so far).
    #[getter]
    fn count(&self) -> usize {
        self.0.count
    }
    /// `regenerated`, `refused`, `dropped` or `error`.
    #[getter]
    fn reason(&self) -> &str {
        &self.0.reason
    }
    fn to_dict(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        to_py(py, &self.0)
    }
    fn __repr__(&self) -> String {
        format!(
            "Retraction(count={}, reason={:?})",
            self.0.count, self.0.reason
        )
    }
}

/// A passage found by `search`.
#[pyclass(frozen, module = "groundcite")]
pub struct Hit {
    /// Stable id: `path#Lfirst-Llast`.
    #[pyo3(get)]
    pub id: String,
    #[pyo3(get)]
    pub text: String,
    #[pyo3(get)]
    pub section: String,
    #[pyo3(get)]
    pub source_url: String,
    #[pyo3(get)]
    pub title: String,
    #[pyo3(get)]
    pub path: String,
    /// Normalised score in 0..1, comparable across queries (the gate's).
    #[pyo3(get)]
    pub score: f32,
    /// The ranking's own score (BM25 or fused).
    #[pyo3(get)]
    pub raw_score: f32,
    /// Byte offsets of the chunk in its file.
    #[pyo3(get)]
    pub start: usize,
    #[pyo3(get)]
    pub end: usize,
    chunk_metadata: serde_json::Value,
}

impl From<groundcite_index::Hit> for Hit {
    fn from(hit: groundcite_index::Hit) -> Hit {
        let c = hit.chunk;
        Hit {
            id: c.id,
            text: c.text,
            section: c.section,
            source_url: c.source_url,
            title: c.title,
            path: c.path,
            score: hit.score,
            raw_score: hit.raw_score,
            start: c.start,
            end: c.end,
            chunk_metadata: c.metadata,
        }
    }
}

#[pymethods]
impl Hit {
    /// The page's front matter.
    #[getter]
    fn metadata(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        to_py(py, &self.chunk_metadata)
    }
    fn to_dict(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        to_py(
            py,
            &serde_json::json!({
                "id": self.id, "text": self.text, "section": self.section,
                "source_url": self.source_url, "title": self.title, "path": self.path,
                "score": self.score, "raw_score": self.raw_score,
                "start": self.start, "end": self.end, "metadata": self.chunk_metadata,
            }),
        )
    }
    fn __repr__(&self) -> String {
        format!("Hit(id={:?}, score={:.3})", self.id, self.score)
    }
}

/// What one ingest run did.
#[pyclass(frozen, get_all, module = "groundcite")]
pub struct IngestSummary {
    pub files_seen: usize,
    pub indexed: usize,
    pub unchanged: usize,
    pub removed: usize,
    /// Files with an unsupported extension.
    pub skipped: usize,
    pub chunks_written: usize,
    pub chunks_in_index: u64,
    /// `(path, message)` of each file that could not be read.
    pub errors: Vec<(String, String)>,
    pub warnings: Vec<(String, String)>,
    /// Chunk vectors computed (with a model).
    pub embedded: usize,
    /// The previous model's id when the model changed (everything was
    /// re-embedded).
    pub model_changed_from: Option<String>,
    pub seconds: f64,
}

#[pymethods]
impl IngestSummary {
    fn __repr__(&self) -> String {
        format!(
            "IngestSummary(files_seen={}, indexed={}, unchanged={}, removed={}, chunks_in_index={}, errors={})",
            self.files_seen,
            self.indexed,
            self.unchanged,
            self.removed,
            self.chunks_in_index,
            self.errors.len()
        )
    }
}
