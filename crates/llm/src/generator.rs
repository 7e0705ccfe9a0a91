//! The generator abstraction.

use std::future::Future;
use std::pin::Pin;

use futures::Stream;

use crate::{ChatRequest, Generation, LlmError, StreamEvent};

/// A boxed, sendable future that owns everything it needs.
pub type BoxFuture<T> = Pin<Box<dyn Future<Output = T> + Send + 'static>>;

/// A boxed, sendable stream of answer events that owns everything it needs.
pub type EventStream = Pin<Box<dyn Stream<Item = Result<StreamEvent, LlmError>> + Send + 'static>>;

/// Something that answers a [`ChatRequest`]: an LLM backend or a script.
///
/// Object safe: use it as `Box<dyn Generator>` or `Arc<dyn Generator>`. The
/// returned future and stream are `'static` (they copy what they need from
/// the request), so they can be spawned or handed to a response body.
/// Nothing happens until they are polled.
pub trait Generator: Send + Sync {
    /// A short name for logs and the audit trail, e.g. `openai:gpt-4o-mini`.
    fn name(&self) -> &str;

    /// Produces a complete answer.
    fn generate(&self, request: &ChatRequest) -> BoxFuture<Result<Generation, LlmError>>;

    /// Produces an answer as a stream: `Text`/`Citation` events, then one
    /// `Done`, or an `Err` after which the stream ends.
    fn generate_stream(&self, request: &ChatRequest) -> EventStream;
}

impl<G: Generator + ?Sized> Generator for Box<G> {
    fn name(&self) -> &str {
        (**self).name()
    }
    fn generate(&self, request: &ChatRequest) -> BoxFuture<Result<Generation, LlmError>> {
        (**self).generate(request)
    }
    fn generate_stream(&self, request: &ChatRequest) -> EventStream {
        (**self).generate_stream(request)
    }
}

impl<G: Generator + ?Sized> Generator for std::sync::Arc<G> {
    fn name(&self) -> &str {
        (**self).name()
    }
    fn generate(&self, request: &ChatRequest) -> BoxFuture<Result<Generation, LlmError>> {
        (**self).generate(request)
    }
    fn generate_stream(&self, request: &ChatRequest) -> EventStream {
        (**self).generate_stream(request)
    }
}
