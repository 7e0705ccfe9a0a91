//! Refusals: the gate's (linking the hits whose topic names the
//! question, or "Not covered" when none does), the one constructor every
//! refusal goes through, the refused result, and the closest passages and
//! nearest topics a refusal lists.

use super::*;

impl Engine {
    /// The refusal of a question the gate stopped. When a hit's topic
    /// (its section or title) names what the question is about, the
    /// documents do discuss it: the refusal is `no_direct_answer` with
    /// those hits linked, never "Not covered" (which would deny a policy
    /// that exists). Otherwise nothing relevant was found: `gate`.
    pub(super) fn gate_refusal(
        &self,
        question: &str,
        hits: &[Hit],
        topics: Vec<String>,
    ) -> AskRefusal {
        let related: Vec<Passage> = passages_of(hits)
            .into_iter()
            .zip(hits)
            .filter(|(_, h)| topic_names_question(question, topic_of(h)))
            .map(|(p, _)| p)
            .take(CLOSEST)
            .collect();
        if related.is_empty() {
            return self.refusal(question, RefusalReason::Gate, None, topics);
        }
        let mut refusal = self.refusal(question, RefusalReason::NoDirectAnswer, None, topics);
        refusal.closest_passages = SentPassageInfo::numbered(&related);
        refusal
    }

    /// A refusal with the configured hand-off.
    pub(super) fn refusal(
        &self,
        question: &str,
        reason: RefusalReason,
        needed: Option<String>,
        nearest_topics: Vec<String>,
    ) -> AskRefusal {
        let handoff = self.inner.settings.handoff_line();
        AskRefusal::new(reason, question, needed, nearest_topics, handoff)
    }

    /// The result of a refused question: the refusal rendered as the answer.
    pub(super) fn refused(
        &self,
        question: &str,
        refusal: AskRefusal,
        infos: Vec<SentPassageInfo>,
        attempts: Vec<Attempt>,
    ) -> AskResult {
        AskResult {
            question: question.to_string(),
            answer: render_refusal(&refusal),
            findings: Findings::nothing_claimed(),
            counts: Counts::default(),
            passages: infos,
            refusal: Some(refusal),
            answers_question: None,
            timings: Timings::default(),
            regenerated: attempts.len() > 1,
            attempts,
            generator: self.inner.generator.name().to_string(),
            retrieval: self.inner.retrieval,
            finish_reason: None,
            truncated: false,
            generation_mode: None,
        }
    }
}

/// The passages sent, by their best unit's score (best first), at most
/// three: the closest passages of a `no_direct_answer` refusal.
pub(super) fn closest_passages(
    infos: &[SentPassageInfo],
    judgement: &Judgement,
) -> Vec<SentPassageInfo> {
    let best = judgement.passage_best(infos.len());
    let mut order: Vec<usize> = (0..infos.len()).collect();
    order.sort_by(|&a, &b| {
        let (a_score, b_score) = (best[a].unwrap_or(f32::MIN), best[b].unwrap_or(f32::MIN));
        b_score.total_cmp(&a_score).then(a.cmp(&b))
    });
    order
        .into_iter()
        .take(CLOSEST)
        .map(|i| infos[i].clone())
        .collect()
}

/// How many passages a refusal links as the closest.
pub(super) const CLOSEST: usize = 3;

/// The topic a hit is about: its section label, or its document's title.
fn topic_of(h: &Hit) -> &str {
    if h.chunk.section.is_empty() {
        &h.chunk.title
    } else {
        &h.chunk.section
    }
}

/// Whether a topic label names what the question asks about: the label's
/// content terms are all in the question ("Parental leave" for "What is
/// the parental leave policy?"), or two of them are ("Court leave (jury
/// duty)" for "Do I get paid for jury duty?"). One shared word is not
/// enough: "leave" alone names a dozen topics.
fn topic_names_question(question: &str, topic: &str) -> bool {
    let q = crate::text::terms(question);
    let t = crate::text::terms(topic);
    let shared = t.iter().filter(|w| q.contains(w)).count();
    !t.is_empty() && (shared == t.len() || shared >= 2)
}

/// Section labels of the best hits, deduplicated, at most three.
pub(super) fn nearest_topics(hits: &[Hit]) -> Vec<String> {
    let mut topics: Vec<String> = Vec::new();
    for h in hits {
        let label = topic_of(h).to_string();
        if !label.is_empty() && !topics.contains(&label) {
            topics.push(label);
        }
        if topics.len() == 3 {
            break;
        }
    }
    topics
}
