//! Tokens: byte spans of words with their keys and flags.
//!
//! A word is a run of letters and digits, joined across an internal apostrophe ("don't",
//! "Doesn’t"), a decimal point or thousands separator between digits ("3.5", "1,000"), and the
//! hyphen of "non-" ("non-billable"). Its key is the [`key`](crate::key()) of its folded stem;
//! two words match when their keys do.

use crate::fold::fold_into;
use crate::key::{key, number_key};
use crate::quantity::ordinal_digits;
use crate::stem::{letters_stem_len, stem_len};
use crate::words::{self, class_of_key, is_common_stem};

/// The token is a stop word: never salient, never reported.
pub const STOP: u16 = 1;
/// The token is a common English word (paraphrase glue): low salience.
pub const COMMON: u16 = 2;
/// The token is a negation cue ("not", "never", "cannot", "doesn't", ...).
pub const NEG_CUE: u16 = 4;
/// `alt` is the key of the word without a negating prefix ("unpaid" → "paid", "non-billable").
pub const NEG_PREFIX: u16 = 8;
/// The token belongs to a quantity (digits, number word, ordinal, weekday, month name).
pub const QUANT: u16 = 16;
/// The token starts with an uppercase letter.
pub const CAP: u16 = 32;
/// The token is an exclusive-restriction cue ("only", "solely", "exclusively").
pub const EXCL: u16 = 64;
/// The token contains a digit.
pub const DIGIT: u16 = 128;
/// `alt` is the key of the word without a neutral prefix ("rebooking" → "booking").
pub const RE_PREFIX: u16 = 256;
/// The token is a time unit ("day", "weeks"): "a year" is a quantity.
pub const TIME: u16 = 512;

/// Letters compared for a derivational (weak) match.
pub const PREFIX_LEN: usize = 5;

/// A word of a text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Token {
    /// Byte span of the word in its text.
    pub start: u32,
    /// Byte offset just past the word's end in its text.
    pub end: u32,
    /// Key of the folded stem (of a number: of its digits).
    pub key: u64,
    /// Key of the word without its prefix (see `NEG_PREFIX`, `RE_PREFIX`), or 0.
    pub alt: u64,
    /// Key of the first `PREFIX_LEN` letters of a lowercase word of ASCII letters of at least
    /// that length ("extension" and "extended", "agreement" and "agree"), or 0: a weak,
    /// derivational match.
    pub pre: u64,
    /// The flags above.
    pub flags: u16,
}

impl Token {
    /// The word in `text` (the text it was read from).
    pub fn text<'t>(&self, text: &'t str) -> &'t str {
        &text[self.start as usize..self.end as usize]
    }
}

/// The key of a word as written: the key of its folded stem.
pub fn word_key(word: &str) -> u64 {
    let mut folded = String::new();
    fold_into(word, &mut folded);
    key(&folded.as_bytes()[..stem_len(folded.as_bytes())])
}

/// Tokenizes `text` into `out`, skipping words that start inside any of the `skip` byte ranges
/// (citation markers, a list bullet). `skip` is in text order (sorted by start, not
/// overlapping), as markers are parsed: the ranges are walked once, so the cost is linear in
/// the text and the ranges together, however many markers a sentence holds.
///
/// `classify_common`: also flag frequent words (`COMMON`); claims need it, passages do not.
pub fn tokenize(text: &str, skip: &[(usize, usize)], classify_common: bool, out: &mut Vec<Token>) {
    debug_assert!(
        skip.windows(2).all(|w| w[0].1 <= w[1].0),
        "skip ranges must be in text order"
    );
    let mut folded = String::new();
    // The first skip range that does not end at or before `i`.
    let mut next_skip = 0;
    let mut i = 0;
    let bytes = text.as_bytes();
    while let Some(&b) = bytes.get(i) {
        // ASCII needs no decoding.
        if b < 128 && !b.is_ascii_alphanumeric() {
            i += 1;
            continue;
        }
        if b >= 128 {
            let c = text[i..].chars().next().unwrap_or_default();
            if !is_word_char(c) {
                i += c.len_utf8();
                continue;
            }
        }
        let word = word_at(text, i);
        while skip.get(next_skip).is_some_and(|&(_, end)| end <= i) {
            next_skip += 1;
        }
        if skip.get(next_skip).is_none_or(|&(start, _)| start > i) {
            out.push(make_token(text, &word, classify_common, &mut folded));
        }
        i = word.end;
    }
}

/// Letters and digits, except the frequent punctuation tested first.
fn is_word_char(c: char) -> bool {
    !matches!(
        c,
        '’' | '‘' | '“' | '”' | '–' | '—' | '…' | '\u{a0}' | '•' | '·'
    ) && c.is_alphanumeric()
}

fn next_is_alphabetic(text: &str, i: usize) -> bool {
    text[i..].chars().next().is_some_and(char::is_alphabetic)
}

/// A word's span, as the tokenizer found it.
struct Word {
    start: usize,
    end: usize,
    /// After "non-": the offset of the rest of the word in it (else 0).
    non_split: usize,
    /// Only ASCII letters and digits.
    plain: bool,
    /// Has an ASCII digit.
    digit: bool,
    /// Has an ASCII uppercase letter.
    upper: bool,
}

/// The word starting at `start` (a word character).
fn word_at(text: &str, start: usize) -> Word {
    let bytes = text.as_bytes();
    let mut non_split = 0;
    let mut plain = true;
    let mut digit = false;
    let mut upper = false;
    let mut i = start;
    while let Some(&b) = bytes.get(i) {
        // Most bytes of a word are lowercase letters: tested first.
        if b.is_ascii_lowercase() {
            i += 1;
            continue;
        }
        if b.is_ascii_digit() || b.is_ascii_uppercase() {
            digit |= b.is_ascii_digit();
            upper |= b.is_ascii_uppercase();
            i += 1;
            continue;
        }
        // Other ASCII (a space, most punctuation) ends the word without decoding.
        if b < 128 && !matches!(b, b'\'' | b'.' | b',' | b'-') {
            break;
        }
        let Some(c) = text[i..].chars().next() else {
            break;
        };
        let next = i + c.len_utf8();
        let joins = match c {
            c if is_word_char(c) => true,
            '\'' | '’' => next_is_alphabetic(text, next),
            '.' | ',' => {
                bytes[i - 1].is_ascii_digit() && bytes.get(next).is_some_and(u8::is_ascii_digit)
            }
            '-' if text[start..i].eq_ignore_ascii_case("non") && next_is_alphabetic(text, next) => {
                non_split = next - start;
                true
            }
            _ => false,
        };
        if !joins {
            break;
        }
        plain = false;
        i = next;
    }
    Word {
        start,
        end: i,
        non_split,
        plain,
        digit,
        upper,
    }
}

/// "not-for-profit" (a compound) and "No. 1" (a number sign) are not negations.
fn negation_lookalike(folded: &str, word: &str, after: &[u8]) -> bool {
    after.first() == Some(&b'-')
        || (folded == "no" && word.starts_with('N') && after.first() == Some(&b'.'))
}

/// The token of a word (see [`tokenize`]); `buf` is a buffer for its folded form.
fn make_token(text: &str, span: &Word, classify_common: bool, buf: &mut String) -> Token {
    let Word {
        start,
        end,
        non_split,
        plain,
        digit,
        upper,
    } = *span;
    let word = &text[start..end];
    let mut token = Token {
        start: start as u32,
        end: end as u32,
        key: 0,
        alt: 0,
        pre: 0,
        flags: 0,
    };
    let first = text.as_bytes()[start];
    let cap = if first < 128 {
        first.is_ascii_uppercase()
    } else {
        word.chars().next().is_some_and(char::is_uppercase)
    };
    if cap {
        token.flags |= CAP;
    }
    // Most words are lowercase ASCII letters and digits: their own folded form, no copy.
    let folded: &str = if !plain {
        fold_into(word, buf);
        buf
    } else if upper {
        buf.clear();
        buf.push_str(word);
        buf.make_ascii_lowercase();
        buf
    } else {
        word
    };
    if digit {
        token.flags |= DIGIT;
        if word
            .bytes()
            .all(|b| b.is_ascii_digit() || b == b'.' || b == b',')
        {
            token.flags |= QUANT;
            token.key = number_key(word);
        } else {
            if ordinal_digits(folded).is_some() {
                token.flags |= QUANT;
            }
            token.key = key(folded.as_bytes());
        }
        return token;
    }
    let full_key = key(folded.as_bytes());
    let classes = class_of_key(full_key);
    for (class, flag) in [
        (words::EXCLUSIVE, EXCL),
        (words::NUMBER, QUANT),
        (words::TIME_UNIT, TIME),
        (words::STOP, STOP),
    ] {
        if classes & class != 0 {
            token.flags |= flag;
        }
    }
    if classes & words::NEGATION != 0 {
        let after = &text.as_bytes()[end..(end + 2).min(text.len())];
        if !negation_lookalike(folded, word, after) {
            token.flags |= NEG_CUE;
        }
    }
    if classes & words::MONTH != 0 && token.flags & CAP != 0 {
        token.flags |= QUANT;
    }
    let lower = folded.as_bytes();
    if classes & words::STOP != 0 {
        // Function words are never matched as terms: no stem, no prefix.
        token.key = full_key;
        return token;
    }
    // A plain word without digits is all letters.
    let stem_n = if plain {
        letters_stem_len(lower)
    } else {
        stem_len(lower)
    };
    token.key = if stem_n == lower.len() {
        full_key
    } else {
        key(&lower[..stem_n])
    };
    if plain && token.flags & CAP == 0 && lower.len() >= PREFIX_LEN {
        token.pre = key(&lower[..PREFIX_LEN]);
    }
    if classify_common && (classes & words::COMMON != 0 || is_common_stem(folded, stem_n)) {
        token.flags |= COMMON;
    }
    if non_split > 0 {
        token.alt = word_key(&word[non_split..]);
        token.flags |= NEG_PREFIX;
    } else if lower.len() >= 6 {
        for (prefix, min_rest, flag) in [
            ("un", 4, NEG_PREFIX),
            ("in", 6, NEG_PREFIX),
            ("dis", 6, NEG_PREFIX),
            ("re", 4, RE_PREFIX),
        ] {
            if lower.len() >= prefix.len() + min_rest && folded.starts_with(prefix) {
                // The rest is folded already: its key is that of its stem.
                let rest = &lower[prefix.len()..];
                token.alt = key(&rest[..stem_len(rest)]);
                token.flags |= flag;
                break;
            }
        }
    }
    token
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(text: &str) -> Vec<&str> {
        let mut toks = Vec::new();
        tokenize(text, &[], true, &mut toks);
        toks.iter().map(|t| t.text(text)).collect()
    }

    #[test]
    fn joiners() {
        assert_eq!(
            words("Don't pay 1,000.50 for non-billable rock'n'roll, non- or x-y 3,"),
            [
                "Don't",
                "pay",
                "1,000.50",
                "for",
                "non-billable",
                "rock'n'roll",
                "non",
                "or",
                "x",
                "y",
                "3"
            ]
        );
        assert_eq!(words("naïve Café’s — über…"), ["naïve", "Café’s", "über"]);
    }

    #[test]
    fn flags_and_keys() {
        let text = "Not only unpaid Mondays in May, not-for-profit.";
        let mut toks = Vec::new();
        tokenize(text, &[], true, &mut toks);
        let flags: Vec<u16> = toks.iter().map(|t| t.flags).collect();
        assert_eq!(flags[0], CAP | NEG_CUE | STOP);
        assert_eq!(flags[1], EXCL | STOP);
        assert_eq!(flags[2] & NEG_PREFIX, NEG_PREFIX);
        assert_eq!(toks[2].alt, word_key("paid"));
        assert_eq!(flags[3], CAP | QUANT);
        assert_eq!(flags[5], CAP | QUANT | STOP);
        // "not" before a hyphen is part of a compound.
        assert_eq!(flags[6], STOP);
        assert_eq!(toks[3].key, word_key("monday"));
    }
}
