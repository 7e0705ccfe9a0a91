//! One contract suite, run against every HTTP backend over a fake server on
//! loopback: the documented outcome of every fault, and no panic.

mod common;

use std::sync::Arc;
use std::time::{Duration, Instant};

use common::{FakeServer, Reply, STALL};
use futures::StreamExt;
use groundcite_llm::{
    AnthropicConfig, AnthropicGenerator, ChatMessage, ChatRequest, Document, Generation, Generator,
    LlmError, OpenAiConfig, OpenAiGenerator, Secret, StreamEvent, TransportConfig,
};
use serde_json::json;

const KEY: &str = "sk-test-secret-0123456789";
const UNSET_VAR: &str = "GROUNDCITE_TEST_NEVER_SET_3F9C";

#[derive(Clone, Copy, Debug)]
enum Kind {
    OpenAi,
    Anthropic,
}

#[derive(Clone, Copy)]
struct Settings {
    timeout_secs: f64,
    max_retries: u32,
    backoff_ms: u64,
    max_retry_after_secs: f64,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            timeout_secs: 5.0,
            max_retries: 2,
            backoff_ms: 10,
            max_retry_after_secs: 5.0,
        }
    }
}

impl Settings {
    fn transport(self) -> TransportConfig {
        TransportConfig {
            timeout_secs: self.timeout_secs,
            connect_timeout_secs: 2.0,
            max_retries: self.max_retries,
            backoff_ms: self.backoff_ms,
            max_retry_after_secs: self.max_retry_after_secs,
            ..TransportConfig::default()
        }
    }
}

impl Kind {
    fn generator_with(self, server: &FakeServer, s: Settings) -> Box<dyn Generator> {
        match self {
            Kind::OpenAi => Box::new(
                OpenAiGenerator::with_api_key(
                    OpenAiConfig {
                        base_url: server.base_url.clone(),
                        model: "fake-model".into(),
                        transport: s.transport(),
                        ..OpenAiConfig::default()
                    },
                    Some(Secret::new(KEY)),
                )
                .unwrap(),
            ),
            Kind::Anthropic => Box::new(
                AnthropicGenerator::with_api_key(
                    AnthropicConfig {
                        base_url: server.base_url.clone(),
                        model: "fake-claude".into(),
                        transport: s.transport(),
                        ..AnthropicConfig::default()
                    },
                    Secret::new(KEY),
                )
                .unwrap(),
            ),
        }
    }

    fn generator(self, server: &FakeServer) -> Box<dyn Generator> {
        self.generator_with(server, Settings::default())
    }

    fn ok(self, text: &str) -> Reply {
        match self {
            Kind::OpenAi => Reply::json(200, common::openai_completion(Some(text))),
            Kind::Anthropic => Reply::json(
                200,
                common::anthropic_message(json!([{"type": "text", "text": text}])),
            ),
        }
    }

    fn empty(self) -> Reply {
        match self {
            Kind::OpenAi => Reply::json(200, common::openai_completion(Some("  "))),
            Kind::Anthropic => Reply::json(200, common::anthropic_message(json!([]))),
        }
    }

    fn error(self, status: u16, message: &str) -> Reply {
        match self {
            Kind::OpenAi => Reply::json(
                status,
                json!({"error": {"message": message, "type": "server_error", "code": null}})
                    .to_string(),
            ),
            Kind::Anthropic => Reply::json(
                status,
                json!({"type": "error", "error": {"type": "api_error", "message": message}})
                    .to_string(),
            ),
        }
    }

    /// The stream of an answer in pieces; `complete`: with the end marker.
    fn stream(self, pieces: &[&str], complete: bool) -> Vec<String> {
        match self {
            Kind::OpenAi => {
                let mut chunks = vec![common::openai_chunk(Some(""), None)];
                chunks.extend(pieces.iter().map(|p| common::openai_chunk(Some(p), None)));
                if complete {
                    chunks.push(common::openai_chunk(None, Some("stop")));
                    chunks.push("data: [DONE]\n\n".to_string());
                }
                chunks
            }
            Kind::Anthropic => common::anthropic_text_stream(pieces, complete),
        }
    }

    fn missing_key(self, server: &FakeServer) -> Result<Box<dyn Generator>, LlmError> {
        match self {
            Kind::OpenAi => OpenAiGenerator::new(OpenAiConfig {
                base_url: server.base_url.clone(),
                api_key_env: UNSET_VAR.into(),
                // Loopback needs no key by default; act as a hosted API.
                api_key_required: Some(true),
                ..OpenAiConfig::default()
            })
            .map(|g| Box::new(g) as Box<dyn Generator>),
            Kind::Anthropic => AnthropicGenerator::new(AnthropicConfig {
                base_url: server.base_url.clone(),
                api_key_env: UNSET_VAR.into(),
                ..AnthropicConfig::default()
            })
            .map(|g| Box::new(g) as Box<dyn Generator>),
        }
    }
}

fn request() -> ChatRequest {
    ChatRequest {
        system: "You answer ONLY from the numbered passages below.\n[1] a\n[2] b\n[3] c".into(),
        messages: vec![ChatMessage::user("How long does reimbursement take?")],
        documents: vec![
            Document {
                title: "Policy".into(),
                text: "Reimbursements settle within 30 days of approval.".into(),
            },
            Document {
                title: "FAQ".into(),
                text: "Per diem claims are paid on the same schedule.".into(),
            },
            Document {
                title: "Travel".into(),
                text: "Book travel through the portal.".into(),
            },
        ],
        max_tokens: None,
        temperature: None,
        structured: None,
    }
}

/// Collects a stream: its text events, and its final item.
async fn collect(
    generator: &dyn Generator,
) -> (String, Vec<StreamEvent>, Result<Generation, LlmError>) {
    let mut stream = generator.generate_stream(&request());
    let mut text = String::new();
    let mut events = Vec::new();
    let mut last = None;
    while let Some(item) = stream.next().await {
        assert!(last.is_none(), "nothing may follow Done or an error");
        match item {
            Ok(StreamEvent::Done(generation)) => last = Some(Ok(generation)),
            Ok(event) => {
                if let StreamEvent::Text(t) = &event {
                    text.push_str(t);
                }
                events.push(event);
            }
            Err(error) => last = Some(Err(error)),
        }
    }
    (
        text,
        events,
        last.expect("a stream ends with Done or an error"),
    )
}

async fn answers_without_retries(kind: Kind) {
    let server =
        FakeServer::start(vec![kind.ok("Reimbursements settle within 30 days [1].")]).await;
    let generation = kind.generator(&server).generate(&request()).await.unwrap();
    assert_eq!(generation.text, "Reimbursements settle within 30 days [1].");
    assert_eq!(generation.retries, 0);
    assert!(generation.raw.contains("Reimbursements"));
    assert!(!generation.model.is_empty());
    assert!(generation.finish_reason.is_some());
    assert_eq!(server.count(), 1);
}

async fn unknown_passage_is_returned_verbatim(kind: Kind) {
    let server = FakeServer::start(vec![kind.ok("Refunds take 14 days [7].")]).await;
    let generation = kind.generator(&server).generate(&request()).await.unwrap();
    assert_eq!(generation.text, "Refunds take 14 days [7].");
    assert!(generation.native_citations.is_empty());
}

async fn timeout_is_reported_and_not_retried(kind: Kind) {
    let server = FakeServer::start(vec![Reply::After(
        Duration::from_secs(3),
        Box::new(kind.ok("late")),
    )])
    .await;
    let settings = Settings {
        timeout_secs: 0.3,
        ..Settings::default()
    };
    let started = Instant::now();
    let error = kind
        .generator_with(&server, settings)
        .generate(&request())
        .await
        .unwrap_err();
    assert_eq!(
        error,
        LlmError::Timeout {
            after: Duration::from_millis(300)
        }
    );
    assert!(started.elapsed() < Duration::from_secs(2));
    assert_eq!(server.count(), 1);
}

async fn connection_reset_is_retried(kind: Kind) {
    let server = FakeServer::start(vec![Reply::Drop, kind.ok("Fine [1].")]).await;
    let generation = kind.generator(&server).generate(&request()).await.unwrap();
    assert_eq!(generation.text, "Fine [1].");
    assert_eq!(generation.retries, 1);
    assert_eq!(server.count(), 2);
}

async fn persistent_reset_fails_with_connect(kind: Kind) {
    let server = FakeServer::start(vec![Reply::Drop]).await;
    let error = kind
        .generator(&server)
        .generate(&request())
        .await
        .unwrap_err();
    assert!(
        matches!(&error, LlmError::Connect { url, .. } if url.starts_with(&server.base_url)),
        "{error:?}"
    );
    assert_eq!(server.count(), 3, "first attempt plus max_retries = 2");
}

async fn unreachable_server_fails_with_connect(kind: Kind) {
    // Bind and close a port so nothing listens there.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let server = FakeServer::start(vec![kind.ok("unused")]).await;
    let mut dead = server;
    dead.base_url = format!("http://127.0.0.1:{port}");
    let error = kind
        .generator(&dead)
        .generate(&request())
        .await
        .unwrap_err();
    assert!(matches!(error, LlmError::Connect { .. }), "{error:?}");
    assert!(error.to_string().contains("check base_url"));
}

async fn server_error_then_success(kind: Kind) {
    let server = FakeServer::start(vec![kind.error(500, "boom"), kind.ok("Recovered [2].")]).await;
    let generation = kind.generator(&server).generate(&request()).await.unwrap();
    assert_eq!(generation.text, "Recovered [2].");
    assert_eq!(generation.retries, 1);
    assert_eq!(server.count(), 2);
}

async fn persistent_server_error_fails_after_max_retries(kind: Kind) {
    let server = FakeServer::start(vec![kind.error(500, "the GPU caught fire")]).await;
    let started = Instant::now();
    let error = kind
        .generator(&server)
        .generate(&request())
        .await
        .unwrap_err();
    assert_eq!(
        error,
        LlmError::Http {
            status: 500,
            message: "the GPU caught fire".into()
        }
    );
    assert_eq!(server.count(), 3);
    // Deterministic backoff: 10 ms then 20 ms.
    let received = server.received();
    assert!(received[1].at - received[0].at >= Duration::from_millis(10));
    assert!(received[2].at - received[1].at >= Duration::from_millis(20));
    assert!(started.elapsed() < Duration::from_secs(2));
}

async fn client_error_is_not_retried(kind: Kind) {
    let server = FakeServer::start(vec![kind.error(401, "invalid x-api-key")]).await;
    let error = kind
        .generator(&server)
        .generate(&request())
        .await
        .unwrap_err();
    assert_eq!(
        error,
        LlmError::Http {
            status: 401,
            message: "invalid x-api-key".into()
        }
    );
    assert!(error.to_string().contains("check the API key"));
    assert!(!error.to_string().contains(KEY));
    assert_eq!(server.count(), 1);
}

async fn rate_limit_honours_retry_after(kind: Kind) {
    let server = FakeServer::start(vec![
        kind.error(429, "slow down").with_header("retry-after", "1"),
        kind.ok("Thanks for waiting [1]."),
    ])
    .await;
    let generation = kind.generator(&server).generate(&request()).await.unwrap();
    assert_eq!(generation.retries, 1);
    let received = server.received();
    let waited = received[1].at - received[0].at;
    assert!(waited >= Duration::from_secs(1), "waited only {waited:?}");
    assert!(waited < Duration::from_secs(3), "waited {waited:?}");
}

async fn rate_limit_longer_than_cap_fails_fast(kind: Kind) {
    let server = FakeServer::start(vec![
        kind.error(429, "slow down")
            .with_header("retry-after", "120"),
    ])
    .await;
    let started = Instant::now();
    let error = kind
        .generator(&server)
        .generate(&request())
        .await
        .unwrap_err();
    assert_eq!(
        error,
        LlmError::RateLimited {
            retry_after: Some(Duration::from_secs(120))
        }
    );
    assert!(error.to_string().contains("120s"));
    assert!(started.elapsed() < Duration::from_secs(2));
    assert_eq!(server.count(), 1);
}

async fn persistent_rate_limit_fails_after_max_retries(kind: Kind) {
    let server = FakeServer::start(vec![kind.error(429, "slow down")]).await;
    let error = kind
        .generator(&server)
        .generate(&request())
        .await
        .unwrap_err();
    assert_eq!(error, LlmError::RateLimited { retry_after: None });
    assert_eq!(server.count(), 3);
}

async fn invalid_json_is_invalid_response(kind: Kind) {
    let server =
        FakeServer::start(vec![Reply::json(200, "{\"choices\": [ this is not json")]).await;
    let error = kind
        .generator(&server)
        .generate(&request())
        .await
        .unwrap_err();
    assert!(matches!(error, LlmError::InvalidResponse(_)), "{error:?}");
    assert_eq!(server.count(), 1);
}

async fn empty_content_is_empty_content(kind: Kind) {
    let server = FakeServer::start(vec![kind.empty()]).await;
    let error = kind
        .generator(&server)
        .generate(&request())
        .await
        .unwrap_err();
    assert_eq!(error, LlmError::EmptyContent);
}

async fn missing_api_key_fails_before_any_request(kind: Kind) {
    let server = FakeServer::start(vec![kind.ok("unused")]).await;
    let Err(error) = kind.missing_key(&server) else {
        panic!("a missing key must fail");
    };
    assert_eq!(
        error,
        LlmError::MissingApiKey {
            var: UNSET_VAR.into()
        }
    );
    assert!(error.to_string().contains(UNSET_VAR));
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert_eq!(server.count(), 0);
}

async fn secrets_never_show(kind: Kind) {
    let server = FakeServer::start(vec![kind.ok("ok")]).await;
    let generator = kind.generator(&server);
    generator.generate(&request()).await.unwrap();
    let sent = &server.received()[0];
    let auth = sent
        .header("authorization")
        .or(sent.header("x-api-key"))
        .unwrap();
    assert!(auth.ends_with(KEY), "the key is sent");
    let debug = match kind {
        Kind::OpenAi => format!("{:?}", OpenAiConfig::default()),
        Kind::Anthropic => format!("{:?}", AnthropicConfig::default()),
    };
    assert!(!debug.contains(KEY));
    assert_eq!(
        format!("{:?} {}", Secret::new(KEY), Secret::new(KEY)),
        "Secret(***) ***"
    );
}

async fn stream_answers(kind: Kind) {
    let server = FakeServer::start(vec![Reply::sse(
        kind.stream(&["Reimbursements settle ", "within 30 días ", "[1]."], true),
    )])
    .await;
    let (text, _, done) = collect(kind.generator(&server).as_ref()).await;
    let generation = done.unwrap();
    assert_eq!(generation.text, "Reimbursements settle within 30 días [1].");
    assert_eq!(text, generation.text);
    assert_eq!(generation.retries, 0);
    assert!(generation.finish_reason.is_some());
    assert!(generation.raw.contains("días"));
    assert_eq!(server.received()[0].json()["stream"], json!(true));
}

async fn stream_cut_mid_sentence_is_interrupted(kind: Kind) {
    let server = FakeServer::start(vec![Reply::sse_cut(
        kind.stream(&["Reimbursements settle ", "within"], false),
    )])
    .await;
    let (text, _, done) = collect(kind.generator(&server).as_ref()).await;
    assert_eq!(
        done.unwrap_err(),
        LlmError::StreamInterrupted {
            partial: "Reimbursements settle within".into()
        }
    );
    // Anthropic holds back a block's trailing whitespace until the block ends.
    assert!(text == "Reimbursements settle within");
    assert_eq!(server.count(), 1, "no retry after the first streamed byte");
}

async fn stream_clean_end_without_end_marker_is_interrupted(kind: Kind) {
    let server = FakeServer::start(vec![Reply::sse(
        kind.stream(&["Reimbursements settle ", "within"], false),
    )])
    .await;
    let (_, _, done) = collect(kind.generator(&server).as_ref()).await;
    assert_eq!(
        done.unwrap_err(),
        LlmError::StreamInterrupted {
            partial: "Reimbursements settle within".into()
        }
    );
}

async fn stream_stall_is_interrupted(kind: Kind) {
    let mut chunks = kind.stream(&["Reimbursements ", "settle"], false);
    chunks.push(STALL.to_string());
    let server = FakeServer::start(vec![Reply::sse(chunks)]).await;
    let settings = Settings {
        timeout_secs: 0.3,
        ..Settings::default()
    };
    let (_, _, done) = collect(kind.generator_with(&server, settings).as_ref()).await;
    assert_eq!(
        done.unwrap_err(),
        LlmError::StreamInterrupted {
            partial: "Reimbursements settle".into()
        }
    );
}

async fn stream_retries_before_first_byte(kind: Kind) {
    let server = FakeServer::start(vec![
        kind.error(503, "warming up"),
        Reply::Drop,
        Reply::sse(kind.stream(&["Ready [1]."], true)),
    ])
    .await;
    let (_, _, done) = collect(kind.generator(&server).as_ref()).await;
    let generation = done.unwrap();
    assert_eq!(generation.text, "Ready [1].");
    assert_eq!(generation.retries, 2);
}

async fn stream_timeout_before_first_byte(kind: Kind) {
    let server = FakeServer::start(vec![Reply::After(
        Duration::from_secs(3),
        Box::new(Reply::sse(kind.stream(&["late"], true))),
    )])
    .await;
    let settings = Settings {
        timeout_secs: 0.3,
        ..Settings::default()
    };
    let (_, _, done) = collect(kind.generator_with(&server, settings).as_ref()).await;
    assert_eq!(
        done.unwrap_err(),
        LlmError::Timeout {
            after: Duration::from_millis(300)
        }
    );
    assert_eq!(server.count(), 1);
}

async fn stream_invalid_json_is_invalid_response(kind: Kind) {
    let mut chunks = kind.stream(&["Partial "], false);
    chunks.push("data: {\"type\": oops\n\n".to_string());
    let server = FakeServer::start(vec![Reply::sse(chunks)]).await;
    let (_, _, done) = collect(kind.generator(&server).as_ref()).await;
    assert!(matches!(done.unwrap_err(), LlmError::InvalidResponse(_)));
}

async fn stream_answered_with_json_is_invalid_response(kind: Kind) {
    // A server that ignores `stream: true`.
    let server = FakeServer::start(vec![kind.ok("Not streamed [1].")]).await;
    let (_, _, done) = collect(kind.generator(&server).as_ref()).await;
    let error = done.unwrap_err();
    assert!(
        matches!(&error, LlmError::InvalidResponse(m) if m.contains("event stream")),
        "{error:?}"
    );
}

async fn stream_empty_is_empty_content(kind: Kind) {
    let server = FakeServer::start(vec![Reply::sse(kind.stream(&[], true))]).await;
    let (_, _, done) = collect(kind.generator(&server).as_ref()).await;
    assert_eq!(done.unwrap_err(), LlmError::EmptyContent);
}

async fn stream_http_error_is_reported(kind: Kind) {
    let server = FakeServer::start(vec![kind.error(404, "model not found")]).await;
    let (_, events, done) = collect(kind.generator(&server).as_ref()).await;
    assert!(events.is_empty());
    assert_eq!(
        done.unwrap_err(),
        LlmError::Http {
            status: 404,
            message: "model not found".into()
        }
    );
}

async fn futures_are_static_and_spawnable(kind: Kind) {
    let server = FakeServer::start(vec![kind.ok("Spawned [1].")]).await;
    let generator: Arc<dyn Generator> = Arc::from(kind.generator(&server));
    let future = generator.generate(&request());
    let stream = generator.generate_stream(&request());
    drop(stream); // never polled: no request
    let generation = tokio::spawn(future).await.unwrap().unwrap();
    assert_eq!(generation.text, "Spawned [1].");
    assert_eq!(server.count(), 1);
}

macro_rules! suite {
    ($($test:ident),* $(,)?) => {
        mod openai {
            $(
                #[tokio::test]
                async fn $test() {
                    super::$test(super::Kind::OpenAi).await
                }
            )*
        }
        mod anthropic {
            $(
                #[tokio::test]
                async fn $test() {
                    super::$test(super::Kind::Anthropic).await
                }
            )*
        }
    };
}

suite!(
    answers_without_retries,
    unknown_passage_is_returned_verbatim,
    timeout_is_reported_and_not_retried,
    connection_reset_is_retried,
    persistent_reset_fails_with_connect,
    unreachable_server_fails_with_connect,
    server_error_then_success,
    persistent_server_error_fails_after_max_retries,
    client_error_is_not_retried,
    rate_limit_honours_retry_after,
    rate_limit_longer_than_cap_fails_fast,
    persistent_rate_limit_fails_after_max_retries,
    invalid_json_is_invalid_response,
    empty_content_is_empty_content,
    missing_api_key_fails_before_any_request,
    secrets_never_show,
    stream_answers,
    stream_cut_mid_sentence_is_interrupted,
    stream_clean_end_without_end_marker_is_interrupted,
    stream_stall_is_interrupted,
    stream_retries_before_first_byte,
    stream_timeout_before_first_byte,
    stream_invalid_json_is_invalid_response,
    stream_empty_is_empty_content,
    stream_answered_with_json_is_invalid_response,
    stream_http_error_is_reported,
    futures_are_static_and_spawnable,
);
