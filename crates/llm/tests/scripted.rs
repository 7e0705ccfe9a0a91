//! The scripted generator: order, exhaustion, pacing, script files.

use std::time::{Duration, Instant};

use futures::StreamExt;
use groundcite_llm::{
    ChatMessage, ChatRequest, Exhausted, Generator, LlmError, ScriptedGenerator, StreamEvent,
};

fn request(question: &str) -> ChatRequest {
    ChatRequest {
        messages: vec![ChatMessage::user(question)],
        ..ChatRequest::default()
    }
}

#[tokio::test]
async fn replays_in_order_then_repeats_the_last() {
    let generator = ScriptedGenerator::new(vec!["one [7].".into(), "two [1].".into()]);
    let mut texts = Vec::new();
    for i in 0..3 {
        texts.push(
            generator
                .generate(&request(&format!("q{i}")))
                .await
                .unwrap()
                .text,
        );
    }
    assert_eq!(texts, ["one [7].", "two [1].", "two [1]."]);
    assert_eq!(generator.calls(), 3);
    assert_eq!(generator.requests()[1].messages[0].content, "q1");
}

#[tokio::test]
async fn can_fail_when_exhausted() {
    let generator = ScriptedGenerator::new(vec!["only".into()]).exhausted(Exhausted::Error);
    assert_eq!(
        generator.generate(&request("a")).await.unwrap().text,
        "only"
    );
    assert!(matches!(
        generator.generate(&request("b")).await,
        Err(LlmError::Config(_))
    ));
    let empty = ScriptedGenerator::new(Vec::new());
    assert!(matches!(
        empty.generate(&request("a")).await,
        Err(LlmError::Config(_))
    ));
}

#[tokio::test]
async fn replays_errors() {
    let generator = ScriptedGenerator::from_results(vec![
        Err(LlmError::Timeout {
            after: Duration::from_secs(1),
        }),
        Ok("after the timeout".into()),
    ]);
    assert!(matches!(
        generator.generate(&request("a")).await,
        Err(LlmError::Timeout { .. })
    ));
    let mut stream = generator.generate_stream(&request("b"));
    let mut text = String::new();
    while let Some(item) = stream.next().await {
        if let StreamEvent::Text(t) = item.unwrap() {
            text.push_str(&t);
        }
    }
    assert_eq!(text, "after the timeout");
}

#[tokio::test]
async fn streams_at_a_fixed_pace() {
    let answer = "Réimbursements settle within 30 days [2].";
    let generator =
        ScriptedGenerator::new(vec![answer.into()]).with_pacing(8, Duration::from_millis(20));
    let started = Instant::now();
    let mut stream = generator.generate_stream(&request("q"));
    let mut chunks = Vec::new();
    let mut done = None;
    while let Some(item) = stream.next().await {
        match item.unwrap() {
            StreamEvent::Text(t) => chunks.push(t),
            StreamEvent::Done(generation) => done = Some(generation),
            StreamEvent::Citation(_) => unreachable!(),
        }
    }
    assert_eq!(chunks.len(), answer.chars().count().div_ceil(8));
    assert!(
        chunks[..chunks.len() - 1]
            .iter()
            .all(|c| c.chars().count() == 8)
    );
    assert_eq!(chunks.concat(), answer);
    assert_eq!(done.unwrap().text, answer);
    assert!(started.elapsed() >= Duration::from_millis(20 * (chunks.len() as u64 - 1)));
}

#[test]
fn reads_json_arrays_and_json_lines() {
    let from_array = ScriptedGenerator::from_script(r#"["a [1].", {"text": "b [2]."}]"#).unwrap();
    let from_lines =
        ScriptedGenerator::from_script("\"a [1].\"\n\n{\"text\": \"b [2].\"}\n").unwrap();
    for generator in [from_array, from_lines] {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        let texts: Vec<String> = runtime.block_on(async {
            vec![
                generator.generate(&request("1")).await.unwrap().text,
                generator.generate(&request("2")).await.unwrap().text,
            ]
        });
        assert_eq!(texts, ["a [1].", "b [2]."]);
    }
    let error = ScriptedGenerator::from_script("\"ok\"\nnot json\n").unwrap_err();
    assert!(error.to_string().contains("line 2"), "{error}");
    assert!(ScriptedGenerator::from_script("  \n").is_err());
    assert!(ScriptedGenerator::from_script("[]").is_err());
}
