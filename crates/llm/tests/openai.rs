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
        structured: None,
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

/// A request asking for a structured answer.
fn structured_request() -> ChatRequest {
    ChatRequest {
        system: "You answer ONLY from the numbered passages below.".into(),
        messages: vec![ChatMessage::user("How long?")],
        structured: Some(groundcite_llm::StructuredRequest {
            schema: json!({"type": "object", "properties": {"sentences": {"type": "array"}}}),
            instruction: "Reply with one JSON object only.".into(),
        }),
        ..ChatRequest::default()
    }
}

/// llama-cpp-python 0.3 validates `response_format.type` against `text`
/// and `json_object` and answers anything else with a 422.
fn rejects_json_schema() -> Reply {
    Reply::json(
        422,
        r#"{"detail":[{"type":"literal_error","loc":["body","response_format","type"],"msg":"Input should be 'text' or 'json_object'","input":"json_schema"}]}"#,
    )
}

const JSON_ANSWER: &str =
    r#"{"sentences": [{"text": "30 days.", "citations": [1]}], "refusal": null}"#;

#[tokio::test]
async fn structured_requests_send_the_schema_and_the_instruction() {
    let server =
        FakeServer::start(vec![Reply::json(200, openai_completion(Some(JSON_ANSWER)))]).await;
    let generator = OpenAiGenerator::new(config(server.base_url.clone())).unwrap();
    let answer = generator.generate(&structured_request()).await.unwrap();
    assert!(answer.structured);
    assert_eq!(answer.text, JSON_ANSWER);
    let body = server.received()[0].json();
    assert_eq!(body["response_format"]["type"], "json_schema");
    assert_eq!(body["response_format"]["json_schema"]["strict"], true);
    assert_eq!(
        body["response_format"]["json_schema"]["schema"]["properties"]["sentences"]["type"],
        "array"
    );
    let system = body["messages"][0]["content"].as_str().unwrap();
    assert!(
        system.ends_with("\nReply with one JSON object only."),
        "{system}"
    );
    // Without a system message, the instruction follows the last user turn.
    let mut request = structured_request();
    request.system.clear();
    generator.generate(&request).await.unwrap();
    let body = server.received()[1].json();
    assert_eq!(body["messages"].as_array().unwrap().len(), 1);
    assert_eq!(
        body["messages"][0]["content"],
        "How long?\n\nReply with one JSON object only."
    );
    // A request that does not ask gets neither.
    generator.generate(&request_without_schema()).await.unwrap();
    let body = server.received()[2].json();
    assert!(body.get("response_format").is_none());
}

fn request_without_schema() -> ChatRequest {
    ChatRequest {
        structured: None,
        ..structured_request()
    }
}

/// The schema fallback: `json_schema` rejected (422, as llama-cpp-python
/// does), then `json_object` rejected (400 naming the response format):
/// the request is answered in free text, and later requests go straight
/// to free text.
#[tokio::test]
async fn a_server_that_rejects_the_schema_is_answered_in_free_text_and_remembered() {
    let server = FakeServer::start(vec![
        rejects_json_schema(),
        Reply::json(
            400,
            r#"{"error": {"message": "response_format is not supported by this server", "type": "invalid_request_error"}}"#,
        ),
        Reply::json(200, openai_completion(Some("30 days [1]."))),
    ])
    .await;
    let generator = OpenAiGenerator::new(config(server.base_url.clone())).unwrap();
    let answer = generator.generate(&structured_request()).await.unwrap();
    assert!(!answer.structured);
    assert_eq!(answer.text, "30 days [1].");
    let received = server.received();
    assert_eq!(received.len(), 3);
    assert_eq!(received[0].json()["response_format"]["type"], "json_schema");
    assert_eq!(received[1].json()["response_format"]["type"], "json_object");
    assert_eq!(
        received[1].json()["response_format"]["schema"]["type"],
        "object"
    );
    let free = received[2].json();
    assert!(free.get("response_format").is_none());
    assert!(
        !free["messages"][0]["content"]
            .as_str()
            .unwrap()
            .contains("JSON"),
        "the instruction goes with the schema"
    );
    assert_eq!(generator.structured_form(), None);
    // Remembered: the next request is free text at once, streaming too.
    generator.generate(&structured_request()).await.unwrap();
    assert_eq!(server.count(), 4);
    assert!(server.received()[3].json().get("response_format").is_none());
}

/// llama-cpp-python's form is used from then on when only `json_schema`
/// is rejected; streaming falls back the same way.
#[tokio::test]
async fn a_rejected_json_schema_falls_back_to_json_object_while_streaming() {
    let chunks = vec![
        openai_chunk(Some(r#"{"sentences": [{"text": "30 days.", "#), None),
        openai_chunk(Some(r#""citations": [1]}], "refusal": null}"#), None),
        openai_chunk(None, Some("stop")),
        "data: [DONE]\n\n".to_string(),
    ];
    // llama-cpp-python 0.3.36's own answer: a 500 (retried like any 5xx).
    let rejected = Reply::json(
        500,
        r#"{"error":{"message":"1 validation error:\n  {'type': 'literal_error', 'loc': ('body', 'response_format', 'type'), 'msg': \"Input should be 'text' or 'json_object'\", 'input': 'json_schema'}\n\n  File \"/venv/lib/python3.11/site-packages/llama_cpp/server/app.py\", line 376, in create_chat_completion\n    POST /v1/chat/completions","type":"internal_server_error","param":null,"code":null}}"#,
    );
    let server = FakeServer::start(vec![
        rejected.clone(),
        rejected.clone(),
        rejected,
        Reply::sse(chunks),
    ])
    .await;
    let generator = OpenAiGenerator::new(config(server.base_url.clone())).unwrap();
    let mut stream = generator.generate_stream(&structured_request());
    let mut text = String::new();
    let mut done = None;
    while let Some(item) = stream.next().await {
        match item.unwrap() {
            StreamEvent::Text(t) => text.push_str(&t),
            StreamEvent::Done(g) => done = Some(g),
            StreamEvent::Citation(_) => {}
        }
    }
    let done = done.unwrap();
    assert!(done.structured);
    assert_eq!(done.text, JSON_ANSWER);
    assert_eq!(text, JSON_ANSWER);
    let received = server.received();
    assert_eq!(
        received.len(),
        4,
        "three tries of json_schema, then json_object"
    );
    assert_eq!(received[2].json()["response_format"]["type"], "json_schema");
    assert_eq!(received[3].json()["response_format"]["type"], "json_object");
    assert_eq!(received[3].json()["stream"], true);
    assert_eq!(
        generator.structured_form(),
        Some(groundcite_llm::StructuredFormat::JsonObject)
    );
}

/// An error that is not about the response format is an error, not a
/// fallback: a 400 for a too-long prompt, a 401.
#[tokio::test]
async fn other_errors_are_not_taken_for_a_rejected_schema() {
    let server = FakeServer::start(vec![Reply::json(
        400,
        r#"{"error": {"message": "This model's maximum context length is 2048 tokens"}}"#,
    )])
    .await;
    let generator = OpenAiGenerator::new(config(server.base_url.clone())).unwrap();
    let error = generator.generate(&structured_request()).await.unwrap_err();
    assert!(
        matches!(error, LlmError::Http { status: 400, .. }),
        "{error}"
    );
    assert_eq!(server.count(), 1);
    assert_eq!(
        generator.structured_form(),
        Some(groundcite_llm::StructuredFormat::JsonSchema)
    );
    // `off` never asks.
    let server = FakeServer::start(vec![Reply::json(
        200,
        openai_completion(Some("30 days [1].")),
    )])
    .await;
    let generator = OpenAiGenerator::new(OpenAiConfig {
        structured: groundcite_llm::StructuredFormat::Off,
        ..config(server.base_url.clone())
    })
    .unwrap();
    let answer = generator.generate(&structured_request()).await.unwrap();
    assert!(!answer.structured);
    assert!(server.received()[0].json().get("response_format").is_none());
}
