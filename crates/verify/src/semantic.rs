//! The semantic verifier: the lexical rules, then sentence similarity from an embedding model
//! where the rules only found words missing.
//!
//! Support stays pure: the model is behind [`SentenceEncoder`], which the caller implements
//! (the engine, with `groundcite_embed::Embedder`). Similarity never overrules a deterministic
//! contradiction (numbers, negation, antonyms, entities): only an `Unsupported` verdict whose
//! reasons are missing words (and, beside them, uncited support), none of them a name or code
//! that no cited passage contains, is reconsidered. It becomes
//! `Supported` when the claim's vector and the vector of one sentence, or of two adjacent
//! sentences, of a cited passage have a cosine of at least
//! [`SupportConfig::overrule_similarity`](crate::SupportConfig::overrule_similarity); the
//! evidence is then that span and the reasons hold the note `paraphrase: 0.87`.

use std::ops::Range;

use groundcite_text as text;

use crate::stage::{
    Inputs, evidence, hundredths, one_per_input, second_stage_verifier, sentences_and_pairs,
    unavailable,
};
use crate::{Judgement, LexicalVerifier, Reason, Verdict, Verifier};

/// Sentence vectors from a model. Implemented outside this crate (the engine wraps
/// `groundcite_embed::Embedder`); tests use a fake.
pub trait SentenceEncoder {
    /// One L2-normalised vector per text, in input order; an error says why the model failed.
    fn encode(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, String>;
}

/// [`LexicalVerifier`], then sentence similarity for what the rules found only words missing
/// from. See the module documentation.
#[derive(Debug, Clone)]
pub struct SemanticVerifier<E> {
    /// The rules that run first (their config holds the similarity threshold).
    pub lexical: LexicalVerifier,
    /// The model.
    pub encoder: E,
}

impl<E: SentenceEncoder> SemanticVerifier<E> {
    /// The `lexical` rules, then sentence similarity from `encoder`.
    pub fn new(lexical: LexicalVerifier, encoder: E) -> SemanticVerifier<E> {
        SemanticVerifier { lexical, encoder }
    }

    /// Reconsiders the judgements that only miss words.
    fn refine(&self, inputs: Inputs<'_>, mut judgements: Vec<Judgement>) -> Vec<Judgement> {
        let (passages, claims) = (inputs.passages, inputs.claims);
        let candidates: Vec<usize> = (0..claims.len())
            .filter(|&i| {
                let j = &judgements[i];
                j.verdict == Verdict::Unsupported
                    && !claims[i].cited.is_empty()
                    && j.reasons.iter().any(|r| matches!(r, Reason::Missing(_)))
                    && j.reasons
                        .iter()
                        .all(|r| matches!(r, Reason::Missing(_) | Reason::UncitedSupport(_)))
                    && !names_a_stranger(j, claims[i].cited, passages)
            })
            .collect();
        if candidates.is_empty() {
            return judgements;
        }
        // The evidence units of every cited passage a candidate needs: each sentence and each
        // pair of adjacent sentences.
        let mut units: Vec<(usize, Range<usize>)> = Vec::new();
        let mut spans = Vec::new();
        let mut needed: Vec<usize> = candidates
            .iter()
            .flat_map(|&i| claims[i].cited.iter().copied())
            .filter(|&k| k >= 1 && k <= passages.len())
            .collect();
        needed.sort_unstable();
        needed.dedup();
        for &k in &needed {
            spans.clear();
            text::sentence_spans(passages[k - 1], &mut spans);
            units.extend(sentences_and_pairs(&spans).map(|range| (k, range)));
        }
        let claim_texts: Vec<String> = candidates
            .iter()
            .map(|&i| inputs.claim_without_markers(i))
            .collect();
        let mut texts: Vec<&str> = claim_texts.iter().map(String::as_str).collect();
        texts.extend(units.iter().map(|(k, r)| &passages[k - 1][r.clone()]));
        let vectors = self
            .encoder
            .encode(&texts)
            .and_then(|v| one_per_input(v, texts.len(), "the model", "vectors", "texts"));
        let vectors = match vectors {
            Ok(v) => v,
            Err(why) => return unavailable(judgements, &candidates, "similarity", &why),
        };
        let threshold = self.lexical.config.overrule_similarity;
        for (c, &i) in candidates.iter().enumerate() {
            let claim = &vectors[c];
            let best = units
                .iter()
                .enumerate()
                .filter(|(_, (k, _))| claims[i].cited.contains(k))
                .map(|(u, unit)| (dot(claim, &vectors[claim_texts.len() + u]), unit))
                .max_by(|a, b| a.0.total_cmp(&b.0));
            if let Some((similarity, (k, range))) = best
                && similarity >= threshold
            {
                let j = &mut judgements[i];
                j.verdict = Verdict::Supported;
                j.reasons = vec![Reason::Paraphrase {
                    similarity: hundredths(similarity),
                }];
                j.suggested.clear();
                j.evidence = Some(evidence(passages, *k, range.clone()));
            }
        }
        judgements
    }
}

impl<E: SentenceEncoder> Verifier for SemanticVerifier<E> {
    second_stage_verifier!(first: lexical, kind: Semantic);
}

/// Whether a missing word is a name or a code (a capital letter or a digit) that no cited
/// passage contains: sentence similarity is blind to who or what a sentence is about ("Cia Berg
/// was inducted" is close to "he was inducted"), so such a claim is never overruled.
fn names_a_stranger(j: &Judgement, cited: &[usize], passages: &[&str]) -> bool {
    j.reasons.iter().any(|r| match r {
        Reason::Missing(items) => items.iter().any(|item| {
            item.chars().any(|c| c.is_uppercase() || c.is_ascii_digit())
                && !cited
                    .iter()
                    .filter_map(|&k| passages.get(k.wrapping_sub(1)))
                    .any(|p| p.contains(item.as_str()))
        }),
        _ => false,
    })
}

/// The cosine of two L2-normalised vectors.
fn dot(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{SupportConfig, judge_one};

    /// A fake model: texts with "same" point one way, texts with "another" a second, the rest a
    /// third.
    struct Fake;

    impl SentenceEncoder for Fake {
        fn encode(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, String> {
            Ok(texts
                .iter()
                .map(|t| {
                    if t.contains("same") {
                        vec![1.0, 0.0, 0.0]
                    } else if t.contains("another") {
                        vec![0.0, 0.0, 1.0]
                    } else {
                        vec![0.0, 1.0, 0.0]
                    }
                })
                .collect())
        }
    }

    struct Broken;

    impl SentenceEncoder for Broken {
        fn encode(&self, _: &[&str]) -> Result<Vec<Vec<f32>>, String> {
            Err("model.safetensors: truncated".into())
        }
    }

    const PASSAGE: &str =
        "Reimbursements settle within 30 days of approval. The same rule covers per diem.";

    /// The judgement on `claim`, citing [`PASSAGE`], with the model `encoder`.
    fn judge<E: SentenceEncoder>(encoder: E, claim: &str) -> Judgement {
        let verifier =
            SemanticVerifier::new(LexicalVerifier::new(SupportConfig::default()), encoder);
        judge_one(&verifier, None, &[PASSAGE], claim, &[1])
    }

    #[test]
    fn similarity_overrules_missing_words_only() {
        // Missing words, similar to a cited sentence: supported, with the note and evidence.
        let j = judge(Fake, "Per diem allowances follow the same timetable [1].");
        assert_eq!(j.verdict, Verdict::Supported);
        assert_eq!(j.reasons, [Reason::Paraphrase { similarity: 1.0 }]);
        let e = j.evidence.unwrap();
        assert_eq!(&PASSAGE[e.start..e.end], "The same rule covers per diem.");
        // Missing words, not similar: unsupported as before.
        let j = judge(Fake, "Per diem allowances follow another timetable [1].");
        assert_eq!(j.verdict, Verdict::Unsupported);
        // A contradiction is never overruled, however similar.
        let j = judge(
            Fake,
            "Reimbursements settle within 14 days of approval, the same [1].",
        );
        assert_eq!(j.verdict, Verdict::Contradicted);
    }

    #[test]
    fn a_name_the_passage_never_mentions_is_not_overruled() {
        let j = judge(
            Fake,
            "Per diem allowances follow the same Zanzibar timetable [1].",
        );
        assert_eq!(j.verdict, Verdict::Unsupported);
    }

    #[test]
    fn a_failing_model_leaves_the_lexical_verdict_and_says_so() {
        let j = judge(Broken, "Per diem allowances follow the same timetable [1].");
        assert_eq!(j.verdict, Verdict::Unsupported);
        assert_eq!(
            j.reasons.last().unwrap().to_string(),
            r#"unchecked: "similarity unavailable: model.safetensors: truncated""#
        );
    }
}
