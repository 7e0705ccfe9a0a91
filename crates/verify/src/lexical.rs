//! The default verifier: lexical alignment, quantities, polarity, restriction and entity slots.
//!
//! - [`analysis`]: passages and claims read into sentences, tokens and weighted terms;
//! - [`assess`]: aligning a claim with the passages it cites and judging it;
//! - [`rules`]: the contradiction rules (negation in scope, periods, antonyms, swapped agents,
//!   substituted entities) and the evidence span.

mod analysis;
mod assess;
mod rules;
mod verdict;

use crate::{Claim, Judgement, SupportConfig, Verifier};
use std::ops::Range;

/// The default, deterministic verifier. See the crate documentation for its rules.
#[derive(Debug, Clone, Default)]
pub struct LexicalVerifier {
    /// Thresholds and switches.
    pub config: SupportConfig,
}

impl LexicalVerifier {
    /// A verifier with the given configuration.
    pub fn new(config: SupportConfig) -> LexicalVerifier {
        LexicalVerifier { config }
    }
}

impl Verifier for LexicalVerifier {
    fn verify_until(
        &self,
        question: Option<&str>,
        passages: &[&str],
        claims: &[Claim<'_>],
        markers: Option<&[Vec<Range<usize>>]>,
        stop: &dyn Fn() -> bool,
    ) -> Option<Vec<Judgement>> {
        self.verify_claims(question, passages, claims, markers, stop)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Reason, Verdict};

    /// A claim's terms are never capped: a missing code after 69 other words is still seen.
    #[test]
    fn long_claims_keep_every_term() {
        let words: Vec<String> = (0..69)
            .map(|k| format!("kr{}{}x", (b'a' + k / 26) as char, (b'a' + k % 26) as char))
            .collect();
        let passage = format!("{}.", words.join(" "));
        let claim = format!("{} zx42 [1].", words.join(" "));
        let j = LexicalVerifier::default()
            .verify(
                None,
                &[&passage],
                &[Claim {
                    text: &claim,
                    cited: &[1],
                }],
            )
            .remove(0);
        assert_eq!(j.verdict, Verdict::Unsupported);
        assert_eq!(j.reasons, [Reason::Missing(vec!["zx42".into()])]);
    }
}
