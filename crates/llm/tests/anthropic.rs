//! Anthropic specifics: request shape in both modes, native citations
//! mapped onto markers (JSON and SSE), in-stream errors.

mod common;

use common::{FakeServer, Reply, anthropic_event, anthropic_message};
use futures::StreamExt;
use groundcite_llm::{
    AnthropicConfig, AnthropicGenerator, AnthropicMode, ChatMessage, ChatRequest, Document,
    Generation, Generator, LlmError, NativeCitation, Secret, StreamEvent,
};
use serde_json::{Value, json};

const POLICY: &str = "Reimbursements settle within 30 days of approval. Claims need receipts.";
const PER_DIEM: &str =
    "Voyages à Zürich et 東京 : les indemnités journalières sont payées au même rythme. Fin.";
const CITED_1: &str = "Reimbursements settle within 30 days of approval.";
const CITED_2: &str = "les indemnités journalières sont payées au même rythme.";

fn documents() -> Vec<Document> {
    vec![
        Document {
            title: "Expense policy".into(),
            text: POLICY.into(),
        },
        Document {
            title: "Indemnités".into(),
            text: PER_DIEM.into(),
        },
        Document {
            title: String::new(),
            text: "Book travel through the portal.".into(),
        },
    ]
}

fn request() -> ChatRequest {
    ChatRequest {
        system: "Answer from the documents.".into(),
        messages: vec![ChatMessage::user("How long does reimbursement take?")],
        documents: documents(),
        max_tokens: Some(300),
        temperature: None,
        structured: None,
    }
}

/// Anthropic's character offsets of `cited` in `text`.
fn char_range(text: &str, cited: &str) -> (usize, usize) {
    let byte = text.find(cited).unwrap();
    let start = text[..byte].chars().count();
    (start, start + cited.chars().count())
}

fn citation(document_index: usize, cited: &str) -> Value {
    let text = [POLICY, PER_DIEM][document_index];
    let (start, end) = char_range(text, cited);
    json!({"type": "char_location", "cited_text": cited, "document_index": document_index,
           "document_title": "t", "start_char_index": start, "end_char_index": end})
}

/// Two cited text blocks between uncited ones; the second cites passage 2
/// twice (one marker).
fn content() -> Value {
    json!([
        {"type": "text", "text": "According to the policy, "},
        {"type": "text", "text": "reimbursements settle within 30 days of approval",
         "citations": [citation(0, CITED_1)]},
        {"type": "text", "text": ". "},
        {"type": "text", "text": "Per diem follows the same schedule ",
         "citations": [citation(1, CITED_2), citation(1, "Zürich et 東京")]},
        {"type": "text", "text": "in Tokyo too."}
    ])
}

const EXPECTED: &str = "According to the policy, reimbursements settle within 30 days of approval[1]. Per diem follows the same schedule[2] in Tokyo too.";

fn generator(server: &FakeServer, mode: AnthropicMode) -> AnthropicGenerator {
    AnthropicGenerator::with_api_key(
        AnthropicConfig {
            base_url: format!("{}/v1", server.base_url),
            model: "claude-test".into(),
            mode,
            ..AnthropicConfig::default()
        },
        Secret::new("sk-ant-test"),
    )
    .unwrap()
}

fn check_citations(generation: &Generation) {
    assert_eq!(generation.text, EXPECTED);
    let marker_1 = EXPECTED.find("[1]").unwrap();
    let marker_2 = EXPECTED.find("[2]").unwrap();
    let in_doc_2 = |cited: &str| {
        let at = PER_DIEM.find(cited).unwrap();
        (at, at + cited.len())
    };
    let expected = vec![
        NativeCitation {
            passage: 1,
            cited_text: CITED_1.into(),
            passage_start: 0,
            passage_end: CITED_1.len(),
            answer_offset: marker_1,
        },
        NativeCitation {
            passage: 2,
            cited_text: CITED_2.into(),
            passage_start: in_doc_2(CITED_2).0,
            passage_end: in_doc_2(CITED_2).1,
            answer_offset: marker_2,
        },
        NativeCitation {
            passage: 2,
            cited_text: "Zürich et 東京".into(),
            passage_start: in_doc_2("Zürich et 東京").0,
            passage_end: in_doc_2("Zürich et 東京").1,
            answer_offset: marker_2,
        },
    ];
    assert_eq!(generation.native_citations, expected);
    // The byte ranges really select the quotes.
    for c in &generation.native_citations {
        let text = &documents()[c.passage - 1].text;
        assert_eq!(&text[c.passage_start..c.passage_end], c.cited_text);
        let marker = format!("[{}]", c.passage);
        assert_eq!(
            &generation.text[c.answer_offset..c.answer_offset + marker.len()],
            marker
        );
    }
}

#[tokio::test]
async fn native_citations_become_markers_with_byte_offsets() {
    let server = FakeServer::start(vec![Reply::json(200, anthropic_message(content()))]).await;
    let generation = generator(&server, AnthropicMode::NativeCitations)
        .generate(&request())
        .await
        .unwrap();
    check_citations(&generation);
    assert_eq!(generation.model, "fake-claude");
    assert_eq!(generation.finish_reason.as_deref(), Some("end_turn"));

    let sent = &server.received()[0];
    assert_eq!(sent.method, "POST");
    assert_eq!(sent.path, "/v1/messages");
    assert_eq!(sent.header("x-api-key"), Some("sk-ant-test"));
    assert_eq!(sent.header("anthropic-version"), Some("2023-06-01"));
    assert_eq!(sent.header("content-type"), Some("application/json"));
    let body = sent.json();
    assert_eq!(body["model"], "claude-test");
    assert_eq!(body["max_tokens"], 300);
    assert_eq!(body["system"], "Answer from the documents.");
    assert!(body.get("stream").is_none());
    let blocks = body["messages"][0]["content"].as_array().unwrap();
    assert_eq!(blocks.len(), 4);
    assert_eq!(
        blocks[1],
        json!({"type": "document", "source": {"type": "text", "media_type": "text/plain", "data": PER_DIEM},
               "title": "Indemnités", "citations": {"enabled": true}})
    );
    assert!(
        blocks[2].get("title").is_none(),
        "empty titles are not sent"
    );
    assert_eq!(
        blocks[3],
        json!({"type": "text", "text": "How long does reimbursement take?"})
    );
}

/// The same answer as a stream: citations arrive as `citations_delta`
/// before the block's text, as the API sends them.
fn native_stream(cut_after_block: Option<usize>) -> Vec<String> {
    let mut events = vec![anthropic_event(
        json!({"type": "message_start", "message": {
        "id": "msg_1", "type": "message", "role": "assistant", "content": [], "model": "fake-claude",
        "stop_reason": null, "stop_sequence": null, "usage": {"input_tokens": 10, "output_tokens": 1}}}),
    )];
    for (index, block) in content().as_array().unwrap().iter().enumerate() {
        let start = if block.get("citations").is_some() {
            json!({"type": "text", "text": "", "citations": []})
        } else {
            json!({"type": "text", "text": ""})
        };
        events.push(anthropic_event(
            json!({"type": "content_block_start", "index": index, "content_block": start}),
        ));
        for citation in block
            .get("citations")
            .and_then(|c| c.as_array())
            .into_iter()
            .flatten()
        {
            events.push(anthropic_event(
                json!({"type": "content_block_delta", "index": index,
                "delta": {"type": "citations_delta", "citation": citation}}),
            ));
        }
        let text = block["text"].as_str().unwrap();
        let (a, b) = text.split_at(text.len() / 2);
        for piece in [a, b] {
            events.push(anthropic_event(
                json!({"type": "content_block_delta", "index": index,
                "delta": {"type": "text_delta", "text": piece}}),
            ));
        }
        if cut_after_block == Some(index) {
            return events;
        }
        events.push(anthropic_event(
            json!({"type": "content_block_stop", "index": index}),
        ));
        if index == 1 {
            events.push(anthropic_event(json!({"type": "ping"})));
        }
    }
    events.push(anthropic_event(json!({"type": "message_delta",
        "delta": {"stop_reason": "end_turn", "stop_sequence": null}, "usage": {"output_tokens": 30}})));
    events.push(anthropic_event(json!({"type": "message_stop"})));
    events
}

#[tokio::test]
async fn native_citations_stream_like_the_json_answer() {
    let server = FakeServer::start(vec![Reply::sse(native_stream(None))]).await;
    let generator = generator(&server, AnthropicMode::NativeCitations);
    let mut stream = generator.generate_stream(&request());
    let mut text = String::new();
    let mut done = None;
    let mut citation_offsets = Vec::new();
    while let Some(item) = stream.next().await {
        match item.unwrap() {
            StreamEvent::Text(t) => text.push_str(&t),
            StreamEvent::Citation(c) => {
                // Emitted just before the text carrying its marker (or after
                // that marker, for a repeated passage).
                assert!(c.answer_offset <= text.len());
                citation_offsets.push(c.answer_offset);
            }
            StreamEvent::Done(generation) => done = Some(generation),
        }
    }
    let generation = done.unwrap();
    check_citations(&generation);
    assert_eq!(text, generation.text);
    assert_eq!(citation_offsets.len(), 3);
    assert_eq!(generation.finish_reason.as_deref(), Some("end_turn"));
    assert!(generation.raw.contains("citations_delta"));
    assert_eq!(server.received()[0].json()["stream"], json!(true));
}

#[tokio::test]
async fn native_stream_cut_inside_a_cited_block_is_interrupted() {
    let server = FakeServer::start(vec![Reply::sse_cut(native_stream(Some(3)))]).await;
    let generator = generator(&server, AnthropicMode::NativeCitations);
    let mut stream = generator.generate_stream(&request());
    let mut last = None;
    while let Some(item) = stream.next().await {
        last = Some(item);
    }
    // The cut block's text arrived, but its marker never did (and its
    // trailing space is held back).
    assert_eq!(
        last.unwrap().unwrap_err(),
        LlmError::StreamInterrupted {
            partial: "According to the policy, reimbursements settle within 30 days of approval[1]. Per diem follows the same schedule".into()
        }
    );
}

#[tokio::test]
async fn contract_mode_sends_plain_messages_and_ignores_documents() {
    let server = FakeServer::start(vec![Reply::json(200, anthropic_message(content()))]).await;
    let generation = generator(&server, AnthropicMode::Contract)
        .generate(&request())
        .await
        .unwrap();
    // No markers are inserted in contract mode.
    assert_eq!(
        generation.text,
        "According to the policy, reimbursements settle within 30 days of approval. Per diem follows the same schedule in Tokyo too."
    );
    assert!(generation.native_citations.is_empty());
    let body = server.received()[0].json();
    assert_eq!(
        body["messages"],
        json!([{"role": "user", "content": "How long does reimbursement take?"}])
    );
    assert_eq!(body["temperature"], json!(0.0));
}

#[tokio::test]
async fn documents_go_into_the_first_user_message_of_a_conversation() {
    let server = FakeServer::start(vec![Reply::json(200, anthropic_message(content()))]).await;
    let mut request = request();
    request.messages = vec![
        ChatMessage::user("First question"),
        ChatMessage::assistant("An answer citing [9]."),
        ChatMessage::user("Passage 9 was never sent; answer again."),
    ];
    generator(&server, AnthropicMode::NativeCitations)
        .generate(&request)
        .await
        .unwrap();
    let messages = server.received()[0].json()["messages"].clone();
    assert_eq!(messages[0]["content"].as_array().unwrap().len(), 4);
    assert_eq!(
        messages[1],
        json!({"role": "assistant", "content": "An answer citing [9]."})
    );
    assert_eq!(
        messages[2],
        json!({"role": "user", "content": "Passage 9 was never sent; answer again."})
    );
}

#[tokio::test]
async fn citation_of_a_document_never_sent_keeps_its_marker() {
    let body = anthropic_message(json!([
        {"type": "text", "text": "Something", "citations": [
            {"type": "char_location", "cited_text": "x", "document_index": 6, "start_char_index": 0, "end_char_index": 1}
        ]}
    ]));
    let server = FakeServer::start(vec![Reply::json(200, body)]).await;
    let generation = generator(&server, AnthropicMode::NativeCitations)
        .generate(&request())
        .await
        .unwrap();
    assert_eq!(generation.text, "Something[7]");
    assert_eq!(generation.native_citations[0].passage, 7);
    assert_eq!(
        (
            generation.native_citations[0].passage_start,
            generation.native_citations[0].passage_end
        ),
        (0, 0)
    );
}

#[tokio::test]
async fn in_stream_error_event_is_reported() {
    let mut events = common::anthropic_text_stream(&["Reimbursements "], false);
    events.push(anthropic_event(
        json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}),
    ));
    let server = FakeServer::start(vec![Reply::sse(events)]).await;
    let generator = generator(&server, AnthropicMode::Contract);
    let mut stream = generator.generate_stream(&request());
    let mut items = Vec::new();
    while let Some(item) = stream.next().await {
        items.push(item);
    }
    assert_eq!(
        items.first(),
        Some(&Ok(StreamEvent::Text("Reimbursements".into())))
    );
    assert_eq!(
        items.last().unwrap().clone().unwrap_err(),
        LlmError::Http {
            status: 529,
            message: "overloaded_error in the stream: Overloaded".into()
        }
    );
    assert_eq!(server.count(), 1);
}

#[tokio::test]
async fn overloaded_529_is_retried() {
    let server = FakeServer::start(vec![
        Reply::json(
            529,
            json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}).to_string(),
        ),
        Reply::json(200, anthropic_message(json!([{"type": "text", "text": "Fine [1]."}]))),
    ])
    .await;
    let mut config = generator(&server, AnthropicMode::Contract).config().clone();
    config.transport.backoff_ms = 5;
    let generator = AnthropicGenerator::with_api_key(config, Secret::new("k")).unwrap();
    let generation = generator.generate(&request()).await.unwrap();
    assert_eq!(generation.text, "Fine [1].");
    assert_eq!(generation.retries, 1);
}

#[tokio::test]
async fn a_request_without_a_user_message_is_a_config_error() {
    let server = FakeServer::start(vec![Reply::json(200, anthropic_message(content()))]).await;
    let mut request = request();
    request.messages.clear();
    let error = generator(&server, AnthropicMode::Contract)
        .generate(&request)
        .await
        .unwrap_err();
    assert!(matches!(error, LlmError::Config(_)));
    assert_eq!(server.count(), 0);
}

#[test]
fn config_reads_mode_from_snake_case() {
    let config: AnthropicConfig =
        serde_json::from_value(json!({"mode": "native_citations", "model": "claude-x"})).unwrap();
    assert_eq!(config.mode, AnthropicMode::NativeCitations);
    assert_eq!(config.api_key_env, "ANTHROPIC_API_KEY");
    assert_eq!(config.version, "2023-06-01");
    assert_eq!(config.base_url, "https://api.anthropic.com");
}
