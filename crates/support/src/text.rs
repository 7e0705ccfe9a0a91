//! Tokens, light stemming, word classes and sentence spans, over borrowed text.
//!
//! Nothing here allocates per token: a token is a byte span plus a 64-bit key (a hash of
//! its lowercased, stemmed form), computed in a stack buffer.

/// The token is a stopword: never salient, never reported.
pub(crate) const STOP: u16 = 1;
/// The token is a common English word (paraphrase glue): low salience.
pub(crate) const COMMON: u16 = 2;
/// The token is a negation cue ("not", "never", "cannot", "doesn't", ...).
pub(crate) const NEG_CUE: u16 = 4;
/// `alt` is the key of the word without a negating prefix ("unpaid" -> "paid", "non-billable").
pub(crate) const NEG_PREFIX: u16 = 8;
/// The token belongs to a quantity (digits, number word, ordinal, weekday, month name).
pub(crate) const QUANT: u16 = 16;
/// The token starts with an uppercase letter.
pub(crate) const CAP: u16 = 32;
/// The token is an exclusive-restriction cue ("only", "solely", "exclusively").
pub(crate) const EXCL: u16 = 64;
/// The token contains a digit.
pub(crate) const DIGIT: u16 = 128;
/// `alt` is the key of the word without a neutral prefix ("rebooking" -> "booking").
pub(crate) const RE_PREFIX: u16 = 256;
/// The token is a time unit ("day", "weeks"): "a year" is a quantity.
pub(crate) const TIME: u16 = 512;

#[derive(Debug, Clone, Copy)]
pub(crate) struct Token {
    pub start: u32,
    pub end: u32,
    pub key: u64,
    /// Key of the word without its prefix (see `NEG_PREFIX`, `RE_PREFIX`), or 0.
    pub alt: u64,
    /// Key of the first `PREFIX_LEN` letters of a lowercase word of at least that length
    /// ("extension" and "extended", "agreement" and "agree"), or 0: a weak, derivational match.
    pub pre: u64,
    pub flags: u16,
}

/// Letters compared for a derivational (weak) match.
pub(crate) const PREFIX_LEN: usize = 5;

impl Token {
    #[inline]
    pub fn text<'t>(&self, text: &'t str) -> &'t str {
        &text[self.start as usize..self.end as usize]
    }
}

/// Hash of a short byte string, 8 bytes per step (words are short; a per-byte hash such as
/// FNV is a serial multiply chain).
#[inline]
pub(crate) fn hash_bytes(bytes: &[u8]) -> u64 {
    if bytes.len() <= 8 {
        // Most words: one multiply.
        return hash_short(load_le(bytes), bytes.len());
    }
    hash_long(bytes)
}

const K: u64 = 0x9E37_79B9_7F4A_7C15;

/// `hash_bytes` of at most 8 bytes, given as a little-endian word (zero above `len`).
#[inline]
fn hash_short(w: u64, len: usize) -> u64 {
    let h = (w ^ ((len as u64) << 59) ^ 0x5bd1_e995).wrapping_mul(K);
    (h ^ (h >> 31)) | 1
}

/// The bytes (at most 8) as a little-endian word, zero above their length: a few overlapping
/// loads instead of a loop.
#[inline]
fn load_le(b: &[u8]) -> u64 {
    let n = b.len();
    debug_assert!(n <= 8);
    if n >= 4 {
        let lo = u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as u64;
        let hi = u32::from_le_bytes([b[n - 4], b[n - 3], b[n - 2], b[n - 1]]) as u64;
        lo | (hi << (8 * (n - 4)))
    } else if n > 0 {
        (b[0] as u64) | ((b[n / 2] as u64) << (8 * (n / 2))) | ((b[n - 1] as u64) << (8 * (n - 1)))
    } else {
        0
    }
}

#[inline(never)]
fn hash_long(bytes: &[u8]) -> u64 {
    let mut h = (bytes.len() as u64 + 1).wrapping_mul(K);
    let mut chunks = bytes.chunks_exact(8);
    for c in &mut chunks {
        let w = u64::from_le_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]]);
        h = (h ^ w).wrapping_mul(K).rotate_left(29);
    }
    let rem = chunks.remainder();
    if !rem.is_empty() {
        h = (h ^ load_le(rem)).wrapping_mul(K).rotate_left(29);
    }
    h ^= h >> 32;
    h = h.wrapping_mul(K);
    h ^= h >> 29;
    // Never 0: 0 means "no key".
    h | 1
}

const BUF: usize = 48;

/// A lowercased word in a stack buffer (apostrophes removed, possessive stripped).
pub(crate) struct Lower {
    buf: [u8; BUF],
    len: usize,
}

impl Lower {
    pub fn new(word: &str) -> Lower {
        let mut buf = [0u8; BUF];
        let mut len = 0;
        let bytes = word.as_bytes();
        if bytes.len() <= 8 {
            // Letters and digits only (most words): lowercase eight bytes at once.
            let len = bytes.len();
            let w = load_le(bytes);
            let mask = if len == 8 {
                !0u64
            } else {
                (1u64 << (8 * len)) - 1
            };
            if alnum_bits(w) == 0x8080_8080_8080_8080 & mask {
                buf[..8].copy_from_slice(&(w | (0x2020_2020_2020_2020 & mask)).to_le_bytes());
                return Lower { buf, len };
            }
        }
        if bytes.is_ascii() {
            let bytes = if bytes.len() > 2 && bytes.ends_with(b"'s") {
                &bytes[..bytes.len() - 2]
            } else {
                bytes
            };
            for &b in bytes {
                if b != b'\'' && b != b'-' && len < BUF {
                    buf[len] = b.to_ascii_lowercase();
                    len += 1;
                }
            }
            return Lower { buf, len };
        }
        // Strip a possessive "'s" / "’s".
        let word = if bytes.len() > 2 && (word.ends_with("'s") || word.ends_with("’s")) {
            &word[..word.len() - if word.ends_with("'s") { 2 } else { 4 }]
        } else {
            word
        };
        // By bytes: ASCII and the apostrophe ’ without decoding a char.
        let wb = word.as_bytes();
        let mut k = 0;
        while k < wb.len() {
            let b = wb[k];
            if b < 128 {
                if b != b'\'' && b != b'-' && len < BUF {
                    buf[len] = b.to_ascii_lowercase();
                    len += 1;
                }
                k += 1;
                continue;
            }
            if wb[k..].starts_with("’".as_bytes()) {
                k += 3;
                continue;
            }
            let Some(ch) = word[k..].chars().next() else {
                break;
            };
            k += ch.len_utf8();
            for lc in ch.to_lowercase() {
                let mut tmp = [0u8; 4];
                let s = lc.encode_utf8(&mut tmp);
                if len + s.len() <= BUF {
                    buf[len..len + s.len()].copy_from_slice(s.as_bytes());
                    len += s.len();
                }
            }
        }
        Lower { buf, len }
    }
    #[inline]
    pub fn as_str(&self) -> &str {
        // Only whole UTF-8 sequences are ever copied in.
        std::str::from_utf8(&self.buf[..self.len]).unwrap_or("")
    }
    #[inline]
    pub fn bytes(&self) -> &[u8] {
        &self.buf[..self.len]
    }
}

/// Light suffix stripping: plurals, -ed, -ing, -ly, a final -e. Returns the stem length.
pub(crate) fn stem_len(w: &[u8]) -> usize {
    if w.is_empty() || !w.iter().all(|b| b.is_ascii_alphabetic()) {
        return w.len();
    }
    stem_len_alpha(w)
}

/// `stem_len` for a non-empty word of ASCII letters.
#[inline]
fn stem_len_alpha(w: &[u8]) -> usize {
    // Every rule below needs one of these last letters ("-ly" and "-y" end in y).
    if !matches!(w.last(), Some(b's' | b'd' | b'g' | b'y' | b'e')) {
        return w.len();
    }
    stem_len_suffix(w)
}

/// `stem_len_alpha` for a word ending in s, d, g, y or e.
fn stem_len_suffix(w: &[u8]) -> usize {
    let mut n = w.len();
    let ends = |n: usize, s: &[u8]| n >= s.len() && &w[n - s.len()..n] == s;
    let mut y_end = false;
    if n > 4 && ends(n, b"ies") {
        n -= 3;
        y_end = true;
    } else if ends(n, b"sses") {
        n -= 2;
    } else if n > 3 && ends(n, b"s") && !ends(n, b"ss") && !ends(n, b"us") && !ends(n, b"is") {
        n -= 1;
    }
    if !y_end {
        let before = n;
        if n > 5 && ends(n, b"ing") {
            n -= 3;
        } else if n > 4 && ends(n, b"ed") && !ends(n, b"eed") {
            n -= 2;
        }
        if n != before && n >= 2 && w[n - 1] == w[n - 2] && !matches!(w[n - 1], b'l' | b's' | b'z')
        {
            n -= 1;
        }
        if n > 4 && ends(n, b"ly") {
            n -= 2;
        }
    }
    if n > 3 && w[n - 1] == b'e' {
        n -= 1;
    }
    if y_end {
        // "policies" and "policy" share the stem "polic".
    } else if n > 3 && w[n - 1] == b'y' {
        n -= 1;
    }
    n
}

/// Hash of the stem and of the whole lowercased word, and the stem length.
pub(crate) fn stem_and_full_key(lower: &[u8]) -> (u64, u64, usize) {
    let n = stem_len(lower);
    (hash_bytes(&lower[..n]), hash_bytes(lower), n)
}

/// Whether a word is a frequent English word (see `COMMON_WORDS`), as written or by stem.
pub(crate) fn is_common_word(word: &str) -> bool {
    let lower = Lower::new(word);
    let (_, full, n) = stem_and_full_key(lower.bytes());
    class(full) & W_COMMON != 0 || is_common_stem(&lower, n)
}

/// The key of a word: hash of its lowercased stem.
pub(crate) fn word_key(lower: &[u8]) -> u64 {
    hash_bytes(&lower[..stem_len(lower)])
}

/// Key of a number token: its digits and decimal point, without thousands separators.
pub(crate) fn number_key(word: &str) -> u64 {
    let mut buf = [0u8; BUF];
    let mut len = 0;
    for &b in word.as_bytes() {
        if b != b',' && len < BUF {
            buf[len] = b.to_ascii_lowercase();
            len += 1;
        }
    }
    hash_bytes(&buf[..len])
}

fn is_word_char(c: char) -> bool {
    // Frequent punctuation first (none is alphanumeric): skips two Unicode table lookups.
    if matches!(
        c,
        '’' | '‘' | '“' | '”' | '–' | '—' | '…' | '\u{a0}' | '•' | '·'
    ) {
        return false;
    }
    c.is_alphanumeric()
}

/// What the tokenizer learned about a word while scanning it (ASCII fast path).
struct Scan {
    lower: Lower,
    /// Hash of the lowercased bytes.
    hash: u64,
    /// The first 8 lowercased bytes as a little-endian word, zero above the length (plain).
    w0: u64,
    has_digit: bool,
    /// Only ASCII letters and digits.
    plain: bool,
    /// Only digits, with `.`/`,` joiners.
    numeric: bool,
}

/// The high bit of each byte of `w` that is an ASCII letter or digit.
#[inline]
fn alnum_bits(w: u64) -> u64 {
    let x = w & 0x7f7f_7f7f_7f7f_7f7f;
    let l = x | 0x2020_2020_2020_2020;
    // Per byte: l in 0x61..=0x7a (a letter), x in 0x30..=0x39 (a digit); no sum carries into
    // the next byte.
    let letter = (l + 0x1f1f_1f1f_1f1f_1f1f) & !(l + 0x0505_0505_0505_0505);
    let digit = (x + 0x5050_5050_5050_5050) & !(x + 0x4646_4646_4646_4646);
    (letter | digit) & !w & 0x8080_8080_8080_8080
}

/// ASCII letters and digits.
static ALNUM: [bool; 256] = {
    let mut t = [false; 256];
    let mut b = 0;
    while b < 256 {
        t[b] = (b as u8).is_ascii_alphanumeric();
        b += 1;
    }
    t
};

#[inline]
fn char_at(text: &str, i: usize) -> Option<char> {
    let b = *text.as_bytes().get(i)?;
    if b < 128 {
        Some(b as char)
    } else {
        text[i..].chars().next()
    }
}

/// The high bit of every byte.
#[cfg(any(test, not(target_arch = "x86_64")))]
const HI: u64 = 0x8080_8080_8080_8080;

/// The 8 bytes at `i` as a little-endian word (`i + 8 <= bytes.len()`).
#[inline(always)]
fn load8(bytes: &[u8], i: usize) -> u64 {
    u64::from_le_bytes(bytes[i..i + 8].try_into().unwrap_or([0; 8]))
}

/// A mask of the low `len` bytes of a word (`len` in 1..=8).
#[inline(always)]
fn low_bytes(len: usize) -> u64 {
    u64::MAX >> (64 - 8 * len)
}

#[inline]
fn in_skip(skip: &[(usize, usize)], start: usize) -> bool {
    !skip.is_empty() && skip.iter().any(|&(a, b)| start >= a && start < b)
}

/// Tokenize `text`, skipping tokens that start inside any of the `skip` byte ranges.
///
/// `classify_common`: also flag frequent words (`COMMON`); needed for claims, not for passages.
pub(crate) fn tokenize(
    text: &str,
    skip: &[(usize, usize)],
    classify_common: bool,
    out: &mut Vec<Token>,
) {
    let bytes = text.as_bytes();
    let n = bytes.len();
    let words: &WordTable = &WORDS;
    let mut scan = Scan {
        lower: Lower {
            buf: [0; BUF],
            len: 0,
        },
        hash: 0,
        w0: 0,
        has_digit: false,
        plain: true,
        numeric: true,
    };
    // The byte classes of `base..base + 64`, classified once: word starts and ends are found
    // from bits, not byte by byte.
    let mut base = 0usize;
    let mut block = block_at(bytes, 0);
    let mut i = 0usize;
    while i < n {
        let off = i - base;
        // Word starts (an ASCII letter or digit, or a non-ASCII byte) at or after `i`.
        let starts = if off < 64 { block.word >> off } else { 0 };
        if starts == 0 {
            // Only gaps up to the end of the block (or `i` is past it).
            base = if off < 64 { base + 64 } else { i };
            i = base;
            if i < n {
                block = block_at(bytes, base);
            }
            continue;
        }
        let start = i + starts.trailing_zeros() as usize;
        let s = start - base;
        // The run of ASCII letters and digits from `start` ends at the next other byte (`len`
        // is 0 for a non-ASCII start, 64 if the run continues past the block).
        let ends = !block.alnum >> s;
        let len = ends.trailing_zeros() as usize;
        if len == 0 {
            match text[start..].chars().next() {
                Some(c) if is_word_char(c) => {}
                Some(c) => {
                    i = start + c.len_utf8();
                    continue;
                }
                None => break,
            }
            i = general_word(text, start, skip, classify_common, out, &mut scan, words);
            continue;
        }
        if ends == 0 {
            if s == 0 {
                // 64 letters or more.
                i = general_word(text, start, skip, classify_common, out, &mut scan, words);
            } else {
                // The run continues past the block: classify from its start.
                base = start;
                block = block_at(bytes, base);
                i = start;
            }
            continue;
        }
        // Unless the byte at `end` is a joiner (apostrophe, decimal point, thousands
        // separator, hyphen) or a non-ASCII byte continuing the word, the word is plain.
        let end = start + len;
        if block.special >> (s + len) & 1 != 0 && may_join(bytes, start, end) {
            i = general_word(text, start, skip, classify_common, out, &mut scan, words);
            continue;
        }
        // The byte at `end` (if any) is an ASCII gap.
        i = end;
        if in_skip(skip, start) {
            continue;
        }
        if len <= 8 {
            let raw = if start + 8 <= n {
                load8(bytes, start)
            } else {
                load_le(&bytes[start..end])
            };
            out.push(short_token::<false>(
                text,
                start,
                end,
                raw,
                0,
                classify_common,
                words,
            ));
        } else if len <= 16 {
            out.push(long_token(text, start, end, classify_common, words));
        } else {
            general_word(text, start, skip, classify_common, out, &mut scan, words);
        }
    }
}

/// Byte classes of 64 bytes of text, one bit per byte (bit `k` is byte `base + k`).
#[derive(Clone, Copy)]
struct Block {
    /// ASCII letters and digits.
    alnum: u64,
    /// ASCII letters and digits, and non-ASCII bytes: where a word may start.
    word: u64,
    /// Bytes that may continue a word after an ASCII run (see `may_join`): non-ASCII bytes and
    /// `'`, `,`, `-`, `.`.
    special: u64,
}

/// The 64 bytes at `base`, or, near the end of the text, those left copied into `buf` with
/// zero bytes after them (a zero byte is in no class: a gap, never a stop).
#[inline(always)]
fn block_bytes<'a>(bytes: &'a [u8], base: usize, buf: &'a mut [u8; 64]) -> &'a [u8; 64] {
    match bytes.get(base..base + 64).map(<&[u8; 64]>::try_from) {
        Some(Ok(b)) => b,
        _ => {
            let rest = bytes.get(base..).unwrap_or_default();
            buf[..rest.len()].copy_from_slice(rest);
            buf
        }
    }
}

/// The classes of the 64 bytes at `base`; bytes past the end of the text count as gaps.
#[inline]
fn block_at(bytes: &[u8], base: usize) -> Block {
    classify_block(block_bytes(bytes, base, &mut [0; 64]))
}

#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn classify_block(b: &[u8; 64]) -> Block {
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU has AVX2 (checked just above).
        unsafe { classify_block_avx2(b) }
    } else {
        // SAFETY: SSE2 is part of the x86_64 baseline: every x86_64 target enables it.
        unsafe { classify_block_sse2(b) }
    }
}

/// 32 bytes in an AVX2 register, from safe integer loads.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
#[inline]
fn lanes_avx2(c: &[u8; 32]) -> std::arch::x86_64::__m256i {
    let (lo, hi) = c.split_at(16);
    let lo = u128::from_le_bytes(lo.try_into().unwrap_or_default());
    let hi = u128::from_le_bytes(hi.try_into().unwrap_or_default());
    std::arch::x86_64::_mm256_set_epi64x((hi >> 64) as i64, hi as i64, (lo >> 64) as i64, lo as i64)
}

/// 16 bytes in an SSE2 register, from a safe integer load.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "sse2")]
#[inline]
fn lanes_sse2(c: &[u8; 16]) -> std::arch::x86_64::__m128i {
    let x = u128::from_le_bytes(*c);
    std::arch::x86_64::_mm_set_epi64x((x >> 64) as i64, x as i64)
}

/// `classify_block` with AVX2 compares, 32 bytes per step (`classify_block_sse2`'s rules).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn classify_block_avx2(b: &[u8; 64]) -> Block {
    use std::arch::x86_64::{
        _mm256_add_epi8, _mm256_cmpeq_epi8, _mm256_cmpgt_epi8, _mm256_movemask_epi8,
        _mm256_or_si256, _mm256_set1_epi8,
    };
    let (chunks, _) = b.as_chunks::<32>();
    let (mut alnum, mut high, mut join) = (0u64, 0u64, 0u64);
    for (k, c) in chunks.iter().enumerate() {
        let v = lanes_avx2(c);
        let lower = _mm256_or_si256(v, _mm256_set1_epi8(0x20));
        let letter = _mm256_cmpgt_epi8(
            _mm256_set1_epi8((0x80u8 + 26) as i8),
            _mm256_add_epi8(lower, _mm256_set1_epi8((0x80u8 - 0x61) as i8)),
        );
        let digit = _mm256_cmpgt_epi8(
            _mm256_set1_epi8((0x80u8 + 10) as i8),
            _mm256_add_epi8(v, _mm256_set1_epi8((0x80u8 - 0x30) as i8)),
        );
        let joiner = _mm256_or_si256(
            _mm256_cmpgt_epi8(
                _mm256_set1_epi8((0x80u8 + 3) as i8),
                _mm256_add_epi8(v, _mm256_set1_epi8((0x80u8 - 0x2c) as i8)),
            ),
            _mm256_cmpeq_epi8(v, _mm256_set1_epi8(b'\'' as i8)),
        );
        let shift = 32 * k;
        alnum |= (_mm256_movemask_epi8(_mm256_or_si256(letter, digit)) as u32 as u64) << shift;
        high |= (_mm256_movemask_epi8(v) as u32 as u64) << shift;
        join |= (_mm256_movemask_epi8(joiner) as u32 as u64) << shift;
    }
    Block {
        alnum,
        word: alnum | high,
        special: high | join,
    }
}

/// `classify_block` with SSE2 compares, 16 bytes per step.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "sse2")]
fn classify_block_sse2(b: &[u8; 64]) -> Block {
    use std::arch::x86_64::{
        _mm_add_epi8, _mm_cmpeq_epi8, _mm_cmpgt_epi8, _mm_movemask_epi8, _mm_or_si128,
        _mm_set1_epi8,
    };
    let (chunks, _) = b.as_chunks::<16>();
    let (mut alnum, mut high, mut join) = (0u64, 0u64, 0u64);
    for (k, c) in chunks.iter().enumerate() {
        let v = lanes_sse2(c);
        // Signed byte compares; `x + (0x80 - lo) < 0x80 + count` tests `x` in `lo..lo + count`
        // (non-ASCII bytes never land in the range).
        let lower = _mm_or_si128(v, _mm_set1_epi8(0x20));
        let letter = _mm_cmpgt_epi8(
            _mm_set1_epi8((0x80u8 + 26) as i8),
            _mm_add_epi8(lower, _mm_set1_epi8((0x80u8 - 0x61) as i8)),
        );
        let digit = _mm_cmpgt_epi8(
            _mm_set1_epi8((0x80u8 + 10) as i8),
            _mm_add_epi8(v, _mm_set1_epi8((0x80u8 - 0x30) as i8)),
        );
        // `,`, `-`, `.` are 0x2c..=0x2e; `'` is 0x27.
        let joiner = _mm_or_si128(
            _mm_cmpgt_epi8(
                _mm_set1_epi8((0x80u8 + 3) as i8),
                _mm_add_epi8(v, _mm_set1_epi8((0x80u8 - 0x2c) as i8)),
            ),
            _mm_cmpeq_epi8(v, _mm_set1_epi8(b'\'' as i8)),
        );
        let shift = 16 * k;
        alnum |= (_mm_movemask_epi8(_mm_or_si128(letter, digit)) as u32 as u64) << shift;
        high |= (_mm_movemask_epi8(v) as u32 as u64) << shift;
        join |= (_mm_movemask_epi8(joiner) as u32 as u64) << shift;
    }
    Block {
        alnum,
        word: alnum | high,
        special: high | join,
    }
}

#[cfg(not(target_arch = "x86_64"))]
#[inline(always)]
fn classify_block(b: &[u8; 64]) -> Block {
    classify_block_swar(b)
}

/// `classify_block` without SIMD instructions, 8 bytes per step.
#[cfg(any(test, not(target_arch = "x86_64")))]
fn classify_block_swar(b: &[u8; 64]) -> Block {
    // The high bit of each byte, gathered into the low 8 bits.
    fn pack(x: u64) -> u64 {
        ((x & HI).wrapping_mul(0x0002_0408_1020_4081)) >> 56
    }
    let (chunks, _) = b.as_chunks::<8>();
    let (mut alnum, mut high, mut join) = (0u64, 0u64, 0u64);
    for (k, c) in chunks.iter().enumerate() {
        let w = u64::from_le_bytes(*c);
        let x = w & 0x7f7f_7f7f_7f7f_7f7f;
        // Per byte: x in 0x2c..=0x2e, x == 0x27 (no sum carries into the next byte).
        let punct = (x + 0x5454_5454_5454_5454) & !(x + 0x5151_5151_5151_5151);
        let q = x ^ 0x2727_2727_2727_2727;
        let quote = !((q + 0x7f7f_7f7f_7f7f_7f7f) | q);
        alnum |= pack(alnum_bits(w)) << (8 * k);
        high |= pack(w) << (8 * k);
        join |= pack((punct | quote) & !w) << (8 * k);
    }
    Block {
        alnum,
        word: alnum | high,
        special: high | join,
    }
}

/// Whether the byte at `i` (after the ASCII run `start..i`) may continue the word: if not,
/// the general rules end the word at `i` too (a superset of the joiners of `general_word`).
#[inline]
fn may_join(bytes: &[u8], start: usize, i: usize) -> bool {
    let next = bytes.get(i + 1).copied().unwrap_or(b' ');
    match bytes[i] {
        b'\'' => next.is_ascii_alphabetic() || next >= 128,
        b'.' | b',' => bytes[i - 1].is_ascii_digit() && next.is_ascii_digit(),
        b'-' => i - start == 3,
        b => b >= 128,
    }
}

/// The word starting at `i` (a word character), by the general rules (joiners, non-ASCII
/// letters, long words): pushes its token (unless skipped) and returns where scanning resumes.
#[inline(never)]
fn general_word(
    text: &str,
    mut i: usize,
    skip: &[(usize, usize)],
    classify_common: bool,
    out: &mut Vec<Token>,
    scan: &mut Scan,
    words: &WordTable,
) -> usize {
    let bytes = text.as_bytes();
    let n = bytes.len();
    {
        let start = i;
        let mut plain = true;
        let mut neg_prefix_split = 0usize;
        loop {
            while i < n && ALNUM[bytes[i] as usize] {
                i += 1;
            }
            if i >= n {
                break;
            }
            let b = bytes[i];
            if b < 128 {
                // Internal apostrophe, decimal point or thousands separator between digits,
                // or the hyphen of "non-".
                let joins = i > start
                    && match b {
                        b'\'' => char_at(text, i + 1).is_some_and(|c| c.is_alphabetic()),
                        b'.' | b',' => {
                            bytes[i - 1].is_ascii_digit()
                                && bytes.get(i + 1).is_some_and(|c| c.is_ascii_digit())
                        }
                        b'-' => {
                            text[start..i].eq_ignore_ascii_case("non")
                                && char_at(text, i + 1).is_some_and(|c| c.is_alphabetic())
                        }
                        _ => false,
                    };
                if !joins {
                    break;
                }
                if b == b'-' {
                    neg_prefix_split = i + 1 - start;
                }
                plain = false;
                i += 1;
            } else {
                let Some(c) = text[i..].chars().next() else {
                    break;
                };
                let l = c.len_utf8();
                if is_word_char(c)
                    || (c == '’' && char_at(text, i + l).is_some_and(|c| c.is_alphabetic()))
                {
                    plain = false;
                    i += l;
                } else {
                    break;
                }
            }
        }
        let end = i;
        if end == start {
            return i + 1;
        }
        if !skip.is_empty() && skip.iter().any(|&(a, b)| start >= a && start < b) {
            return i;
        }
        if plain && end - start <= 8 {
            let raw = load_le(&bytes[start..end]);
            out.push(short_token::<false>(
                text,
                start,
                end,
                raw,
                0,
                classify_common,
                words,
            ));
            return i;
        }
        if plain && end - start <= 16 {
            out.push(long_token(text, start, end, classify_common, words));
            return i;
        }
        let word = &text[start..end];
        // One pass over the word: lowercase, hash, digit flags (locals stay in registers).
        let wb = word.as_bytes();
        let mut hash = 0;
        let mut w0 = 0;
        let mut has_digit = false;
        let mut numeric = true;
        if plain {
            // ASCII letters and digits only: `| 0x20` lowercases a letter and keeps a digit;
            // a digit is the byte without bit 0x40. Eight bytes per step.
            let len = wb.len().min(BUF);
            let mut k = 0;
            let mut digits = 0u64;
            let mut letters = 0u64;
            while k < len {
                let m = (len - k).min(8);
                let mask = if m == 8 { !0u64 } else { (1u64 << (8 * m)) - 1 };
                let w = load_le(&wb[k..k + m]) | (0x2020_2020_2020_2020 & mask);
                if k == 0 {
                    w0 = w;
                }
                scan.lower.buf[k..k + 8].copy_from_slice(&w.to_le_bytes());
                digits |= !w & 0x4040_4040_4040_4040 & mask;
                letters |= w & 0x4040_4040_4040_4040 & mask;
                k += 8;
            }
            has_digit = digits != 0;
            numeric = letters == 0;
            scan.lower.len = len;
            hash = if len <= 8 {
                hash_short(w0, len)
            } else {
                hash_bytes(&scan.lower.buf[..len])
            };
        } else {
            for &b in wb {
                let digit = b.is_ascii_digit();
                has_digit |= digit;
                numeric &= digit || b == b'.' || b == b',';
            }
        }
        scan.hash = hash;
        scan.w0 = w0;
        scan.has_digit = has_digit;
        scan.numeric = numeric;
        scan.plain = plain;
        out.push(make_token(
            word,
            start,
            end,
            neg_prefix_split,
            &bytes[end..(end + 2).min(n)],
            classify_common,
            scan,
        ));
        i
    }
}

/// `hash_bytes` of the first `n` (1..=16) bytes of a word given as two little-endian words
/// (zero above the word's length).
#[inline(always)]
fn hash_prefix(w0: u64, w1: u64, n: usize) -> u64 {
    if n < 8 {
        hash_short(w0 & ((1u64 << (8 * n)) - 1), n)
    } else if n == 8 {
        hash_short(w0, 8)
    } else {
        // `hash_long` of the two words.
        let mut h = (n as u64 + 1).wrapping_mul(K);
        h = (h ^ w0).wrapping_mul(K).rotate_left(29);
        h = (h ^ (w1 & low_bytes(n - 8)))
            .wrapping_mul(K)
            .rotate_left(29);
        h ^= h >> 32;
        h = h.wrapping_mul(K);
        h ^= h >> 29;
        h | 1
    }
}

/// `stem_len_alpha` of a lowercase word of ASCII letters, given by `tail(n)`: its bytes
/// `n - 4..n` as a little-endian `u32` (zero before the word's start), for `n` from 1 to its
/// length `len`. The suffix tests become compares of one register.
#[inline(always)]
fn stem_len_tail(len: usize, tail: impl Fn(usize) -> u32) -> usize {
    // `t` ends with the (at most 4-byte) suffix `s`.
    const fn suffix(s: &[u8]) -> u32 {
        let mut v = 0u32;
        let mut k = 0;
        while k < s.len() {
            v |= (s[k] as u32) << (8 * k);
            k += 1;
        }
        v
    }
    #[inline(always)]
    fn ends(t: u32, s: &[u8]) -> bool {
        t >> (8 * (4 - s.len())) == suffix(s)
    }
    let mut n = len;
    let t = tail(n);
    if !matches!((t >> 24) as u8, b's' | b'd' | b'g' | b'y' | b'e') {
        return n;
    }
    let mut y_end = false;
    if n > 4 && ends(t, b"ies") {
        n -= 3;
        y_end = true;
    } else if ends(t, b"sses") {
        n -= 2;
    } else if n > 3 && ends(t, b"s") && !ends(t, b"ss") && !ends(t, b"us") && !ends(t, b"is") {
        n -= 1;
    }
    if !y_end {
        let before = n;
        let t = tail(n);
        if n > 5 && ends(t, b"ing") {
            n -= 3;
        } else if n > 4 && ends(t, b"ed") && !ends(t, b"eed") {
            n -= 2;
        }
        if n != before {
            let t = tail(n);
            let last = (t >> 24) as u8;
            if n >= 2 && last == (t >> 16) as u8 && !matches!(last, b'l' | b's' | b'z') {
                n -= 1;
            }
        }
        if n > 4 && ends(tail(n), b"ly") {
            n -= 2;
        }
    }
    if n > 3 && (tail(n) >> 24) as u8 == b'e' {
        n -= 1;
    }
    if !y_end && n > 3 && (tail(n) >> 24) as u8 == b'y' {
        n -= 1;
    }
    n
}

/// `stem_len_alpha` of a lowercase word of 1 to 8 ASCII letters, as a little-endian word.
#[inline(always)]
fn stem_len_word(w: u64, len: usize) -> usize {
    stem_len_tail(len, |n| ((w << (64 - 8 * n)) >> 32) as u32)
}

/// `stem_len_alpha` of a lowercase word of 9 to 16 ASCII letters, as two little-endian words.
#[inline(always)]
fn stem_len_word2(w0: u64, w1: u64, len: usize) -> usize {
    let w = (w0 as u128) | ((w1 as u128) << 64);
    stem_len_tail(len, |n| ((w << (128 - 8 * n)) >> 96) as u32)
}

/// `make_token` for a plain word (ASCII letters and digits) of at most 16 bytes, from two
/// 8-byte words: the same token, without the general path's buffers.
///
/// `raw0`, `raw1`: the word's bytes as two little-endian words (`raw0` may hold more bytes
/// above a short word's length, `raw1` is zero above it). `LONG`: the word has 9 to 16 bytes
/// (else at most 8, and `raw1` is 0).
#[inline(always)]
fn short_token<const LONG: bool>(
    text: &str,
    start: usize,
    end: usize,
    raw0: u64,
    raw1: u64,
    classify_common: bool,
    words: &WordTable,
) -> Token {
    const SET20: u64 = 0x2020_2020_2020_2020;
    const SET40: u64 = 0x4040_4040_4040_4040;
    let bytes = text.as_bytes();
    let len = end - start;
    debug_assert!((1..=16).contains(&len) && LONG == (len > 8));
    let mask0 = if LONG { !0u64 } else { low_bytes(len) };
    let mask1 = if LONG { low_bytes(len - 8) } else { 0 };
    let raw0 = raw0 & mask0;
    // `| 0x20` lowercases a letter and keeps a digit; a letter has bit 0x40, a digit not.
    let w0 = raw0 | (SET20 & mask0);
    let w1 = raw1 | (SET20 & mask1);
    let letter_bits = (w0 & SET40) | ((w1 & SET40) << 1);
    let all_letters = (SET40 & mask0) | ((SET40 & mask1) << 1);
    let has_digit = letter_bits != all_letters;
    let full_key = if LONG {
        hash_prefix(w0, w1, len)
    } else {
        hash_short(w0, len)
    };
    let mut lower = [0u8; 16];
    lower[..8].copy_from_slice(&w0.to_le_bytes());
    if LONG {
        lower[8..].copy_from_slice(&w1.to_le_bytes());
    }
    let lb = &lower[..len];
    let mut flags = 0u16;
    if (raw0 as u8).is_ascii_uppercase() {
        flags |= CAP;
    }
    let token = |key: u64, alt: u64, pre: u64, flags: u16| Token {
        start: start as u32,
        end: end as u32,
        key,
        alt,
        pre,
        flags,
    };
    if has_digit {
        flags |= DIGIT;
        if letter_bits == 0 {
            // All digits: `number_key` of the word is the hash of its bytes.
            flags |= QUANT;
        } else if crate::quantity::ordinal_digits(std::str::from_utf8(lb).unwrap_or("")).is_some() {
            flags |= QUANT;
        }
        return token(full_key, 0, 0, flags);
    }
    let c = words.get(full_key);
    if c != 0 {
        flags |= CLASS_FLAGS[c as usize];
        if c & (W_NEG | W_MONTH) != 0 {
            if c & W_NEG != 0 {
                let after = &bytes[end..(end + 2).min(bytes.len())];
                if !negation_lookalike(lb, &text[start..end], after) {
                    flags |= NEG_CUE;
                }
            }
            if flags & CAP != 0 && c & W_MONTH != 0 {
                flags |= QUANT;
            }
        }
        if c & W_STOP != 0 {
            // Function words are never matched as terms: no stem, no prefix.
            return token(full_key, 0, 0, flags);
        }
    }
    let stem_n = if LONG {
        stem_len_word2(w0, w1, len)
    } else {
        stem_len_word(w0, len)
    };
    let pre = if flags & CAP == 0 && len >= PREFIX_LEN {
        hash_short(w0 & 0xff_ffff_ffff, PREFIX_LEN)
    } else {
        0
    };
    let key = if stem_n == len {
        full_key
    } else {
        hash_prefix(w0, w1, stem_n)
    };
    if classify_common && (c & W_COMMON != 0 || is_common_stem_bytes(lb, stem_n)) {
        flags |= COMMON;
    }
    let mut alt = 0;
    if len >= 6 && matches!(lb[0], b'u' | b'i' | b'd' | b'r') {
        for (prefix, min_rest, flag) in [
            (&b"un"[..], 4usize, NEG_PREFIX),
            (b"in", 6, NEG_PREFIX),
            (b"dis", 6, NEG_PREFIX),
            (b"re", 4, RE_PREFIX),
        ] {
            if len >= prefix.len() + min_rest && lb.starts_with(prefix) {
                alt = word_key(&lb[prefix.len()..]);
                flags |= flag;
                break;
            }
        }
    }
    token(key, alt, pre, flags)
}

/// `short_token` for 9 to 16 bytes (kept out of line: less frequent).
#[inline(never)]
fn long_token(
    text: &str,
    start: usize,
    end: usize,
    classify_common: bool,
    words: &WordTable,
) -> Token {
    let bytes = text.as_bytes();
    let raw0 = load8(bytes, start);
    let raw1 = if start + 16 <= bytes.len() {
        load8(bytes, start + 8) & low_bytes(end - start - 8)
    } else {
        load_le(&bytes[start + 8..end])
    };
    short_token::<true>(text, start, end, raw0, raw1, classify_common, words)
}

/// "not-for-profit" (a compound), "No. 1" (a number sign) are not negations.
fn negation_lookalike(lw: &[u8], word: &str, after: &[u8]) -> bool {
    (after.first() == Some(&b'-'))
        || (lw == b"no" && word.starts_with('N') && after.first() == Some(&b'.'))
}

fn make_token(
    word: &str,
    start: usize,
    end: usize,
    neg_prefix_split: usize,
    bytes_after: &[u8],
    classify_common: bool,
    scan: &Scan,
) -> Token {
    let wb = word.as_bytes();
    let mut flags = 0u16;
    let cap = if wb[0] < 128 {
        wb[0].is_ascii_uppercase()
    } else {
        word.chars().next().is_some_and(char::is_uppercase)
    };
    if cap {
        flags |= CAP;
    }
    let slow;
    let (lower, has_digit, all_numeric, plain) = if scan.plain {
        (&scan.lower, scan.has_digit, scan.numeric, true)
    } else {
        slow = Lower::new(word);
        (&slow, scan.has_digit, scan.numeric && scan.has_digit, false)
    };
    let mut alt = 0;
    let mut pre = 0;
    let key;
    if has_digit {
        flags |= DIGIT;
        if all_numeric {
            flags |= QUANT;
            key = number_key(word);
        } else {
            if crate::quantity::ordinal_digits(lower.as_str()).is_some() {
                flags |= QUANT;
            }
            key = hash_bytes(lower.bytes());
        }
    } else {
        let lb = lower.bytes();
        let full_key = if plain { scan.hash } else { hash_bytes(lb) };
        let c = class(full_key);
        if c & W_NEG != 0 && !negation_lookalike(lower.bytes(), word, bytes_after) {
            flags |= NEG_CUE;
        }
        if c & W_EXCL != 0 {
            flags |= EXCL;
        }
        if c & W_QUANT != 0 || (flags & CAP != 0 && c & W_MONTH != 0) {
            flags |= QUANT;
        }
        if c & W_TIME != 0 {
            flags |= TIME;
        }
        if c & W_STOP != 0 {
            // Function words are never matched as terms: no stem, no prefix.
            flags |= STOP;
            key = full_key;
        } else {
            let stem_n = if plain && !lb.is_empty() {
                stem_len_alpha(lb)
            } else {
                stem_len(lb)
            };
            if plain && flags & CAP == 0 && !has_digit && lb.len() >= PREFIX_LEN {
                // `hash_bytes(&lb[..PREFIX_LEN])`, from the word already in a register.
                pre = hash_short(scan.w0 & 0xff_ffff_ffff, PREFIX_LEN);
            }
            key = if stem_n == lb.len() {
                full_key
            } else if plain && stem_n < 8 {
                hash_short(scan.w0 & ((1u64 << (8 * stem_n)) - 1), stem_n)
            } else {
                hash_bytes(&lb[..stem_n])
            };
            if classify_common && (c & W_COMMON != 0 || is_common_stem(lower, stem_n)) {
                flags |= COMMON;
            }
            if neg_prefix_split > 0 {
                let rest = Lower::new(&word[neg_prefix_split..]);
                alt = word_key(rest.bytes());
                flags |= NEG_PREFIX;
            } else if lb.len() >= 6 && matches!(lb[0], b'u' | b'i' | b'd' | b'r') {
                for (prefix, min_rest, flag) in [
                    (&b"un"[..], 4usize, NEG_PREFIX),
                    (b"in", 6, NEG_PREFIX),
                    (b"dis", 6, NEG_PREFIX),
                    (b"re", 4, RE_PREFIX),
                ] {
                    if lb.len() >= prefix.len() + min_rest && lb.starts_with(prefix) {
                        alt = word_key(&lb[prefix.len()..]);
                        flags |= flag;
                        break;
                    }
                }
            }
        }
    }
    Token {
        start: start as u32,
        end: end as u32,
        key,
        alt,
        pre,
        flags,
    }
}

/// Negation cues (apostrophes are removed before lookup).
const NEGATIONS: &[&str] = &[
    "not", "no", "never", "cannot", "nor", "neither", "none", "nothing", "nobody", "nowhere",
    "cant", "dont", "doesnt", "didnt", "isnt", "arent", "wasnt", "werent", "wont", "wouldnt",
    "shouldnt", "couldnt", "mustnt", "hasnt", "havent", "hadnt", "neednt",
];

/// Function words: never salient.
/// Function words: never salient.
const STOPWORDS: &[&str] = &[
    "a",
    "an",
    "the",
    "and",
    "or",
    "but",
    "of",
    "to",
    "in",
    "on",
    "at",
    "for",
    "with",
    "by",
    "from",
    "as",
    "is",
    "are",
    "was",
    "were",
    "be",
    "been",
    "being",
    "am",
    "it",
    "its",
    "this",
    "that",
    "these",
    "those",
    "there",
    "here",
    "their",
    "theirs",
    "they",
    "them",
    "he",
    "she",
    "his",
    "her",
    "hers",
    "him",
    "you",
    "your",
    "yours",
    "youre",
    "youll",
    "youve",
    "we",
    "our",
    "us",
    "i",
    "me",
    "my",
    "will",
    "would",
    "shall",
    "should",
    "can",
    "could",
    "may",
    "might",
    "must",
    "do",
    "does",
    "did",
    "done",
    "have",
    "has",
    "had",
    "having",
    "if",
    "then",
    "than",
    "so",
    "such",
    "which",
    "who",
    "whom",
    "whose",
    "what",
    "when",
    "where",
    "why",
    "how",
    "whether",
    "also",
    "about",
    "into",
    "onto",
    "upon",
    "all",
    "any",
    "each",
    "every",
    "some",
    "both",
    "either",
    "only",
    "just",
    "solely",
    "exclusively",
    "yes",
    "not",
    "no",
    "never",
    "cannot",
    "nor",
    "neither",
    "none",
    "cant",
    "dont",
    "doesnt",
    "didnt",
    "isnt",
    "arent",
    "wasnt",
    "werent",
    "wont",
    "via",
    "per",
    "etc",
    "eg",
    "ie",
    "s",
    "t",
    "nt",
    "amp",
    "http",
    "https",
    "www",
    "com",
    "html",
    "md",
    "one",
    "ones",
    "itself",
    "themselves",
    "yourself",
    "while",
    "during",
    "through",
    "throughout",
    "out",
    "up",
    "down",
    "off",
    "again",
    "too",
    "very",
    "really",
    "actually",
    "usually",
    "generally",
    "typically",
    "approximately",
    "around",
    "roughly",
    "nearly",
    "almost",
    "still",
    "yet",
    "already",
    "even",
    "instead",
    "otherwise",
    "however",
    "therefore",
    "thus",
    "because",
    "since",
    "though",
    "although",
    "until",
    "unless",
    "after",
    "before",
    "within",
    "without",
    "between",
    "among",
    "under",
    "over",
    "above",
    "below",
    "least",
    "most",
    "more",
    "less",
    "much",
    "many",
    "few",
    "several",
    "other",
    "another",
    "same",
    "own",
    "like",
    "well",
    "now",
    "currently",
];

/// Frequent English content words: they carry little evidence on their own, so a missing one
/// weighs `SupportConfig::common_word_weight`. Looked up as written, then by stem.
fn is_common_stem(lower: &Lower, n: usize) -> bool {
    is_common_stem_bytes(lower.bytes(), n)
}

/// `is_common_stem` of a lowercased word.
fn is_common_stem_bytes(b: &[u8], n: usize) -> bool {
    if n == b.len() || n < 2 {
        return false;
    }
    if class(hash_bytes(&b[..n])) & W_COMMON != 0 {
        return true;
    }
    // stem + "e" ("decid" -> "decide"), stem + "y"
    let mut buf = [0u8; BUF];
    if n < BUF {
        buf[..n].copy_from_slice(&b[..n]);
        for extra in [b'e', b'y'] {
            buf[n] = extra;
            if class(hash_bytes(&buf[..n + 1])) & W_COMMON != 0 {
                return true;
            }
        }
    }
    false
}

const W_STOP: u8 = 1;
const W_COMMON: u8 = 2;
const W_NEG: u8 = 4;
const W_EXCL: u8 = 8;
const W_QUANT: u8 = 16;
const W_MONTH: u8 = 32;
const W_TIME: u8 = 64;

/// The token flags a word class gives on its own, one load instead of a test per class bit
/// (`NEG_CUE` and a month's `QUANT` also depend on the text). One entry per `u8`: indexing
/// needs no bounds check.
static CLASS_FLAGS: [u16; 256] = {
    let mut t = [0u16; 256];
    let mut c = 0;
    while c < 256 {
        let class = c as u8;
        let mut f = 0;
        if class & W_STOP != 0 {
            f |= STOP;
        }
        if class & W_EXCL != 0 {
            f |= EXCL;
        }
        if class & W_QUANT != 0 {
            f |= QUANT;
        }
        if class & W_TIME != 0 {
            f |= TIME;
        }
        t[c] = f;
        c += 1;
    }
    t
};

const TABLE_BITS: u32 = 12;
const TABLE_SIZE: usize = 1 << TABLE_BITS;

/// Open-addressing table from word hash to word class: cheaper than a general hash map for
/// one lookup per token. Most words of a text are in it (function words), so a lookup goes
/// straight to the slot, without an "absent" filter first.
struct WordTable {
    // Fixed-size: a slot index needs no bounds check.
    keys: Box<[u64; TABLE_SIZE]>,
    classes: Box<[u8; TABLE_SIZE]>,
}

impl WordTable {
    #[inline]
    fn slot(hash: u64) -> usize {
        (hash >> (64 - TABLE_BITS)) as usize
    }
    fn insert(&mut self, hash: u64, class: u8) {
        let mut i = Self::slot(hash);
        loop {
            if self.keys[i] == hash || self.keys[i] == 0 {
                self.keys[i] = hash;
                self.classes[i] |= class;
                return;
            }
            i = (i + 1) & (TABLE_SIZE - 1);
        }
    }
    #[inline]
    fn get(&self, hash: u64) -> u8 {
        let mut i = Self::slot(hash);
        loop {
            let k = self.keys[i];
            if k == hash {
                return self.classes[i];
            }
            if k == 0 {
                return 0;
            }
            i = (i + 1) & (TABLE_SIZE - 1);
        }
    }
}

/// The word classes, keyed by the hash of the lowercased word. Built once, read-only.
static WORDS: std::sync::LazyLock<WordTable> = std::sync::LazyLock::new(|| {
    let mut t = WordTable {
        keys: Box::new([0; TABLE_SIZE]),
        classes: Box::new([0; TABLE_SIZE]),
    };
    let mut add = |words: &[&str], class: u8| {
        for w in words {
            t.insert(hash_bytes(w.as_bytes()), class);
        }
    };
    add(STOPWORDS, W_STOP);
    add(COMMON_WORDS, W_COMMON);
    add(NEGATIONS, W_NEG);
    add(&["only", "solely", "exclusively"], W_EXCL);
    add(crate::quantity::QUANT_WORDS, W_QUANT);
    add(crate::quantity::MONTHS, W_MONTH);
    add(
        &[
            "minute", "minutes", "min", "mins", "hour", "hours", "hr", "hrs", "day", "days",
            "week", "weeks", "month", "months", "year", "years", "yr", "yrs",
        ],
        W_TIME,
    );
    t
});

#[inline]
fn class(hash: u64) -> u8 {
    WORDS.get(hash)
}

/// Frequent English content words: paraphrase glue.
const COMMON_WORDS: &[&str] = &[
    "get",
    "got",
    "gets",
    "give",
    "given",
    "gave",
    "take",
    "took",
    "taken",
    "make",
    "made",
    "go",
    "goes",
    "went",
    "gone",
    "come",
    "came",
    "become",
    "became",
    "need",
    "want",
    "use",
    "used",
    "using",
    "decide",
    "determine",
    "choose",
    "chose",
    "chosen",
    "allow",
    "let",
    "help",
    "keep",
    "kept",
    "put",
    "set",
    "see",
    "saw",
    "seen",
    "know",
    "known",
    "knew",
    "say",
    "said",
    "tell",
    "told",
    "find",
    "found",
    "think",
    "look",
    "seem",
    "show",
    "call",
    "try",
    "ask",
    "work",
    "works",
    "worked",
    "start",
    "started",
    "begin",
    "began",
    "begun",
    "end",
    "ended",
    "run",
    "ran",
    "hold",
    "held",
    "bring",
    "brought",
    "provide",
    "include",
    "includes",
    "included",
    "contain",
    "require",
    "required",
    "expect",
    "expected",
    "receive",
    "received",
    "send",
    "sent",
    "pay",
    "paid",
    "file",
    "submit",
    "process",
    "handle",
    "able",
    "possible",
    "available",
    "new",
    "old",
    "good",
    "best",
    "better",
    "great",
    "big",
    "small",
    "large",
    "high",
    "low",
    "long",
    "short",
    "full",
    "whole",
    "main",
    "major",
    "minor",
    "important",
    "different",
    "various",
    "certain",
    "specific",
    "general",
    "usual",
    "normal",
    "common",
    "typical",
    "total",
    "entire",
    "current",
    "recent",
    "likely",
    "sure",
    "ready",
    "free",
    "due",
    "way",
    "ways",
    "thing",
    "things",
    "part",
    "kind",
    "type",
    "types",
    "case",
    "cases",
    "lot",
    "number",
    "amount",
    "time",
    "times",
    "people",
    "person",
    "someone",
    "something",
    "anyone",
    "anything",
    "everyone",
    "everything",
    "place",
    "point",
    "fact",
    "order",
    "result",
    "reason",
    "example",
    "information",
    "info",
    "detail",
    "details",
    "step",
    "steps",
    "form",
    "forms",
    "team",
    "group",
    "back",
    "next",
    "last",
    "early",
    "late",
    "later",
    "soon",
    "often",
    "sometimes",
    "always",
    "ever",
    "once",
    "twice",
    "plus",
    "regular",
    "regularly",
    "automatically",
    "simply",
    "directly",
    "respectively",
    "particular",
    "following",
    "follow",
    "follows",
    "based",
    "called",
    "named",
    "located",
    "mean",
    "means",
    "meant",
    "refer",
    "refers",
    "regard",
    "regarding",
    "related",
    "relate",
    "involve",
    "according",
    "apply",
    "applies",
    "day",
    "days",
    "week",
    "weeks",
    "month",
    "months",
    "year",
    "years",
    "hour",
    "hours",
    "minute",
    "minutes",
    "period",
    "date",
    "dates",
    "schedule",
    "ok",
    "okay",
    "receiving",
    "change",
    "changes",
    "add",
    "added",
    "remove",
    "check",
    "create",
    "created",
    "complete",
    "completed",
    "finish",
    "stay",
    "move",
    "live",
    "lived",
    "turn",
    "open",
    "close",
    "closed",
    "reach",
    "reached",
    "spend",
    "spent",
    "happen",
    "happens",
    "occur",
    "exist",
    "exists",
    "remain",
    "remains",
    "consider",
    "considered",
    "list",
    "listed",
    "note",
    "noted",
    "describe",
    "described",
    "state",
    "stated",
    "says",
    "explain",
    "contact",
    "grant",
    "granted",
    "offer",
    "offered",
    "attend",
    "qualify",
    "qualifies",
    "obtain",
    "permit",
    "enable",
    "entitle",
    "ensure",
    "access",
    "visit",
    "cover",
    "covers",
    "covered",
    "lasts",
    "assign",
    "assigned",
    "apply",
    "available",
    "typically",
    "usually",
    "generally",
    "whether",
];

/// Whether `b` is whitespace by `char::is_whitespace` (ASCII only).
#[inline(always)]
fn is_ascii_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\x0b' | b'\x0c' | b'\r')
}

/// Sentence (or table row, heading, list item) spans of a passage, trimmed.
pub(crate) fn sentence_spans(text: &str, out: &mut Vec<(u32, u32)>) {
    #[cfg(target_arch = "x86_64")]
    {
        let bytes = text.as_bytes();
        // The bytes that can end a sentence, found 64 at a time: most blocks hold one or two.
        let mut base = 0usize;
        let mut bits = if bytes.is_empty() {
            0
        } else {
            stop_bits(bytes, 0)
        };
        sentence_spans_with(text, out, |mut from| {
            loop {
                let off = from - base;
                if off < 64 {
                    let m = bits >> off;
                    if m != 0 {
                        return Some(from + m.trailing_zeros() as usize);
                    }
                    from = base + 64;
                }
                if from >= bytes.len() {
                    return None;
                }
                base = from;
                bits = stop_bits(bytes, base);
            }
        });
    }
    #[cfg(not(target_arch = "x86_64"))]
    sentence_spans_with(text, out, memchr_stops(text.as_bytes()));
}

/// The next byte at or after `from` that can end a sentence (a newline, `.`, `?` or `!`), by
/// `memchr`.
#[cfg(any(test, not(target_arch = "x86_64")))]
fn memchr_stops(bytes: &[u8]) -> impl FnMut(usize) -> Option<usize> + '_ {
    // Next '!' at or after `from` (n if none): searched apart, memchr takes three needles.
    let n = bytes.len();
    let mut bang = 0usize;
    let mut bang_searched = false;
    move |from| {
        if !bang_searched || bang < from {
            bang = memchr::memchr(b'!', &bytes[from..]).map_or(n, |k| from + k);
            bang_searched = true;
        }
        match memchr::memchr3(b'\n', b'.', b'?', &bytes[from..bang]) {
            Some(k) => Some(from + k),
            None if bang < n => Some(bang),
            None => None,
        }
    }
}

/// One bit per byte of the 64 at `base` (past the text's end: none) that can end a sentence.
#[cfg(target_arch = "x86_64")]
#[inline]
fn stop_bits(bytes: &[u8], base: usize) -> u64 {
    stop_bits_of(block_bytes(bytes, base, &mut [0; 64]))
}

#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn stop_bits_of(b: &[u8; 64]) -> u64 {
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU has AVX2 (checked just above).
        unsafe { stop_bits_avx2(b) }
    } else {
        // SAFETY: SSE2 is part of the x86_64 baseline: every x86_64 target enables it.
        unsafe { stop_bits_sse2(b) }
    }
}

/// `stop_bits` of 64 bytes with AVX2 compares, 32 bytes per step.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn stop_bits_avx2(b: &[u8; 64]) -> u64 {
    use std::arch::x86_64::{
        _mm256_cmpeq_epi8, _mm256_movemask_epi8, _mm256_or_si256, _mm256_set1_epi8,
    };
    let (chunks, _) = b.as_chunks::<32>();
    let mut bits = 0u64;
    for (k, c) in chunks.iter().enumerate() {
        let v = lanes_avx2(c);
        let eq = |c: u8| _mm256_cmpeq_epi8(v, _mm256_set1_epi8(c as i8));
        let stop = _mm256_or_si256(
            _mm256_or_si256(eq(b'\n'), eq(b'.')),
            _mm256_or_si256(eq(b'?'), eq(b'!')),
        );
        bits |= (_mm256_movemask_epi8(stop) as u32 as u64) << (32 * k);
    }
    bits
}

/// `stop_bits` of 64 bytes with SSE2 compares, 16 bytes per step.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "sse2")]
fn stop_bits_sse2(b: &[u8; 64]) -> u64 {
    use std::arch::x86_64::{_mm_cmpeq_epi8, _mm_movemask_epi8, _mm_or_si128, _mm_set1_epi8};
    let (chunks, _) = b.as_chunks::<16>();
    let mut bits = 0u64;
    for (k, c) in chunks.iter().enumerate() {
        let v = lanes_sse2(c);
        let eq = |c: u8| _mm_cmpeq_epi8(v, _mm_set1_epi8(c as i8));
        let stop = _mm_or_si128(
            _mm_or_si128(eq(b'\n'), eq(b'.')),
            _mm_or_si128(eq(b'?'), eq(b'!')),
        );
        bits |= (_mm_movemask_epi8(stop) as u32 as u64) << (16 * k);
    }
    bits
}

/// `sentence_spans`, given `next_stop(from)`: the next newline, `.`, `?` or `!` at or after
/// `from` (which only grows).
#[inline(always)]
fn sentence_spans_with(
    text: &str,
    out: &mut Vec<(u32, u32)>,
    mut next_stop: impl FnMut(usize) -> Option<usize>,
) {
    let bytes = text.as_bytes();
    let n = bytes.len();
    let mut start = 0usize;
    // `text[a..b].trim()`, ASCII whitespace a byte at a time (`str::trim` past other bytes).
    #[inline(always)]
    fn trimmed(text: &str, a: usize, b: usize) -> Option<(u32, u32)> {
        let bytes = text.as_bytes();
        let (mut a, mut b) = (a, b);
        while a < b && is_ascii_space(bytes[a]) {
            a += 1;
        }
        if a < b && bytes[a] >= 128 {
            let s = &text[a..b];
            a += s.len() - s.trim_start().len();
        }
        while a < b && is_ascii_space(bytes[b - 1]) {
            b -= 1;
        }
        if a < b && bytes[b - 1] >= 128 {
            let s = &text[a..b];
            b -= s.len() - s.trim_end().len();
        }
        (a < b).then_some((a as u32, b as u32))
    }
    let push = |out: &mut Vec<(u32, u32)>, a: usize, b: usize| {
        if let Some(span) = trimmed(text, a, b) {
            out.push(span);
        }
    };
    let mut from = 0usize;
    while from < n {
        // Jump to the next byte that can end a sentence.
        let Some(i) = next_stop(from) else {
            break;
        };
        from = i + 1;
        let b = bytes[i];
        if b == b'\n' {
            // Look at the next non-space byte of the following line.
            let mut j = i + 1;
            while j < n && (bytes[j] == b' ' || bytes[j] == b'\t' || bytes[j] == b'\r') {
                j += 1;
            }
            let breaks = j >= n
                || bytes[j] == b'\n'
                || bytes[j] == b'|'
                || bytes[j] == b'#'
                || (matches!(bytes[j], b'-' | b'*' | b'+') && j + 1 < n && bytes[j + 1] == b' ')
                || {
                    let mut k = j;
                    while k < n && bytes[k].is_ascii_digit() {
                        k += 1;
                    }
                    k > j && k + 1 < n && bytes[k] == b'.' && bytes[k + 1] == b' '
                }
                || (i > 0 && bytes[i - 1] == b'|');
            if breaks {
                push(out, start, i);
                start = i + 1;
            }
            continue;
        }
        // `.`, `!` or `?`.
        let split = match bytes.get(i + 1).copied() {
            None => false,
            Some(b' ' | b'\t' | b'\r' | b'\n') => !is_abbreviation(text, start, i),
            Some(c) if c.is_ascii_uppercase() || c == b'"' => {
                // "century.First": glued sentences (common in scraped text).
                i >= 2
                    && bytes[i - 1].is_ascii_lowercase()
                    && bytes[i - 2].is_ascii_lowercase()
                    && b == b'.'
            }
            _ => false,
        };
        if split {
            push(out, start, i + 1);
            start = i + 1;
        }
    }
    push(out, start, n);
}

/// Whether the word ending at byte `dot` is an abbreviation or an initial ("Dr.", "J.").
fn is_abbreviation(text: &str, from: usize, dot: usize) -> bool {
    let bytes = text.as_bytes();
    let mut k = dot;
    let mut has_dot = false;
    for &b in bytes[from..dot].iter().rev() {
        if !b.is_ascii_alphabetic() {
            if b != b'.' {
                break;
            }
            has_dot = true;
        }
        k -= 1;
    }
    let word = &text[k..dot];
    if word.len() == 1 && word.as_bytes()[0].is_ascii_uppercase() {
        return true;
    }
    if has_dot {
        return true; // "e.g", "U.S"
    }
    if word.len() > 6 || word.len() < 2 {
        return false; // longer or shorter than any below
    }
    matches!(
        word,
        "Dr" | "Mr"
            | "Mrs"
            | "Ms"
            | "Jr"
            | "Sr"
            | "St"
            | "vs"
            | "etc"
            | "Inc"
            | "Ltd"
            | "Co"
            | "No"
            | "Prof"
            | "Gen"
            | "Col"
            | "Lt"
            | "Mt"
            | "approx"
            | "Jan"
            | "Feb"
            | "Mar"
            | "Apr"
            | "Jun"
            | "Jul"
            | "Aug"
            | "Sep"
            | "Sept"
            | "Oct"
            | "Nov"
            | "Dec"
    )
}

/// Byte ranges of citation markers (`[2]`, `[1][3]`, `[1, 3]`, `[2-4]`) and a leading list
/// bullet ("- ", "* ", "1. ") in a claim.
pub(crate) fn marker_ranges(text: &str, out: &mut Vec<(usize, usize)>) {
    let bytes = text.as_bytes();
    // Leading bullet.
    let lead = text.len() - text.trim_start().len();
    let t = &bytes[lead..];
    if t.len() >= 2 && matches!(t[0], b'-' | b'*' | b'+') && t[1] == b' ' {
        out.push((lead, lead + 2));
    } else {
        let mut k = 0;
        while k < t.len() && t[k].is_ascii_digit() {
            k += 1;
        }
        if k > 0 && k + 1 < t.len() && (t[k] == b'.' || t[k] == b')') && t[k + 1] == b' ' {
            out.push((lead, lead + k + 2));
        }
    }
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'[' {
            let mut j = i + 1;
            let mut digit = false;
            while j < bytes.len() && matches!(bytes[j], b'0'..=b'9' | b',' | b' ' | b'-') {
                digit |= bytes[j].is_ascii_digit();
                j += 1;
            }
            // also allow an en dash inside ranges
            while j + 2 < bytes.len() && &bytes[j..j + 3] == "–".as_bytes() {
                j += 3;
                while j < bytes.len() && matches!(bytes[j], b'0'..=b'9' | b' ') {
                    j += 1;
                }
            }
            if digit && j < bytes.len() && bytes[j] == b']' {
                out.push((i, j + 1));
                i = j + 1;
                continue;
            }
        }
        i += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(w: &str) -> u64 {
        word_key(Lower::new(w).bytes())
    }

    #[test]
    fn stems_unify_inflections() {
        assert_eq!(key("settle"), key("settled"));
        assert_eq!(key("issues"), key("issued"));
        assert_eq!(key("processes"), key("processed"));
        assert_eq!(key("meetings"), key("meeting"));
        assert_eq!(key("policies"), key("policy"));
        assert_eq!(key("weekly"), key("week"));
        assert_eq!(key("Reimbursements"), key("reimbursement"));
    }

    #[test]
    fn sentences_split_on_glued_periods_and_table_rows() {
        let t =
            "Arthur's Magazine was published in the 19th century.First for Women is a magazine.";
        let mut s = Vec::new();
        sentence_spans(t, &mut s);
        assert_eq!(s.len(), 2);
        let t = "Header\n\n| a | b |\n| c | d |\nDr. Smith said so. Then it ended.";
        s.clear();
        sentence_spans(t, &mut s);
        let parts: Vec<&str> = s.iter().map(|&(a, b)| &t[a as usize..b as usize]).collect();
        assert_eq!(
            parts,
            [
                "Header",
                "| a | b |",
                "| c | d |",
                "Dr. Smith said so.",
                "Then it ended."
            ]
        );
    }

    #[test]
    fn register_stems_match_slice_stems() {
        let check = |w: &[u8]| {
            let mut b = [0u8; 16];
            b[..w.len()].copy_from_slice(w);
            let w0 = u64::from_le_bytes(b[..8].try_into().unwrap());
            let w1 = u64::from_le_bytes(b[8..].try_into().unwrap());
            let got = if w.len() <= 8 {
                stem_len_word(w0, w.len())
            } else {
                stem_len_word2(w0, w1, w.len())
            };
            assert_eq!(got, stem_len_alpha(w), "{}", String::from_utf8_lossy(w));
        };
        // Every word of up to 5 letters over the letters the rules look at, then random ones.
        let alpha = b"abdegilnsuyz";
        let mut w = Vec::new();
        for len in 1..=5u32 {
            for mut k in 0..alpha.len().pow(len) {
                w.clear();
                for _ in 0..len {
                    w.push(alpha[k % alpha.len()]);
                    k /= alpha.len();
                }
                check(&w);
            }
        }
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        for _ in 0..200_000 {
            seed = seed
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            let len = 6 + (seed >> 59) as usize % 11;
            w.clear();
            let mut r = seed;
            for _ in 0..len {
                w.push(alpha[(r % alpha.len() as u64) as usize]);
                r /= alpha.len() as u64;
                if r == 0 {
                    r = seed.rotate_left(17) | 1;
                }
            }
            check(&w);
        }
    }

    /// Regression dump: every token (all fields) and sentence span of the handbook pages, the
    /// dev cases, the HaluEval texts and synthetic edge cases, to the file named by
    /// `GROUNDCITE_TOKEN_DUMP`. Record before a change to this file, diff after it:
    ///
    /// ```sh
    /// GROUNDCITE_TOKEN_DUMP=/tmp/tok-before.txt cargo test --release -p groundcite-support \
    ///     --lib token_dump -- --ignored
    /// ```
    #[test]
    #[ignore]
    fn token_dump() {
        use std::fmt::Write as _;
        let Ok(path) = std::env::var("GROUNDCITE_TOKEN_DUMP") else {
            return;
        };
        let shared = concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared");
        let mut texts: Vec<String> = Vec::new();
        let mut pages = Vec::new();
        let mut dirs = vec![std::path::PathBuf::from(format!(
            "{shared}/corpora/tts-handbook"
        ))];
        while let Some(d) = dirs.pop() {
            for e in std::fs::read_dir(&d).expect("handbook dir") {
                let p = e.expect("dir entry").path();
                if p.is_dir() {
                    dirs.push(p);
                } else {
                    pages.push(p);
                }
            }
        }
        pages.sort();
        for p in &pages {
            texts.push(std::fs::read_to_string(p).expect("page"));
        }
        let strings = |file: &str, texts: &mut Vec<String>| {
            let body = std::fs::read_to_string(format!("{shared}/{file}")).expect("jsonl");
            fn walk(v: &serde_json::Value, out: &mut Vec<String>) {
                match v {
                    serde_json::Value::String(s) => out.push(s.clone()),
                    serde_json::Value::Array(a) => a.iter().for_each(|x| walk(x, out)),
                    serde_json::Value::Object(o) => o.values().for_each(|x| walk(x, out)),
                    _ => {}
                }
            }
            for line in body.lines().filter(|l| !l.trim().is_empty()) {
                walk(&serde_json::from_str(line).expect("json"), texts);
            }
        };
        strings("cases/dev.jsonl", &mut texts);
        strings("cases/questions-dev.jsonl", &mut texts);
        strings("datasets/halueval/qa-dev.jsonl", &mut texts);
        // Synthetic edge cases: joiners, non-ASCII, long words, end-of-text words, all lengths.
        let pieces: Vec<&str> =
            ("don't~Doesn’t~non-billable~Non-profit~not-for-profit~No. 5~1,000~3.5~2nd~21st~\
             naïve~Café~über~x~I~re-enter~unpaid~disallowed~inaccessible~rebooking~\
             supercalifragilisticexpialidocious~internationalization~abcdefghijklmnop~\
             abcdefghijklmnopq~12345678~123456789~e.g.~U.S.~Dr.~etc.~Mr. Smith.~end.First~?~!~\
             \n~\n\n~\n- ~\n* ~\n1. ~\n| a |~|\n~#~ ~\t~’s~Smith's~policies~processed~weekly~—~\
             –~…~\u{a0}~•~·~[1]~[2-4]~- ~Jan.~Sept. ~'~''~a'b~x-y~abc-def~9.~.9~1.2.3~1,2,3~\
             Ωmega~日本語~ǅ~İstanbul~straße~ﬁle~\r\n~abcdefgh~ABCDEFGHIJ~Monday~May~NOT~Only~\
             non-~non-Ωx~it's~can't~rock'n'roll~5-day~40-hour~x'~’~1st.~a.b~3,5~3,~,5~hopping~\
             studies~\"Quote\"~Unbelievable~reenter~indivisible~dissatisfied~AbC1~a1b2c3d4e5")
                .split('~')
                .collect();
        let mut seed = 0x1234_5678_9abc_def0u64;
        for _ in 0..4000 {
            let mut s = String::new();
            let k = (seed >> 60) as usize + 1;
            for _ in 0..k {
                seed = seed
                    .wrapping_mul(6_364_136_223_846_793_005)
                    .wrapping_add(1_442_695_040_888_963_407);
                s.push_str(pieces[(seed >> 33) as usize % pieces.len()]);
                if (seed >> 20) & 3 != 0 {
                    s.push(' ');
                }
            }
            texts.push(s);
        }
        let mut out = String::new();
        let mut toks = Vec::new();
        let mut spans = Vec::new();
        let mut skip = Vec::new();
        for (ti, t) in texts.iter().enumerate() {
            writeln!(out, "# {ti} {}", t.len()).unwrap();
            skip.clear();
            marker_ranges(t, &mut skip);
            for (mode, sk) in [(false, &[][..]), (true, &skip[..])] {
                toks.clear();
                tokenize(t, sk, mode, &mut toks);
                for k in &toks {
                    writeln!(
                        out,
                        "{} {} {:x} {:x} {:x} {}",
                        k.start, k.end, k.key, k.alt, k.pre, k.flags
                    )
                    .unwrap();
                }
                writeln!(out, "-").unwrap();
            }
            spans.clear();
            sentence_spans(t, &mut spans);
            // The portable searches find the same spans.
            let mut portable = Vec::new();
            sentence_spans_with(t, &mut portable, memchr_stops(t.as_bytes()));
            assert_eq!(spans, portable);
            for (a, b) in &spans {
                writeln!(out, "s {a} {b}").unwrap();
            }
        }
        std::fs::write(path, out).expect("write dump");
    }

    #[test]
    fn block_classes_and_stops_match_the_byte_rules() {
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        for round in 0..2000 {
            let mut b = [0u8; 64];
            for (k, x) in b.iter_mut().enumerate() {
                seed = seed
                    .wrapping_mul(6_364_136_223_846_793_005)
                    .wrapping_add(1_442_695_040_888_963_407);
                // Every byte value, then mostly ASCII.
                *x = if round < 4 {
                    (64 * round + k) as u8
                } else {
                    (seed >> 56) as u8 & if seed & 1 == 0 { 0x7f } else { 0xff }
                };
            }
            let (mut alnum, mut high, mut special) = (0u64, 0u64, 0u64);
            for (k, &x) in b.iter().enumerate() {
                alnum |= (x.is_ascii_alphanumeric() as u64) << k;
                high |= ((x >= 128) as u64) << k;
                special |= ((x >= 128 || matches!(x, b'\'' | b',' | b'-' | b'.')) as u64) << k;
            }
            #[cfg_attr(not(target_arch = "x86_64"), allow(unused_mut))]
            let mut blocks = vec![classify_block(&b), classify_block_swar(&b)];
            #[cfg(target_arch = "x86_64")]
            {
                // SAFETY: SSE2 is part of the x86_64 baseline.
                blocks.push(unsafe { classify_block_sse2(&b) });
                if std::arch::is_x86_feature_detected!("avx2") {
                    // SAFETY: the CPU has AVX2 (checked just above).
                    blocks.push(unsafe { classify_block_avx2(&b) });
                }
            }
            #[cfg(target_arch = "x86_64")]
            {
                let stops = b.iter().enumerate().fold(0u64, |m, (k, &x)| {
                    m | (matches!(x, b'\n' | b'.' | b'?' | b'!') as u64) << k
                });
                assert_eq!(stop_bits_of(&b), stops);
                // SAFETY: SSE2 is part of the x86_64 baseline.
                assert_eq!(unsafe { stop_bits_sse2(&b) }, stops);
            }
            for block in blocks {
                assert_eq!(
                    (block.alnum, block.word, block.special),
                    (alnum, alnum | high, special)
                );
            }
        }
    }

    #[test]
    fn markers_and_bullets_are_skipped() {
        let t = "- Refunds take 5 days [1][3], or [2-4].";
        let mut r = Vec::new();
        marker_ranges(t, &mut r);
        assert_eq!(r.len(), 4);
        let mut toks = Vec::new();
        tokenize(t, &r, true, &mut toks);
        let words: Vec<&str> = toks.iter().map(|k| k.text(t)).collect();
        assert_eq!(words, ["Refunds", "take", "5", "days", "or"]);
    }
}
