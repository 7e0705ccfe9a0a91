//! The LLM judge, the pure half: which claims go to the judge, what it is asked, how its reply
//! is read and how its verdict combines with the rules'.
//!
//! [`LlmVerifier`] wraps another verifier (lexical, or semantic with a model) and a
//! [`PairJudge`], the seam to the model (the engine implements it with the configured LLM
//! backend, bounded concurrency and a total deadline; tests use fakes). This module does no I/O:
//! it renders one [`JudgeRequest`] per claim, hands them all to the judge at once, and reads
//! the raw replies.
//!
//! ## What is judged
//! Every claim that cites at least one passage that was sent, except a claim the rules found
//! contradicted: a deterministic contradiction (numbers, dates, bounds, negation, antonyms,
//! entities, restriction) always wins and is never sent. Uncited claims keep the inner verdict
//! (there is no cited passage to judge against). The judge sees the question (as context), the
//! cited passages (each cut to [`JudgeLimits::max_passage_chars`] around the rules' evidence)
//! and the claim without its markers.
//!
//! ## How its reply counts
//! The reply must be one JSON object `{"verdict": "supported" | "contradicted" | "not_stated",
//! "quote": "...", "explanation": "..."}` (text around the object is tolerated, as small models
//! wrap it in prose or a code fence). Its verdict replaces the inner one, with the reason
//! `judge_supported`, `judge_contradicted` or `judge_unsupported` and the judge's explanation;
//! the evidence becomes the quote when a cited passage contains it (matched exactly, else
//! ignoring case and runs of whitespace), else stays the rules' evidence. A reply that cannot
//! be read, a backend error or the deadline leaves the inner verdict standing with the reason
//! `judge_unavailable` saying why.

use std::ops::Range;

use crate::stage::{Inputs, second_stage_verifier};
use crate::{Evidence, Judgement, Reason, Verdict, Verifier};

/// One claim, as put to the judge: the system and user messages of one chat request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JudgeRequest {
    /// The system message: the judge's instructions ([`JUDGE_INSTRUCTIONS`]).
    pub system: String,
    /// The user message: the question (context only, if any), the cited passages and the claim.
    pub user: String,
}

/// The model behind [`LlmVerifier`]: answers every request (in any order, at once or not), one
/// result per request in input order. `Ok` holds the reply text; `Err` says why there is none
/// (the backend failed, the deadline passed).
pub trait PairJudge {
    /// One result per request, in input order: the reply text, or why there is none.
    fn judge(&self, requests: &[JudgeRequest]) -> Vec<Result<String, String>>;
}

/// How much of the cited passages the judge reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct JudgeLimits {
    /// Each cited passage is cut to at most this many characters, around the rules' evidence
    /// when it lies in that passage. Default 4,000.
    pub max_passage_chars: usize,
}

impl Default for JudgeLimits {
    fn default() -> Self {
        JudgeLimits {
            max_passage_chars: 4000,
        }
    }
}

/// The system message of every judge request.
pub const JUDGE_INSTRUCTIONS: &str = "\
You check one sentence against numbered source passages. Decide from the passages alone, not \
from what you know.
- \"supported\": the passages state what the sentence says. A faithful paraphrase, a summary, \
a merge of two passage sentences and an equivalent number (\"one year\" for \"12 months\") are \
supported.
- \"contradicted\": the passages state something incompatible with the sentence: another \
number, date or unit, another person or party doing or receiving it, the opposite meaning \
(paid vs forfeited, required vs optional), another condition, order or scope (all, only, \
some), or a property that belongs to another item.
- \"not_stated\": the passages neither state the sentence nor contradict it.
Reply with one JSON object and nothing else: {\"verdict\": \"supported\" | \"contradicted\" | \
\"not_stated\", \"quote\": \"the exact words of a passage that decide it, or empty\", \
\"explanation\": \"one short sentence\"}";

/// The JSON schema of the reply, for backends that constrain output by schema.
pub fn reply_schema() -> serde_json::Value {
    serde_json::json!({
        "type": "object",
        "properties": {
            "verdict": {"type": "string", "enum": ["supported", "contradicted", "not_stated"]},
            "quote": {"type": "string"},
            "explanation": {"type": "string"}
        },
        "required": ["verdict", "quote", "explanation"],
        "additionalProperties": false
    })
}

/// The judge's reply, read.
#[derive(Debug, Clone, PartialEq)]
pub struct JudgeReply {
    /// Supported, contradicted, or unsupported (the reply's `not_stated`).
    pub verdict: Verdict,
    /// The words of a passage that decide it, trimmed; empty when none was given.
    pub quote: String,
    /// The judge's one-sentence reason, trimmed; empty when none was given.
    pub explanation: String,
}

/// Reads a reply: the first `{` to the last `}` must be a JSON object with a known `verdict`.
pub fn parse_reply(reply: &str) -> Result<JudgeReply, String> {
    #[derive(serde::Deserialize)]
    struct Raw {
        verdict: String,
        #[serde(default)]
        quote: Option<String>,
        #[serde(default)]
        explanation: Option<String>,
    }
    let shown = || {
        let s: String = reply.trim().chars().take(80).collect();
        if s.is_empty() { "(empty)".into() } else { s }
    };
    let (Some(start), Some(end)) = (reply.find('{'), reply.rfind('}')) else {
        return Err(format!("the reply is not JSON: {}", shown()));
    };
    if end < start {
        return Err(format!("the reply is not JSON: {}", shown()));
    }
    let raw: Raw = serde_json::from_str(&reply[start..=end])
        .map_err(|e| format!("the reply is not the JSON asked for ({e}): {}", shown()))?;
    let verdict = match raw
        .verdict
        .trim()
        .to_ascii_lowercase()
        .replace([' ', '-'], "_")
        .as_str()
    {
        "supported" => Verdict::Supported,
        "contradicted" => Verdict::Contradicted,
        "not_stated" | "unsupported" | "not_supported" => Verdict::Unsupported,
        other => {
            return Err(format!(
                "the reply's verdict is not one asked for: {other:?}"
            ));
        }
    };
    Ok(JudgeReply {
        verdict,
        quote: raw.quote.unwrap_or_default().trim().to_string(),
        explanation: raw.explanation.unwrap_or_default().trim().to_string(),
    })
}

/// The request for one claim: the question (context only), the cited passages and the claim
/// (without its markers).
pub fn render_request(
    question: Option<&str>,
    passages: &[&str],
    cited: &[usize],
    claim: &str,
    evidence: Option<&Evidence>,
    limits: &JudgeLimits,
) -> JudgeRequest {
    let mut user = String::new();
    if let Some(q) = question.map(str::trim).filter(|q| !q.is_empty()) {
        user.push_str("Question (context only): ");
        user.push_str(q);
        user.push_str("\n\n");
    }
    user.push_str("Passages:\n");
    for &k in cited {
        let Some(text) = passages.get(k.wrapping_sub(1)) else {
            continue;
        };
        let around = evidence.filter(|e| e.passage == k).map(|e| e.start..e.end);
        let cut = cut_around(text, around, limits.max_passage_chars);
        user.push_str(&format!("[{k}] "));
        if cut.start > 0 {
            user.push_str("… ");
        }
        user.push_str(text[cut.clone()].trim());
        if cut.end < text.len() {
            user.push_str(" …");
        }
        user.push('\n');
    }
    user.push_str("\nSentence: ");
    user.push_str(claim);
    JudgeRequest {
        system: JUDGE_INSTRUCTIONS.to_string(),
        user,
    }
}

/// At most `max_chars` characters of `text` (on char boundaries), centred on `around` when given.
fn cut_around(text: &str, around: Option<Range<usize>>, max_chars: usize) -> Range<usize> {
    if text.chars().count() <= max_chars {
        return 0..text.len();
    }
    let centre = around.map_or(0, |r| (r.start + r.end) / 2).min(text.len());
    // Byte offsets of char boundaries, then a window of max_chars of them.
    let bounds: Vec<usize> = text
        .char_indices()
        .map(|(i, _)| i)
        .chain([text.len()])
        .collect();
    let at = bounds.partition_point(|&b| b < centre);
    let first = at
        .saturating_sub(max_chars / 2)
        .min(bounds.len() - 1 - max_chars);
    bounds[first]..bounds[first + max_chars]
}

/// Where `quote` stands in one of the cited passages: exactly, else ignoring case and runs of
/// whitespace.
pub fn locate_quote(passages: &[&str], cited: &[usize], quote: &str) -> Option<Evidence> {
    let quote = quote
        .trim()
        .trim_matches(|c| c == '"' || c == '\u{201c}' || c == '\u{201d}');
    if quote.chars().count() < 3 {
        return None;
    }
    let found = |k: usize, r: Range<usize>| Evidence {
        passage: k,
        start: r.start,
        end: r.end,
    };
    for &k in cited {
        if let Some(text) = passages.get(k.wrapping_sub(1))
            && let Some(at) = text.find(quote)
        {
            return Some(found(k, at..at + quote.len()));
        }
    }
    let wanted: Vec<String> = quote.split_whitespace().map(str::to_lowercase).collect();
    for &k in cited {
        let Some(text) = passages.get(k.wrapping_sub(1)) else {
            continue;
        };
        let words: Vec<(usize, &str)> = word_spans(text);
        if let Some(w) = words.windows(wanted.len()).find(|w| {
            w.iter()
                .zip(&wanted)
                .all(|((_, a), b)| a.to_lowercase() == *b)
        }) {
            let (start, _) = w[0];
            let (last, word) = w[w.len() - 1];
            return Some(found(k, start..last + word.len()));
        }
    }
    None
}

/// The whitespace-separated words of `text` with their byte offsets.
fn word_spans(text: &str) -> Vec<(usize, &str)> {
    text.split_whitespace()
        .map(|w| (w.as_ptr() as usize - text.as_ptr() as usize, w))
        .collect()
}

/// The judge's verdict over the inner one (see the module documentation).
pub fn combine(
    mut judgement: Judgement,
    reply: Result<JudgeReply, String>,
    passages: &[&str],
    cited: &[usize],
) -> Judgement {
    let reply = match reply {
        Ok(reply) => reply,
        Err(why) => {
            judgement.reasons.push(Reason::JudgeUnavailable(why));
            return judgement;
        }
    };
    let reason = Reason::Judge {
        verdict: reply.verdict,
        explanation: reply.explanation,
    };
    match reply.verdict {
        Verdict::Supported | Verdict::Contradicted => {
            judgement.reasons = vec![reason];
            judgement.suggested.clear();
        }
        // Not stated: the rules' missing words (if any) still say what is missing.
        Verdict::Unsupported => {
            if judgement.verdict != Verdict::Unsupported {
                judgement.reasons.clear();
            }
            judgement.reasons.insert(0, reason);
        }
    }
    judgement.verdict = reply.verdict;
    if let Some(evidence) = locate_quote(passages, cited, &reply.quote) {
        judgement.evidence = Some(evidence);
    }
    judgement
}

/// Another verifier's judgements, then the LLM judge's on every cited claim they do not find
/// contradicted. See the module documentation.
#[derive(Debug, Clone)]
pub struct LlmVerifier<V, J> {
    /// The verifier that runs first (lexical, or semantic).
    pub inner: V,
    /// The model.
    pub judge: J,
    /// How much of the cited passages the judge reads.
    pub limits: JudgeLimits,
}

impl<V: Verifier, J: PairJudge> LlmVerifier<V, J> {
    /// The `inner` verifier, then `judge` on what it does not find contradicted, within `limits`.
    pub fn new(inner: V, judge: J, limits: JudgeLimits) -> LlmVerifier<V, J> {
        LlmVerifier {
            inner,
            judge,
            limits,
        }
    }

    /// Puts every cited claim the inner verifier does not find contradicted to the judge.
    fn refine(&self, inputs: Inputs<'_>, judgements: Vec<Judgement>) -> Vec<Judgement> {
        let (question, passages, claims) = (inputs.question, inputs.passages, inputs.claims);
        let sent = |k: &usize| *k >= 1 && *k <= passages.len();
        let mut asked: Vec<(usize, Vec<usize>)> = Vec::new();
        let mut requests = Vec::new();
        for (i, j) in judgements.iter().enumerate() {
            let mut cited: Vec<usize> = claims[i].cited.iter().copied().filter(sent).collect();
            cited.sort_unstable();
            cited.dedup();
            if j.verdict == Verdict::Contradicted || cited.is_empty() {
                continue;
            }
            let claim = inputs.claim_without_markers(i);
            requests.push(render_request(
                question,
                passages,
                &cited,
                &claim,
                j.evidence.as_ref(),
                &self.limits,
            ));
            asked.push((i, cited));
        }
        if requests.is_empty() {
            return judgements;
        }
        let mut replies = self.judge.judge(&requests);
        replies.resize_with(requests.len(), || {
            Err("the judge returned fewer replies than requests".into())
        });
        let mut judgements: Vec<Option<Judgement>> = judgements.into_iter().map(Some).collect();
        for ((i, cited), reply) in asked.into_iter().zip(replies) {
            let j = judgements[i].take().expect("each claim is asked once");
            let reply = reply.and_then(|text| parse_reply(&text));
            judgements[i] = Some(combine(j, reply, passages, &cited));
        }
        judgements.into_iter().map(|j| j.expect("kept")).collect()
    }
}

impl<V: Verifier, J: PairJudge> Verifier for LlmVerifier<V, J> {
    second_stage_verifier!(first: inner, kind: Llm);
}

#[cfg(test)]
mod tests {
    use std::cell::RefCell;

    use super::*;
    use crate::{Claim, LexicalVerifier};

    /// Replies from a list, in order; remembers the requests.
    struct Scripted {
        replies: Vec<Result<String, String>>,
        seen: RefCell<Vec<JudgeRequest>>,
    }

    impl Scripted {
        fn new(replies: &[Result<&str, &str>]) -> Scripted {
            Scripted {
                replies: replies
                    .iter()
                    .map(|r| r.map(str::to_string).map_err(str::to_string))
                    .collect(),
                seen: RefCell::new(Vec::new()),
            }
        }
    }

    impl PairJudge for &Scripted {
        fn judge(&self, requests: &[JudgeRequest]) -> Vec<Result<String, String>> {
            self.seen.borrow_mut().extend_from_slice(requests);
            self.replies.iter().take(requests.len()).cloned().collect()
        }
    }

    const PASSAGES: [&str; 2] = [
        "Expense claims must be filed within 60 days of the expense.",
        "Unused travel compensatory time is forfeited when you leave the agency.",
    ];

    fn verify(judge: &Scripted, claims: &[Claim<'_>]) -> Vec<Judgement> {
        LlmVerifier::new(LexicalVerifier::default(), judge, JudgeLimits::default()).verify(
            Some("What happens to comp time?"),
            &PASSAGES,
            claims,
        )
    }

    #[test]
    fn the_judge_catches_what_the_rules_pass_and_quotes_the_passage() {
        let judge = Scripted::new(&[Ok(
            "Sure! ```json\n{\"verdict\": \"contradicted\", \"quote\": \"is  FORFEITED when you leave\", \"explanation\": \"The passage says it is forfeited.\"}\n```",
        )]);
        let claims = [Claim {
            text: "Unused travel comp time moves with you when you leave [2].",
            cited: &[2],
        }];
        let j = verify(&judge, &claims).remove(0);
        assert_eq!(j.verdict, Verdict::Contradicted);
        assert_eq!(
            j.reasons[0].to_string(),
            r#"judge_contradicted: "The passage says it is forfeited.""#
        );
        let e = j.evidence.unwrap();
        assert_eq!(&PASSAGES[1][e.start..e.end], "is forfeited when you leave");
        let seen = judge.seen.borrow();
        assert_eq!(seen.len(), 1);
        assert!(seen[0].user.contains("[2] Unused travel compensatory time"));
        assert!(
            !seen[0].user.contains("[1]"),
            "only cited passages are sent"
        );
        assert!(
            seen[0]
                .user
                .ends_with("Sentence: Unused travel comp time moves with you when you leave .")
        );
        assert!(
            seen[0]
                .user
                .starts_with("Question (context only): What happens to comp time?")
        );
    }

    #[test]
    fn a_deterministic_contradiction_is_never_sent_and_uncited_claims_stay() {
        let judge = Scripted::new(&[Ok(
            r#"{"verdict": "supported", "quote": "", "explanation": ""}"#,
        )]);
        let claims = [
            Claim {
                text: "Expense claims must be filed within 90 days [1].",
                cited: &[1],
            },
            Claim {
                text: "Expense claims must be filed within 60 days.",
                cited: &[],
            },
            Claim {
                text: "Claims go to [7].",
                cited: &[7],
            },
        ];
        let js = verify(&judge, &claims);
        assert_eq!(js[0].verdict, Verdict::Contradicted);
        assert!(judge.seen.borrow().is_empty());
        assert_eq!(js.len(), 3);
    }

    #[test]
    fn not_stated_keeps_the_missing_words_and_failures_leave_the_verdict() {
        let judge = Scripted::new(&[
            Ok(
                r#"{"verdict": "not_stated", "quote": "", "explanation": "No deadline for receipts."}"#,
            ),
            Ok("I think it is fine."),
            Err("deadline of 60 s passed"),
            Ok(r#"{"verdict": "maybe"}"#),
        ]);
        let claims = [
            Claim {
                text: "Receipts must be notarised within 60 days [1].",
                cited: &[1],
            },
            Claim {
                text: "Expense claims must be filed within 60 days [1].",
                cited: &[1],
            },
            Claim {
                text: "Expense claims are filed within 60 days of the expense [1].",
                cited: &[1],
            },
            Claim {
                text: "Claims are filed within 60 days [1].",
                cited: &[1],
            },
        ];
        let js = verify(&judge, &claims);
        assert_eq!(js[0].verdict, Verdict::Unsupported);
        assert_eq!(
            js[0].reasons[0].to_string(),
            r#"judge_unsupported: "No deadline for receipts.""#
        );
        assert!(matches!(js[0].reasons[1], Reason::Missing(_)));
        assert_eq!(js[1].verdict, Verdict::Supported);
        assert!(
            js[1]
                .reasons
                .last()
                .unwrap()
                .to_string()
                .starts_with("judge_unavailable: \"the reply is not JSON: I think it is fine.\""),
            "{:?}",
            js[1].reasons
        );
        assert_eq!(
            js[2].reasons.last().unwrap().to_string(),
            r#"judge_unavailable: "deadline of 60 s passed""#
        );
        assert_eq!(
            js[3].reasons.last().unwrap().to_string(),
            r#"judge_unavailable: "the reply's verdict is not one asked for: \"maybe\"""#
        );
        assert_eq!(js[3].verdict, Verdict::Supported);
    }

    #[test]
    fn too_few_replies_are_unavailable_not_a_panic() {
        let judge = Scripted::new(&[]);
        let claims = [Claim {
            text: "Expense claims must be filed within 60 days [1].",
            cited: &[1],
        }];
        let j = verify(&judge, &claims).remove(0);
        assert_eq!(j.verdict, Verdict::Supported);
        assert!(matches!(
            j.reasons.last(),
            Some(Reason::JudgeUnavailable(_))
        ));
    }

    #[test]
    fn long_passages_are_cut_around_the_evidence_on_char_boundaries() {
        let text = format!(
            "{}Le délai est de 30 jours.{}",
            "é".repeat(5000),
            "ü".repeat(5000)
        );
        let at = text.find("Le délai").unwrap();
        let evidence = Evidence {
            passage: 1,
            start: at,
            end: at + "Le délai est de 30 jours.".len(),
        };
        let r = render_request(
            None,
            &[text.as_str()],
            &[1],
            "Le délai est de 30 jours [1].",
            Some(&evidence),
            &JudgeLimits {
                max_passage_chars: 100,
            },
        );
        assert!(r.user.contains("Le délai est de 30 jours."));
        assert!(r.user.contains("[1] … "));
        let cut = cut_around(&text, Some(evidence.start..evidence.end), 100);
        assert_eq!(text[cut].chars().count(), 100);
        let short = cut_around("short", None, 100);
        assert_eq!(short, 0..5);
    }
}
