//! Keys: 64-bit hashes of short byte strings (a lowercased word, its stem, its first letters).
//!
//! A key is never 0: 0 means "no key" in a [`Token`](crate::Token). Keys are compared, never
//! stored across runs, but they are deterministic (the token dump prints them).

const K: u64 = 0x9E37_79B9_7F4A_7C15;

/// The key of a byte string.
pub fn key(bytes: &[u8]) -> u64 {
    if bytes.len() <= 8 {
        let h = (le_word(bytes) ^ ((bytes.len() as u64) << 59) ^ 0x5bd1_e995).wrapping_mul(K);
        return (h ^ (h >> 31)) | 1;
    }
    let mut h = (bytes.len() as u64 + 1).wrapping_mul(K);
    for chunk in bytes.chunks(8) {
        h = (h ^ le_word(chunk)).wrapping_mul(K).rotate_left(29);
    }
    h ^= h >> 32;
    h = h.wrapping_mul(K);
    h ^= h >> 29;
    h | 1
}

/// At most 8 bytes as a little-endian word, zero above their length.
fn le_word(bytes: &[u8]) -> u64 {
    // Shifts, not a copy into an array: a copy of a few bytes then a load of eight stalls.
    bytes
        .iter()
        .rev()
        .fold(0, |word, &b| (word << 8) | u64::from(b))
}

/// The key of a number as written: its digits and decimal point, without thousands separators
/// ("1,000" and "1000" share a key).
pub fn number_key(word: &str) -> u64 {
    // Most numbers have no separator and no letter to lowercase: no copy.
    if !word.bytes().any(|b| b == b',' || b.is_ascii_uppercase()) {
        return key(word.as_bytes());
    }
    let digits: Vec<u8> = word
        .bytes()
        .filter(|&b| b != b',')
        .map(|b| b.to_ascii_lowercase())
        .collect();
    key(&digits)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_never_zero_and_separate_lengths() {
        assert_ne!(key(b""), 0);
        assert_ne!(key(b"a"), key(b"a\0"));
        assert_ne!(key(b"abcdefgh"), key(b"abcdefghi"));
        assert_eq!(number_key("1,000"), number_key("1000"));
    }
}
