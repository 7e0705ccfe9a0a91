//! The streaming path of [`Engine::ask_stream`]: validated sentences as
//! they complete, a retraction when the attempt they came from is
//! rejected or the policies withdraw them, then the full result.

use super::*;

impl Engine {
    /// Answers a question as a stream: validated sentences as they
    /// complete, then the full result.
    pub fn ask_stream(&self, question: &str, opts: &AskOptions) -> BoxStream<'static, AskEvent> {
        let engine = self.clone();
        let question = question.to_string();
        let opts = opts.clone();
        let (tx, rx) = tokio::sync::mpsc::channel::<AskEvent>(64);
        let task = async move {
            let started = Instant::now();
            let prepared = match engine.prepare(&question, &opts, started) {
                Ok(p) => p,
                Err(e) => {
                    let _ = tx.send(AskEvent::Error(e)).await;
                    return;
                }
            };
            let Ready {
                sent,
                infos,
                mut request,
                topics,
                retrieve_ms,
                gate_ms,
            } = match prepared {
                Prepared::Refused(result) => {
                    let _ = tx.send(AskEvent::Final(result)).await;
                    return;
                }
                Prepared::Ready(ready) => *ready,
            };
            let generate_started = Instant::now();
            let mut attempts = Vec::new();
            let mut mode = None;
            let mut shown = Shown::default();
            let streamed = engine
                .stream_first_attempt(&question, &request, &sent, &tx, &mut shown, started)
                .await;
            let outcome = match streamed {
                Ok(Some(generation)) => {
                    // The first attempt arrived whole: validate it like any
                    // answer (regenerating without streaming if needed).
                    engine
                        .generate_validated(
                            &mut request,
                            &sent,
                            &mut attempts,
                            &mut mode,
                            Some(generation),
                        )
                        .await
                }
                Ok(None) => Err(EngineError::Internal(
                    "stream ended without an answer".into(),
                )),
                Err(e) => Err(e),
            };
            let outcome = match outcome {
                Ok(o) => o,
                Err(e) => {
                    if !shown.texts.is_empty() {
                        let _ = tx.send(shown.retract("error")).await;
                    }
                    let _ = tx.send(AskEvent::Error(e)).await;
                    return;
                }
            };
            let generate_ms = ms(generate_started);
            let check_started = Instant::now();
            let mut result = match engine.finish(&question, outcome, sent, infos, topics, attempts)
            {
                Ok(result) => result,
                Err(e) => {
                    if !shown.texts.is_empty() {
                        let _ = tx.send(shown.retract("error")).await;
                    }
                    let _ = tx.send(AskEvent::Error(e)).await;
                    return;
                }
            };
            result.generation_mode = mode;
            result.timings.retrieve_ms = retrieve_ms;
            result.timings.gate_ms = gate_ms;
            result.timings.generate_ms = generate_ms;
            result.timings.check_ms = ms(check_started);
            result.timings.total_ms = ms(started);
            result.timings.first_sentence_ms = shown.first_sentence_ms;
            if let Some(reason) = shown.withdrawn_by(&result) {
                let _ = tx.send(shown.retract(reason)).await;
            }
            let _ = tx.send(AskEvent::Final(Box::new(result))).await;
        };
        tokio::spawn(task);
        futures::stream::unfold(rx, |mut rx| async move { rx.recv().await.map(|e| (e, rx)) })
            .boxed()
    }

    /// Streams the first attempt through the hold-back validator, sending
    /// each complete sentence whose markers resolve. Stops releasing at the
    /// first sentence with an id never sent (or, under the `refuse`
    /// unsupported policy, at the first contradicted or unsupported one);
    /// under `drop`, skips those. A reply cut at the token limit does not
    /// release its unfinished last sentence. A structured reply is rendered
    /// to marker text one complete sentence object at a time (an
    /// unfinished object is never shown). Returns the whole generation.
    async fn stream_first_attempt(
        &self,
        question: &str,
        request: &ChatRequest,
        sent: &[Passage],
        tx: &tokio::sync::mpsc::Sender<AskEvent>,
        shown: &mut Shown,
        started: Instant,
    ) -> Result<Option<Generation>, EngineError> {
        let policy = self.inner.settings.check.unsupported_policy;
        let form = self.inner.settings.check.refusal_form;
        let mut stream = self.inner.generator.generate_stream(request);
        let mut holdback = HoldBack::new(sent.len());
        // Only asked-for JSON is rendered; free text passes through.
        let mut renderer = request.structured.is_some().then(StreamRenderer::default);
        let mut index = 0usize;
        let mut tainted = false;
        let texts: Vec<&str> = sent.iter().map(|p| p.text.as_str()).collect();
        let mut release = |ready: Vec<groundcite_core::stream::ReadySentence>,
                           tainted: &mut bool|
         -> Vec<AskEvent> {
            let mut events = Vec::new();
            for r in ready {
                if *tainted || !r.bad_ids.is_empty() || refusal::is_refusal_sentence(&r.text) {
                    *tainted = true;
                    continue;
                }
                let cited: Vec<usize> = r.citations.iter().map(|&id| id as usize).collect();
                let verdict = if cited.is_empty() {
                    "uncited".to_string()
                } else if self.inner.settings.check.verify_support {
                    let claim = Claim {
                        text: &r.text,
                        cited: &cited,
                    };
                    match self
                        .inner
                        .checker
                        .verifier()
                        .verify(Some(question), &texts, &[claim])
                        .first()
                        .map(|j| j.verdict)
                    {
                        Some(Verdict::Supported) => "supported".into(),
                        Some(Verdict::Contradicted) => "contradicted".into(),
                        _ => "unsupported".into(),
                    }
                } else {
                    "unchecked".into()
                };
                if verdict == "contradicted" || verdict == "unsupported" {
                    match policy {
                        UnsupportedPolicy::Flag => {}
                        UnsupportedPolicy::Drop => continue,
                        UnsupportedPolicy::Refuse => {
                            *tainted = true;
                            continue;
                        }
                    }
                }
                events.push(AskEvent::Sentence(StreamedSentence {
                    index,
                    text: r.text,
                    start: r.start,
                    end: r.end,
                    citations: r.citations,
                    markers: r.markers,
                    verdict,
                }));
                index += 1;
            }
            events
        };
        while let Some(event) = stream.next().await {
            match event? {
                StreamEvent::Text(delta) => {
                    let delta = match renderer.as_mut() {
                        Some(renderer) => renderer.push(&delta),
                        None => delta,
                    };
                    for e in release(holdback.push(&delta), &mut tainted) {
                        shown.record(&e, started);
                        if tx.send(e).await.is_err() {
                            return Ok(None);
                        }
                    }
                }
                StreamEvent::Citation(_) => {}
                StreamEvent::Done(generation) => {
                    let json = generation.structured
                        && structured::render(&generation.text, form).is_some();
                    if let Some(renderer) = renderer.as_mut() {
                        let tail = renderer.finish(&generation.text, form);
                        for e in release(holdback.push(&tail), &mut tainted) {
                            shown.record(&e, started);
                            let _ = tx.send(e).await;
                        }
                    }
                    let mut rest = holdback.finish();
                    // Rendered JSON holds complete sentences only.
                    if !json && finalize::is_cut_off(generation.finish_reason.as_deref()) {
                        let kept = finalize::drop_unfinished_tail(&generation.text).len();
                        rest.retain(|r| r.start < kept);
                    }
                    for e in release(rest, &mut tainted) {
                        shown.record(&e, started);
                        let _ = tx.send(e).await;
                    }
                    return Ok(Some(generation));
                }
            }
        }
        Ok(None)
    }
}

/// What a stream has shown of its first attempt.
#[derive(Default)]
struct Shown {
    texts: Vec<String>,
    first_sentence_ms: Option<f64>,
}

impl Shown {
    fn record(&mut self, event: &AskEvent, started: Instant) {
        if let AskEvent::Sentence(StreamedSentence { text, .. }) = event {
            self.first_sentence_ms.get_or_insert_with(|| ms(started));
            self.texts.push(text.clone());
        }
    }

    /// Why the sentences shown must be withdrawn before `result` is sent,
    /// if they must: it refused, it is another attempt, or it no longer
    /// holds one of them.
    fn withdrawn_by(&self, result: &AskResult) -> Option<&'static str> {
        if self.texts.is_empty() {
            None
        } else if result.refusal.is_some() {
            Some("refused")
        } else if result.regenerated {
            Some("regenerated")
        } else if self
            .texts
            .iter()
            .any(|t| !result.answer.contains(t.as_str()))
        {
            Some("dropped")
        } else {
            None
        }
    }

    fn retract(&self, reason: &str) -> AskEvent {
        AskEvent::Retract(Retraction {
            count: self.texts.len(),
            reason: reason.to_string(),
        })
    }
}
