//! OpenAI-compatible specifics: request shape, base URLs, stream endings.

mod common;

use common::{FakeServer, Reply, openai_chunk, openai_completion};
use futures::StreamExt;
use groundcite_llm::{
    ChatMessage, ChatRequest, Generation, Generator, LlmError, OpenAiConfig, OpenAiGenerator,
    Secret, StreamEvent, TransportConfig,
};
use serde_json::json;

fn config(base_url: String) -> OpenAiConfig {
    OpenAiConfig {
        base_url,
        model: "llama3.2".into(),
        api_key_env: "GROUNDCITE_TEST_NEVER_SET_OPENAI".into(),
        transport: TransportConfig {
            backoff_ms: 5,
            ..TransportConfig::default()
        },
        ..OpenAiConfig::default()
    }
}

fn request() -> ChatRequest {
    ChatRequest {
        system: "You answer ONLY from the numbered passages below.".into(),
        messages: vec![
            ChatMessage::user("How long?"),
            ChatMessage::assistant("14 days [7]."),
            ChatMessage::user("Passage 7 was never sent. Answer again."),
        ],
        documents: Vec::new(),
        max_tokens: Some(64),
        temperature: Some(0.5),
    }
}

async fn last(generator: &dyn Generator) -> Result<Generation, LlmError> {
    let mut stream = generator.generate_stream(&request());
    let mut result = None;
    while let Some(item) = stream.next().await {
        match item {
            Ok(StreamEvent::Done(generation)) => result = Some(Ok(generation)),
            Ok(_) => {}
            Err(error) => result = Some(Err(error)),
        }
    }
    result.unwrap()
}

#[tokio::test]
async fn request_shape_and_base_url_with_v1() {
    let server = FakeServer::start(vec![Reply::json(
        200,
        openai_completion(Some("30 days [1].")),
    )])
    .await;
    // A local server needs no key: none is configured, none is sent.
    let generator = OpenAiGenerator::new(config(format!("{}/v1/", server.base_url))).unwrap();
    assert_eq!(generator.name(), "openai:llama3.2");
    let generation = generator.generate(&request()).await.unwrap();
    assert_eq!(generation.text, "30 days [1].");
    assert_eq!(generation.model, "fake-model");
    let sent = &server.received()[0];
    assert_eq!(sent.path, "/v1/chat/completions");
    assert_eq!(sent.header("authorization"), None);
    assert_eq!(sent.header("content-type"), Some("application/json"));
    assert_eq!(
        sent.json(),
        json!({
            "model": "llama3.2",
            "messages": [
                {"role": "system", "content": "You answer ONLY from the numbered passages below."},
                {"role": "user", "content": "How long?"},
                {"role": "assistant", "content": "14 days [7]."},
                {"role": "user", "content": "Passage 7 was never sent. Answer again."},
            ],
            "temperature": 0.5,
            "max_tokens": 64,
            "stream": false,
        })
    );
}

#[tokio::test]
async fn configured_key_is_sent_as_bearer() {
    let server = FakeServer::start(vec![Reply::json(200, openai_completion(Some("ok")))]).await;
    let generator =
        OpenAiGenerator::with_api_key(config(server.base_url.clone()), Some(Secret::new("sk-abc")))
            .unwrap();
    generator.generate(&request()).await.unwrap();
    assert_eq!(
        server.received()[0].header("authorization"),
        Some("Bearer sk-abc")
    );
    assert!(!format!("{generator:?}").contains("sk-abc"));
}

#[test]
fn hosted_default_needs_a_key() {
    let error = OpenAiGenerator::new(OpenAiConfig {
        api_key_env: "GROUNDCITE_TEST_NEVER_SET_HOSTED".into(),
        ..OpenAiConfig::default()
    })
    .unwrap_err();
    assert_eq!(
        error,
        LlmError::MissingApiKey {
            var: "GROUNDCITE_TEST_NEVER_SET_HOSTED".into()
        }
    );
}

#[test]
fn bad_settings_are_config_errors() {
    for config in [
        OpenAiConfig {
            base_url: "ftp://example.com".into(),
            ..config(String::new())
        },
        OpenAiConfig {
            base_url: "not a url".into(),
            ..config(String::new())
        },
        OpenAiConfig {
            transport: TransportConfig {
                timeout_secs: 0.0,
                ..TransportConfig::default()
            },
            ..config("http://127.0.0.1:1".into())
        },
        OpenAiConfig {
            model: " ".into(),
            ..config("http://127.0.0.1:1".into())
        },
    ] {
        assert!(matches!(
            OpenAiGenerator::new(config),
            Err(LlmError::Config(_))
        ));
    }
}

#[tokio::test]
async fn stream_ending_after_finish_reason_without_done_is_complete() {
    let server = FakeServer::start(vec![Reply::sse(vec![
        openai_chunk(Some("30 days"), None),
        openai_chunk(Some(" [1]."), Some("stop")),
    ])])
    .await;
    let generator = OpenAiGenerator::new(config(server.base_url.clone())).unwrap();
    let generation = last(&generator).await.unwrap();
    assert_eq!(generation.text, "30 days [1].");
    assert_eq!(generation.finish_reason.as_deref(), Some("stop"));
}

#[tokio::test]
async fn stream_done_without_final_blank_line_is_complete() {
    let server = FakeServer::start(vec![Reply::sse(vec![
        openai_chunk(Some("30 days [1]."), None),
        "data: [DONE]\n".into(),
    ])])
    .await;
    let generator = OpenAiGenerator::new(config(server.base_url.clone())).unwrap();
    assert_eq!(last(&generator).await.unwrap().text, "30 days [1].");
}

#[tokio::test]
async fn stream_cut_inside_a_json_chunk_is_interrupted() {
    let full = openai_chunk(Some(" within"), None);
    let server = FakeServer::start(vec![Reply::sse_cut(vec![
        openai_chunk(Some("Reimbursements settle"), None),
        full[..full.len() / 2].to_string(),
    ])])
    .await;
    let generator = OpenAiGenerator::new(config(server.base_url.clone())).unwrap();
    assert_eq!(
        last(&generator).await.unwrap_err(),
        LlmError::StreamInterrupted {
            partial: "Reimbursements settle".into()
        }
    );
}

#[tokio::test]
async fn in_stream_error_object_is_reported() {
    let server = FakeServer::start(vec![Reply::sse(vec![
        openai_chunk(Some("Reimb"), None),
        format!(
            "data: {}\n\n",
            json!({"error": {"message": "out of memory", "code": 503}})
        ),
    ])])
    .await;
    let generator = OpenAiGenerator::new(config(server.base_url.clone())).unwrap();
    assert_eq!(
        last(&generator).await.unwrap_err(),
        LlmError::Http {
            status: 503,
            message: "out of memory".into()
        }
    );
}

#[tokio::test]
async fn retry_after_http_date_and_ollama_error_bodies() {
    // An HTTP date in the past means "retry now".
    let server = FakeServer::start(vec![
        Reply::json(503, r#"{"error":"model is loading"}"#)
            .with_header("retry-after", "Wed, 21 Oct 2015 07:28:00 GMT"),
        Reply::json(
            404,
            r#"{"error":"model \"llama9\" not found, try pulling it first"}"#,
        ),
    ])
    .await;
    let generator = OpenAiGenerator::new(config(server.base_url.clone())).unwrap();
    let error = generator.generate(&request()).await.unwrap_err();
    assert_eq!(
        error,
        LlmError::Http {
            status: 404,
            message: "model \"llama9\" not found, try pulling it first".into()
        }
    );
    assert!(
        error
            .to_string()
            .contains("check base_url and the model name")
    );
    assert_eq!(server.count(), 2);
}

#[tokio::test]
async fn non_json_error_body_is_quoted() {
    let server = FakeServer::start(vec![Reply::Body {
        status: 502,
        headers: vec![("content-type".into(), "text/html".into())],
        body: "<html>Bad gateway</html>".into(),
    }])
    .await;
    let mut config = config(server.base_url.clone());
    config.transport.max_retries = 0;
    let generator = OpenAiGenerator::new(config).unwrap();
    assert_eq!(
        generator.generate(&request()).await.unwrap_err(),
        LlmError::Http {
            status: 502,
            message: "<html>Bad gateway</html>".into()
        }
    );
    assert_eq!(server.count(), 1);
}
