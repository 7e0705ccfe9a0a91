//! # groundcite-text: the text layer of groundcite
//!
//! Everything groundcite knows about English text, in one place, over borrowed text and with
//! byte offsets into it: tokens ([`tokenize`]), folding ([`fold`]) and stems ([`stem()`]), word
//! classes (stop words, frequent words, negation and restriction cues: [`words`]), quantities
//! ([`quantity`]), the sentences of a passage ([`sentence_spans`]) and citation markers
//! ([`marker`]: `[2]`, `[1][3]`, `[1, 3]`, `[2-4]`; core validates them, a claim's tokenizer
//! skips them).
//!
//! The crate is pure (no I/O, no clock, no async, no global mutable state; the word tables are
//! built once, read-only) and depends on no other groundcite crate: `groundcite-verify` and
//! `groundcite-core` build on it.
//!
//! ```
//! use groundcite_text::{QUANT, quantity, tokenize};
//!
//! let text = "Reimbursements settle within 30 days of approval.";
//! let mut tokens = Vec::new();
//! tokenize(text, &[], false, &mut tokens);
//! assert_eq!(tokens[3].text(text), "30");
//! assert_ne!(tokens[3].flags & QUANT, 0);
//! let mut quantities = Vec::new();
//! quantity::extract(text, &tokens, &mut quantities);
//! assert_eq!(quantities[0].text(text), "30 days");
//! assert_eq!(quantities[0].bound, quantity::Bound::AtMost);
//! ```
//!
//! ## Adding a word
//!
//! Each word list is data: a unit or number word is one line of [`quantity::WORDS`] (the
//! tokenizer flags it and [`quantity::extract`] reads it from that line), a stop word one entry
//! of [`words::STOP_WORDS`].
//!
//! ## Regression tool
//!
//! `bench/src/bin/token_dump.rs` prints every token and sentence span of the handbook, the dev cases,
//! HaluEval and synthetic edge cases: record before a change, diff after it.

pub mod abbrev;
mod fold;
mod key;
pub mod marker;
pub mod quantity;
pub mod segment;
mod sentence;
pub mod stem;
mod token;
pub mod words;

pub use fold::{fold, fold_into};
pub use key::{key, number_key};
pub use marker::{Markers, list_bullet};
pub use sentence::sentence_spans;
pub use stem::{stem, stem_len};
pub use token::{
    CAP, COMMON, DIGIT, EXCL, NEG_CUE, NEG_PREFIX, PREFIX_LEN, QUANT, RE_PREFIX, STOP, TIME, Token,
    tokenize, word_key,
};
pub use words::is_common_word;
