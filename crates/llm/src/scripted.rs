//! A generator that replays prepared answers: for tests, benchmarks and
//! demos without a model.

use std::sync::Mutex;
use std::time::Duration;

use serde::Deserialize;

use crate::{BoxFuture, ChatRequest, EventStream, Generation, Generator, LlmError, StreamEvent};

/// What a [`ScriptedGenerator`] does once every output has been used.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Exhausted {
    /// Keep answering with the last output (the default).
    #[default]
    RepeatLast,
    /// Fail with [`LlmError::Config`] saying the script is exhausted.
    Error,
}

/// Replays its outputs in order, one per call (`generate` and
/// `generate_stream` share the sequence); see [`Exhausted`] for what
/// happens after the last one. The request is ignored, except that every
/// request is recorded for inspection ([`ScriptedGenerator::requests`]).
///
/// Streaming sends the output in chunks of `chunk_chars` characters with
/// `delay` between them (see [`ScriptedGenerator::with_pacing`]); without
/// pacing, as one `Text` event. An output that is an error is returned as
/// that error (streaming: as the only item).
///
/// `Generation::model` is `"scripted"`, `raw` is the output text, `retries`
/// is 0, `finish_reason` is `"stop"`.
#[derive(Debug)]
pub struct ScriptedGenerator {
    outputs: Vec<Result<String, LlmError>>,
    exhausted: Exhausted,
    pacing: Option<(usize, Duration)>,
    state: Mutex<State>,
}

#[derive(Debug, Default)]
struct State {
    next: usize,
    requests: Vec<ChatRequest>,
}

#[derive(Deserialize)]
#[serde(untagged)]
enum ScriptEntry {
    Text(String),
    Object { text: String },
}

impl ScriptedGenerator {
    /// Replays `outputs`. With no outputs at all, every call fails with
    /// `Config`.
    pub fn new(outputs: Vec<String>) -> Self {
        Self::from_results(outputs.into_iter().map(Ok).collect())
    }

    /// Replays answers and errors (e.g. a `Timeout`, then an answer), to
    /// exercise the caller's error handling.
    pub fn from_results(outputs: Vec<Result<String, LlmError>>) -> Self {
        ScriptedGenerator {
            outputs,
            exhausted: Exhausted::RepeatLast,
            pacing: None,
            state: Mutex::new(State::default()),
        }
    }

    /// Reads outputs from the text of a script file: either a JSON array
    /// (`["answer one [1].", {"text": "answer two [2]."}]`) or JSON Lines,
    /// one answer per non-empty line, each a JSON string or an object with
    /// a `text` field. Fails with `Config` naming the bad line, or when
    /// there is no output.
    pub fn from_script(text: &str) -> Result<Self, LlmError> {
        let entries: Vec<ScriptEntry> = if text.trim_start().starts_with('[') {
            serde_json::from_str(text)
                .map_err(|e| LlmError::Config(format!("the scripted answers are not a JSON array of strings or {{\"text\": ...}} objects: {e}")))?
        } else {
            text.lines()
                .enumerate()
                .filter(|(_, line)| !line.trim().is_empty())
                .map(|(number, line)| {
                    serde_json::from_str(line).map_err(|e| {
                        LlmError::Config(format!(
                            "line {} of the scripted answers is not a JSON string or {{\"text\": ...}} object: {e}",
                            number + 1
                        ))
                    })
                })
                .collect::<Result<_, _>>()?
        };
        if entries.is_empty() {
            return Err(LlmError::Config(
                "the scripted answers are empty".to_string(),
            ));
        }
        Ok(Self::new(
            entries
                .into_iter()
                .map(|entry| match entry {
                    ScriptEntry::Text(text) | ScriptEntry::Object { text } => text,
                })
                .collect(),
        ))
    }

    /// Sets what happens after the last output (default: repeat it).
    pub fn exhausted(mut self, exhausted: Exhausted) -> Self {
        self.exhausted = exhausted;
        self
    }

    /// Streams in chunks of `chunk_chars` characters (at least 1), waiting
    /// `delay` before each chunk after the first.
    pub fn with_pacing(mut self, chunk_chars: usize, delay: Duration) -> Self {
        self.pacing = Some((chunk_chars.max(1), delay));
        self
    }

    /// How many calls have been made.
    pub fn calls(&self) -> usize {
        self.lock().requests.len()
    }

    /// Copies of the requests received so far, oldest first.
    pub fn requests(&self) -> Vec<ChatRequest> {
        self.lock().requests.clone()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    fn next(&self, request: &ChatRequest) -> Result<Generation, LlmError> {
        let mut state = self.lock();
        state.requests.push(request.clone());
        let index = state.next;
        state.next += 1;
        drop(state);
        let output = match (self.outputs.get(index), self.exhausted) {
            (Some(output), _) => output,
            (None, Exhausted::RepeatLast) if !self.outputs.is_empty() => {
                &self.outputs[self.outputs.len() - 1]
            }
            (None, _) => {
                return Err(LlmError::Config(format!(
                    "the scripted generator has no answer left (it had {}); add answers or let it repeat the last one",
                    self.outputs.len()
                )));
            }
        };
        let text = output.clone()?;
        Ok(Generation {
            raw: text.clone(),
            text,
            native_citations: Vec::new(),
            model: "scripted".to_string(),
            finish_reason: Some("stop".to_string()),
            retries: 0,
            structured: false,
        })
    }
}

impl Generator for ScriptedGenerator {
    fn name(&self) -> &str {
        "scripted"
    }

    fn generate(&self, request: &ChatRequest) -> BoxFuture<Result<Generation, LlmError>> {
        let result = self.next(request);
        Box::pin(async move { result })
    }

    fn generate_stream(&self, request: &ChatRequest) -> EventStream {
        let generation = match self.next(request) {
            Ok(generation) => generation,
            Err(error) => return Box::pin(futures::stream::once(async move { Err(error) })),
        };
        let (chunk_chars, delay) = self.pacing.unwrap_or((usize::MAX, Duration::ZERO));
        let mut chunks = Vec::new();
        let mut rest = generation.text.as_str();
        while !rest.is_empty() {
            let end = rest
                .char_indices()
                .nth(chunk_chars)
                .map_or(rest.len(), |(at, _)| at);
            chunks.push(rest[..end].to_string());
            rest = &rest[end..];
        }
        let events: Vec<(bool, StreamEvent)> = chunks
            .into_iter()
            .enumerate()
            .map(|(i, chunk)| (i > 0, StreamEvent::Text(chunk)))
            .chain(std::iter::once((false, StreamEvent::Done(generation))))
            .collect();
        Box::pin(futures::stream::unfold(
            events.into_iter(),
            move |mut events| async move {
                let (wait, event) = events.next()?;
                if wait && !delay.is_zero() {
                    tokio::time::sleep(delay).await;
                }
                Some((Ok(event), events))
            },
        ))
    }
}
