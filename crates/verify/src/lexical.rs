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

use crate::SupportConfig;

/// The default, deterministic verifier. See the crate documentation for its rules.
#[derive(Debug, Clone, Default)]
pub struct LexicalVerifier {
    /// Thresholds and switches.
    pub config: SupportConfig,
}

impl LexicalVerifier {
    /// A verifier with the given configuration. The embedded WordNet table
    /// is read here, once per process (about 30 ms), so that no check pays
    /// for it.
    pub fn new(config: SupportConfig) -> LexicalVerifier {
        crate::lexicon::lexicon();
        LexicalVerifier { config }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Reason, Verdict, judge_one};

    /// A claim's terms are never capped: a missing code after 69 other words is still seen.
    #[test]
    fn long_claims_keep_every_term() {
        let words: Vec<String> = (0..69)
            .map(|k| format!("kr{}{}x", (b'a' + k / 26) as char, (b'a' + k % 26) as char))
            .collect();
        let passage = format!("{}.", words.join(" "));
        let claim = format!("{} zx42 [1].", words.join(" "));
        let j = judge_one(&LexicalVerifier::default(), None, &[&passage], &claim, &[1]);
        assert_eq!(j.verdict, Verdict::Unsupported);
        assert_eq!(j.reasons, [Reason::Missing(vec!["zx42".into()])]);
    }
}
