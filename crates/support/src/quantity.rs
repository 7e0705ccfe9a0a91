//! Quantities: numbers (digits and words), ranges, money, percentages, durations, weekdays,
//! month names, calendar years and ordinals, with their bounds ("at least", "up to", ...).

use crate::text::{Lower, QUANT, STOP, Token};

#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Unit {
    /// A number with no recognised unit.
    Bare,
    Percent,
    Money,
    Minute,
    Hour,
    Day,
    BusinessDay,
    Week,
    MonthSpan,
    Year,
    Weekday,
    MonthName,
    CalendarYear,
    /// An ordinal ("third season"), with the key of the noun after it (0 if none).
    Ordinal(u64),
    /// A count of something else ("6.213 km", "40 drug stores"): the key of the noun.
    Other(u64),
}

impl Unit {
    fn days(self) -> Option<f64> {
        Some(match self {
            Unit::Minute => 1.0 / 1440.0,
            Unit::Hour => 1.0 / 24.0,
            Unit::Day | Unit::BusinessDay => 1.0,
            Unit::Week => 7.0,
            Unit::MonthSpan => 30.0,
            Unit::Year => 365.0,
            _ => return None,
        })
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Bound {
    Exact,
    AtLeast,
    AtMost,
}

#[derive(Debug, Clone, Copy)]
pub(crate) struct Quantity {
    pub lo: f64,
    pub hi: f64,
    pub unit: Unit,
    pub bound: Bound,
    /// Byte span of the number and its unit in the source text.
    pub start: u32,
    pub end: u32,
}

impl Quantity {
    pub fn text<'t>(&self, text: &'t str) -> &'t str {
        &text[self.start as usize..self.end as usize]
    }
}

fn eq(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1.0)
}

/// Whether evidence quantity `e` states claim quantity `c` (same value, compatible unit).
#[inline]
pub(crate) fn states(c: &Quantity, e: &Quantity) -> bool {
    let (clo, chi, elo, ehi) = match (c.unit.days(), e.unit.days()) {
        (Some(a), Some(b)) => (c.lo * a, c.hi * a, e.lo * b, e.hi * b),
        _ => {
            let compatible = match (c.unit, e.unit) {
                (Unit::Bare, _) | (_, Unit::Bare) => true,
                (Unit::Ordinal(a), Unit::Ordinal(b)) => a == b || a == 0 || b == 0,
                // The same number before another noun ("240 annual", "32 hours"): lenient.
                (Unit::Other(_), _) | (_, Unit::Other(_)) => true,
                (a, b) => a == b,
            };
            if !compatible {
                return false;
            }
            (c.lo, c.hi, e.lo, e.hi)
        }
    };
    if eq(clo, chi) {
        (eq(clo, elo) && eq(chi, ehi)) || (clo >= elo - 1e-9 && clo <= ehi + 1e-9)
    } else {
        eq(clo, elo) && eq(chi, ehi)
    }
}

/// Whether `c` and `e` measure the same kind of thing, so that different values conflict.
pub(crate) fn comparable(c: &Quantity, e: &Quantity) -> bool {
    if c.unit.days().is_some() && e.unit.days().is_some() {
        return true;
    }
    match (c.unit, e.unit) {
        (Unit::Ordinal(a), Unit::Ordinal(b)) => a == b && a != 0,
        (Unit::Other(a), Unit::Other(b)) => a == b,
        (Unit::Bare, _) | (_, Unit::Bare) => false,
        (a, b) => a == b,
    }
}

/// Opposite bounds on the same value ("at least 30" vs "at most 30").
pub(crate) fn bounds_conflict(c: &Quantity, e: &Quantity) -> bool {
    matches!(
        (c.bound, e.bound),
        (Bound::AtLeast, Bound::AtMost) | (Bound::AtMost, Bound::AtLeast)
    )
}

/// Number words, ordinal words and weekday names (flagged as quantity tokens).
pub(crate) const QUANT_WORDS: &[&str] = &[
    "zero",
    "one",
    "two",
    "three",
    "four",
    "five",
    "six",
    "seven",
    "eight",
    "nine",
    "ten",
    "eleven",
    "twelve",
    "thirteen",
    "fourteen",
    "fifteen",
    "sixteen",
    "seventeen",
    "eighteen",
    "nineteen",
    "twenty",
    "thirty",
    "forty",
    "fifty",
    "sixty",
    "seventy",
    "eighty",
    "ninety",
    "hundred",
    "thousand",
    "dozen",
    "million",
    "billion",
    "first",
    "second",
    "third",
    "fourth",
    "fifth",
    "sixth",
    "seventh",
    "eighth",
    "ninth",
    "tenth",
    "eleventh",
    "twelfth",
    "thirteenth",
    "fourteenth",
    "fifteenth",
    "twentieth",
    "monday",
    "tuesday",
    "wednesday",
    "thursday",
    "friday",
    "saturday",
    "sunday",
    "mondays",
    "tuesdays",
    "wednesdays",
    "thursdays",
    "fridays",
    "saturdays",
    "sundays",
];

/// Month names (quantity tokens when capitalised).
pub(crate) const MONTHS: &[&str] = &[
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
];

/// Words as little-endian integers of their lowercase ASCII letters (zero above the length):
/// a word of at most 16 bytes is matched against these lists with integer compares, with no
/// lowercasing into a buffer and no byte-slice compares.
mod w {
    /// The word `s` (ASCII letters, at most 16) as an integer; uppercase letters are lowered.
    pub(super) const fn word(s: &str) -> u128 {
        let b = s.as_bytes();
        assert!(!b.is_empty() && b.len() <= 16);
        let mut x = 0u128;
        let mut k = 0;
        while k < b.len() {
            assert!(b[k].is_ascii_alphabetic());
            x |= (b[k].to_ascii_lowercase() as u128) << (8 * k);
            k += 1;
        }
        x
    }

    macro_rules! words {
        ($($name:ident),* $(,)?) => { $(pub(super) const $name: u128 = word(stringify!($name));)* };
    }

    words!(
        ZERO, ONE, TWO, THREE, FOUR, FIVE, SIX, SEVEN, EIGHT, NINE, TEN, ELEVEN, TWELVE, THIRTEEN,
        FOURTEEN, FIFTEEN, SIXTEEN, SEVENTEEN, EIGHTEEN, NINETEEN, TWENTY, THIRTY, FORTY, FIFTY,
        SIXTY, SEVENTY, EIGHTY, NINETY, HUNDRED, THOUSAND, DOZEN, MILLION, BILLION,
    );
    words!(
        FIRST, SECOND, THIRD, FOURTH, FIFTH, SIXTH, SEVENTH, EIGHTH, NINTH, TENTH, ELEVENTH,
        TWELFTH, THIRTEENTH, FOURTEENTH, FIFTEENTH, TWENTIETH,
    );
    words!(
        MONDAY, TUESDAY, WEDNESDAY, THURSDAY, FRIDAY, SATURDAY, SUNDAY, MONDAYS, TUESDAYS,
        WEDNESDAYS, THURSDAYS, FRIDAYS, SATURDAYS, SUNDAYS,
    );
    words!(
        JANUARY, FEBRUARY, MARCH, APRIL, MAY, JUNE, JULY, AUGUST, SEPTEMBER, OCTOBER, NOVEMBER,
        DECEMBER,
    );
    words!(
        MINUTE, MINUTES, MIN, MINS, HOUR, HOURS, HR, HRS, DAY, DAYS, WEEK, WEEKS, MONTH, MONTHS,
        YEAR, YEARS, YR, YRS,
    );
    words!(
        A, AN, PER, ONCE, TWICE, TIMES, EVERY, EACH, TO, THROUGH, BETWEEN, AND, BUSINESS, WORKING,
        CALENDAR, PERCENT, PERCENTAGE, PCT, DOLLARS, DOLLAR, USD, MORE, LONGER, GREATER, ABOVE,
        LESS, FEWER, SHORTER, BELOW, LEAST, AT, MINIMUM, OF, THAN, OVER, EXCEEDING, MOST, UP,
        WITHIN, MAXIMUM, MAX, UNDER, EXCEED,
    );
}

/// The bytes (at most 8) as a little-endian word, zero above their length.
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

const SET20: u64 = 0x2020_2020_2020_2020;

/// Mask of the low `n` (at most 8) bytes of a word.
#[inline(always)]
fn mask64(n: usize) -> u64 {
    u64::MAX.checked_shr(64 - 8 * n as u32).unwrap_or(0)
}

/// Bytes `s..e` (at most 8) with bit 5 set in each, as a little-endian word.
#[inline(always)]
fn fold64(bytes: &[u8], s: usize, e: usize) -> u64 {
    let n = e - s;
    debug_assert!(n <= 8);
    let m = mask64(n);
    let x = match bytes.get(s..s + 8) {
        Some(b) => u64::from_le_bytes(b.try_into().unwrap_or([0; 8])),
        None => load_le(&bytes[s..e]),
    };
    (x | SET20) & m
}

/// Whether the `n` low bytes of a folded word are all ASCII letters.
#[inline(always)]
fn letters64(x: u64, n: usize) -> bool {
    const LANES: u64 = u64::MAX / 0xff;
    let high = (LANES * 0x80) & mask64(n);
    let y = x & (LANES * 0x7f);
    // Per byte (no carries: each is below 0x80): high bit of `y + 0x1f` if at least b'a',
    // of `y + 0x05` if above b'z'.
    let ok = y.wrapping_add(LANES * 0x1f) & !y.wrapping_add(LANES * 0x05) & !x;
    ok & high == high
}

/// Bytes `s..e` with bit 5 set in each, as an integer (0 if over 16 bytes). For a word `t`
/// of lowercase ASCII letters, `fold_at(..) == w::word(t)` exactly when the bytes
/// `eq_ignore_ascii_case(t)`: setting bit 5 maps only a letter's capital onto it.
#[inline(always)]
fn fold_at(bytes: &[u8], s: usize, e: usize) -> u128 {
    if e - s <= 8 {
        fold64(bytes, s, e) as u128
    } else {
        fold_long(&bytes[s..e])
    }
}

/// `fold_at` of 9 bytes or more.
#[inline(never)]
fn fold_long(b: &[u8]) -> u128 {
    let n = b.len();
    if n > 16 {
        return 0;
    }
    if n <= 8 {
        return fold64(b, 0, n) as u128;
    }
    fold64(b, 0, 8) as u128 | (fold64(b, 8, n) as u128) << 64
}

/// The text `Lower::new` gives for bytes `s..e` of `text`, as a folded word (0 if over 16
/// bytes), given `x = fold_at(text, s, e)`: `lower_from(..) == w::word(t)` exactly when
/// `Lower::new(word).bytes() == t`.
#[inline(always)]
fn lower_from(x: u128, text: &str, s: usize, e: usize) -> u128 {
    let n = e - s;
    // Only ASCII letters (most words): `Lower::new` just lowercases them.
    let letters = if n <= 8 {
        letters64(x as u64, n)
    } else {
        n <= 16 && letters64(x as u64, 8) && letters64((x >> 64) as u64, n - 8)
    };
    if letters { x } else { lower_slow(&text[s..e]) }
}

#[inline(never)]
fn lower_slow(word: &str) -> u128 {
    // `Lower::new` never yields an ASCII capital, so folding its bytes changes nothing that
    // could match a word of the lists.
    fold_long(Lower::new(word).bytes())
}

/// `fold_at` of a token's text.
#[inline(always)]
fn fold_tok(t: &Token, bytes: &[u8]) -> u128 {
    fold_at(bytes, t.start as usize, t.end as usize)
}

/// What a quantity word stands for.
#[derive(Clone, Copy)]
enum Word {
    Number(f64),
    Ordinal(f64),
    Weekday(f64),
    Month(f64),
    Time(Unit),
    Other,
}

/// The quantity words and what they stand for.
const CLASSES: [(u128, Word); 93] = {
    use Word::*;
    [
        (w::ZERO, Number(0.0)),
        (w::ONE, Number(1.0)),
        (w::TWO, Number(2.0)),
        (w::THREE, Number(3.0)),
        (w::FOUR, Number(4.0)),
        (w::FIVE, Number(5.0)),
        (w::SIX, Number(6.0)),
        (w::SEVEN, Number(7.0)),
        (w::EIGHT, Number(8.0)),
        (w::NINE, Number(9.0)),
        (w::TEN, Number(10.0)),
        (w::ELEVEN, Number(11.0)),
        (w::TWELVE, Number(12.0)),
        (w::THIRTEEN, Number(13.0)),
        (w::FOURTEEN, Number(14.0)),
        (w::FIFTEEN, Number(15.0)),
        (w::SIXTEEN, Number(16.0)),
        (w::SEVENTEEN, Number(17.0)),
        (w::EIGHTEEN, Number(18.0)),
        (w::NINETEEN, Number(19.0)),
        (w::TWENTY, Number(20.0)),
        (w::THIRTY, Number(30.0)),
        (w::FORTY, Number(40.0)),
        (w::FIFTY, Number(50.0)),
        (w::SIXTY, Number(60.0)),
        (w::SEVENTY, Number(70.0)),
        (w::EIGHTY, Number(80.0)),
        (w::NINETY, Number(90.0)),
        (w::HUNDRED, Number(100.0)),
        (w::THOUSAND, Number(1000.0)),
        (w::DOZEN, Number(12.0)),
        (w::MILLION, Number(1e6)),
        (w::BILLION, Number(1e9)),
        (w::FIRST, Ordinal(1.0)),
        (w::SECOND, Ordinal(2.0)),
        (w::THIRD, Ordinal(3.0)),
        (w::FOURTH, Ordinal(4.0)),
        (w::FIFTH, Ordinal(5.0)),
        (w::SIXTH, Ordinal(6.0)),
        (w::SEVENTH, Ordinal(7.0)),
        (w::EIGHTH, Ordinal(8.0)),
        (w::NINTH, Ordinal(9.0)),
        (w::TENTH, Ordinal(10.0)),
        (w::ELEVENTH, Ordinal(11.0)),
        (w::TWELFTH, Ordinal(12.0)),
        (w::THIRTEENTH, Ordinal(13.0)),
        (w::FOURTEENTH, Ordinal(14.0)),
        (w::FIFTEENTH, Ordinal(15.0)),
        (w::TWENTIETH, Ordinal(20.0)),
        (w::MONDAY, Weekday(1.0)),
        (w::TUESDAY, Weekday(2.0)),
        (w::WEDNESDAY, Weekday(3.0)),
        (w::THURSDAY, Weekday(4.0)),
        (w::FRIDAY, Weekday(5.0)),
        (w::SATURDAY, Weekday(6.0)),
        (w::SUNDAY, Weekday(7.0)),
        (w::MONDAYS, Weekday(1.0)),
        (w::TUESDAYS, Weekday(2.0)),
        (w::WEDNESDAYS, Weekday(3.0)),
        (w::THURSDAYS, Weekday(4.0)),
        (w::FRIDAYS, Weekday(5.0)),
        (w::SATURDAYS, Weekday(6.0)),
        (w::SUNDAYS, Weekday(7.0)),
        (w::JANUARY, Month(1.0)),
        (w::FEBRUARY, Month(2.0)),
        (w::MARCH, Month(3.0)),
        (w::APRIL, Month(4.0)),
        (w::MAY, Month(5.0)),
        (w::JUNE, Month(6.0)),
        (w::JULY, Month(7.0)),
        (w::AUGUST, Month(8.0)),
        (w::SEPTEMBER, Month(9.0)),
        (w::OCTOBER, Month(10.0)),
        (w::NOVEMBER, Month(11.0)),
        (w::DECEMBER, Month(12.0)),
        (w::MINUTE, Time(Unit::Minute)),
        (w::MINUTES, Time(Unit::Minute)),
        (w::MIN, Time(Unit::Minute)),
        (w::MINS, Time(Unit::Minute)),
        (w::HOUR, Time(Unit::Hour)),
        (w::HOURS, Time(Unit::Hour)),
        (w::HR, Time(Unit::Hour)),
        (w::HRS, Time(Unit::Hour)),
        (w::DAY, Time(Unit::Day)),
        (w::DAYS, Time(Unit::Day)),
        (w::WEEK, Time(Unit::Week)),
        (w::WEEKS, Time(Unit::Week)),
        (w::MONTH, Time(Unit::MonthSpan)),
        (w::MONTHS, Time(Unit::MonthSpan)),
        (w::YEAR, Time(Unit::Year)),
        (w::YEARS, Time(Unit::Year)),
        (w::YR, Time(Unit::Year)),
        (w::YRS, Time(Unit::Year)),
    ]
};

const CLASS_BITS: u32 = 10;

/// Slot of a folded word in `CLASS_TABLE`: the multiplier was searched for so that no two
/// of the `CLASSES` and `BOUND_WORDS` share a slot (the table's construction checks it), so
/// a lookup is one compare.
#[inline(always)]
const fn class_slot(x: u128) -> usize {
    let h = (x as u64 ^ ((x >> 64) as u64).rotate_left(29)).wrapping_mul(0x5C90_A958_7403_E431);
    (h >> (64 - CLASS_BITS)) as usize
}

/// The key of an empty slot of `CLASS_TABLE`: sixteen 0xFF bytes, which no UTF-8 text folds
/// to (each byte would be 0xDF or 0xFF, and a 0xDF lead byte needs a continuation byte, below
/// 0xC0), unlike 0 (the folded empty or too long word), so a lookup is one compare.
const EMPTY: u128 = u128::MAX;

/// `CLASSES` and `BOUND_WORDS` by `class_slot` (key `EMPTY`: empty).
static CLASS_TABLE: [(u128, Word, Before); 1 << CLASS_BITS] = {
    let mut t = [(EMPTY, Word::Other, Before::None); 1 << CLASS_BITS];
    let mut k = 0;
    while k < CLASSES.len() {
        let s = class_slot(CLASSES[k].0);
        assert!(
            t[s].0 == EMPTY,
            "two quantity words share a slot: search another multiplier"
        );
        t[s].0 = CLASSES[k].0;
        t[s].1 = CLASSES[k].1;
        k += 1;
    }
    let mut k = 0;
    while k < BOUND_WORDS.len() {
        let (x, b) = BOUND_WORDS[k];
        let s = class_slot(x);
        assert!(
            t[s].0 == EMPTY || t[s].0 == x,
            "two quantity words share a slot: search another multiplier"
        );
        t[s].0 = x;
        t[s].2 = b;
        k += 1;
    }
    t
};

/// The quantity meaning of a lowercased word (see `lower_at`).
#[inline(always)]
fn classify(x: u128) -> Word {
    let (k, c, _) = CLASS_TABLE[class_slot(x)];
    if k == x { c } else { Word::Other }
}

/// `classify(lower_from(x, text, s, e))`, looking the folded word up first: a word of the
/// lists is all ASCII letters, which `Lower::new` leaves as folded, so a hit needs no check.
#[inline(always)]
fn classify_from(x: u128, text: &str, s: usize, e: usize) -> Word {
    let (k, c, _) = CLASS_TABLE[class_slot(x)];
    if k == x {
        return c;
    }
    classify_miss(x, text, s, e)
}

/// `classify_from` of a word that is not in the table as folded.
#[inline]
fn classify_miss(x: u128, text: &str, s: usize, e: usize) -> Word {
    let n = e - s;
    let letters = if n <= 8 {
        letters64(x as u64, n)
    } else {
        n <= 16 && letters64(x as u64, 8) && letters64((x >> 64) as u64, n - 8)
    };
    // Only ASCII letters: lowercasing gives the folded word, which is no word of the lists.
    if letters {
        Word::Other
    } else {
        classify(lower_slow(&text[s..e]))
    }
}

const TIME_BITS: u32 = 5;

/// Slot of a folded time unit (at most eight letters) in `TIME_TABLE`: the multiplier was
/// searched for so that no two share a slot (the table's construction checks it).
#[inline(always)]
const fn time_slot(x: u64) -> usize {
    (x.wrapping_mul(0x781F_9C58_D664_5FA9) >> (64 - TIME_BITS)) as usize
}

/// The time units of `CLASSES` by `time_slot` (key `u64::MAX`: empty; no UTF-8 text folds to
/// it, as to `EMPTY`): a smaller lookup than `CLASS_TABLE` for a word after a number.
static TIME_TABLE: [(u64, Unit); 1 << TIME_BITS] = {
    let mut t = [(u64::MAX, Unit::Bare); 1 << TIME_BITS];
    let mut k = 0;
    while k < CLASSES.len() {
        if let (x, Word::Time(u)) = CLASSES[k] {
            assert!(x >> 64 == 0);
            let s = time_slot(x as u64);
            assert!(
                t[s].0 == u64::MAX,
                "two time units share a slot: search another multiplier"
            );
            t[s] = (x as u64, u);
        }
        k += 1;
    }
    t
};

/// `time_unit(classify_from(x, text, s, e))`.
#[inline(always)]
fn time_from(x: u128, text: &str, s: usize, e: usize) -> Option<Unit> {
    if x >> 64 == 0 {
        let (k, u) = TIME_TABLE[time_slot(x as u64)];
        if k == x as u64 {
            return Some(u);
        }
    }
    // Not a time unit as folded: only lowercasing could make one.
    time_unit(classify_miss(x, text, s, e))
}

/// `classify` of a token's lowercased text.
#[inline(always)]
fn classify_tok(t: &Token, text: &str) -> Word {
    let (s, e) = (t.start as usize, t.end as usize);
    classify_from(fold_at(text.as_bytes(), s, e), text, s, e)
}

#[inline]
fn time_unit(c: Word) -> Option<Unit> {
    match c {
        Word::Time(u) => Some(u),
        _ => None,
    }
}

#[inline]
fn weekday(c: Word) -> Option<f64> {
    match c {
        Word::Weekday(d) => Some(d),
        _ => None,
    }
}

/// "19th", "32nd", "1st", "3rd".
pub(crate) fn ordinal_digits(w: &str) -> Option<f64> {
    let digits = w.bytes().take_while(|b| b.is_ascii_digit()).count();
    if digits == 0 {
        return None;
    }
    match &w[digits..] {
        "st" | "nd" | "rd" | "th" => w[..digits].parse().ok(),
        _ => None,
    }
}

/// `ordinal_digits` of the lowercased word ("19TH"), without lowercasing it.
fn ordinal_digits_any_case(b: &[u8]) -> Option<f64> {
    let digits = b.iter().take_while(|b| b.is_ascii_digit()).count();
    if digits == 0 || b.len() != digits + 2 {
        return None;
    }
    match [b[digits] | 0x20, b[digits + 1] | 0x20] {
        [b's', b't'] | [b'n', b'd'] | [b'r', b'd'] | [b't', b'h'] => {
            std::str::from_utf8(&b[..digits]).ok()?.parse().ok()
        }
        _ => None,
    }
}

/// `time_unit` of a token's lowercased text. Only a `TIME` token can be one (the tokenizer
/// flags exactly these words), so the others are not lowercased.
#[inline]
fn token_time_unit(t: &Token, text: &str) -> Option<Unit> {
    if t.flags & crate::text::TIME == 0 {
        return None;
    }
    let (s, e) = (t.start as usize, t.end as usize);
    time_from(fold_at(text.as_bytes(), s, e), text, s, e)
}

/// Exact powers of ten.
const POW10: [f64; 16] = [
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
];

fn number_value(word: &[u8]) -> Option<f64> {
    // Fast path: up to 15 digits (with thousands separators and at most one decimal point)
    // are an exact integer over an exact power of ten, and one division rounds that
    // correctly, as `parse` does.
    let mut v = 0u64;
    let mut digits = 0u32;
    let mut frac = 0usize;
    let mut point = false;
    for &b in word {
        let d = b.wrapping_sub(b'0');
        if d < 10 {
            // Wraps only past 19 digits, which take the slow path.
            v = v.wrapping_mul(10).wrapping_add(d as u64);
            digits += 1;
            frac += point as usize;
        } else if b == b'.' && !point {
            point = true;
        } else if b != b',' {
            return number_value_slow(word);
        }
    }
    if digits == 0 || digits > 15 {
        return number_value_slow(word);
    }
    // Below 2^53: exact as a signed integer too, which converts in one instruction.
    let v = v as i64 as f64;
    Some(if frac == 0 { v } else { v / POW10[frac] })
}

#[inline(never)]
fn number_value_slow(word: &[u8]) -> Option<f64> {
    let mut buf = [0u8; 40];
    let mut n = 0;
    for &b in word {
        if b == b',' {
            continue;
        }
        if n >= buf.len() {
            return None;
        }
        buf[n] = b;
        n += 1;
    }
    std::str::from_utf8(&buf[..n]).ok()?.parse().ok()
}

/// The number a token stands for, if any, and whether it is an ordinal.
#[inline]
fn token_number(t: &Token, text: &str) -> Option<(f64, bool)> {
    if t.flags & QUANT == 0 {
        return None;
    }
    let word = &text.as_bytes()[t.start as usize..t.end as usize];
    if word[0].is_ascii_digit() {
        return digits_number(word);
    }
    word_number(classify_tok(t, text))
}

/// `token_number` of a quantity token starting with a digit.
#[inline]
fn digits_number(word: &[u8]) -> Option<(f64, bool)> {
    if let Some(v) = number_value(word) {
        return Some((v, false));
    }
    ordinal_digits_any_case(word).map(|v| (v, true))
}

/// `token_number` of a word's class.
#[inline]
fn word_number(c: Word) -> Option<(f64, bool)> {
    match c {
        Word::Number(v) => Some((v, false)),
        Word::Ordinal(v) => Some((v, true)),
        _ => None,
    }
}

/// Whether the gap between a token's end and the next token is a range dash: only spaces, '$' and dashes ('-',
/// '–', '—'), with at least one dash.
#[inline]
fn dash_gap(bytes: &[u8], a_end: u32, b: &Token) -> bool {
    let (s, e) = (a_end as usize, b.start as usize);
    if e == s + 1 {
        // One byte (most gaps are one space): a dash or not.
        return bytes[s] == b'-';
    }
    dash_gap_slow(&bytes[s..e])
}

fn dash_gap_slow(gap: &[u8]) -> bool {
    let mut dash = false;
    let mut k = 0;
    while k < gap.len() {
        match gap[k] {
            b'-' => dash = true,
            b' ' | b'$' => {}
            // '–' (E2 80 93) and '—' (E2 80 94).
            0xE2 if gap.get(k + 1) == Some(&0x80)
                && matches!(gap.get(k + 2), Some(0x93 | 0x94)) =>
            {
                dash = true;
                k += 2;
            }
            _ => return false,
        }
        k += 1;
    }
    dash
}

/// What a word right before a number says of its bound ("at least", "within", ...).
#[derive(Clone, Copy, PartialEq)]
enum Before {
    None,
    AtLeast,
    AtMost,
    /// "least": "at least".
    Least,
    /// "of": "minimum of", "maximum of".
    Of,
    /// "than": "more than", "less than".
    Than,
    /// "most": "at most".
    Most,
    /// "to": "up to".
    To,
    /// "exceed": "to exceed".
    Exceed,
}

/// The words right before a number that can bound it.
const BOUND_WORDS: [(u128, Before); 16] = [
    (w::LEAST, Before::Least),
    (w::MINIMUM, Before::AtLeast),
    (w::MIN, Before::AtLeast),
    (w::OF, Before::Of),
    (w::THAN, Before::Than),
    (w::OVER, Before::AtLeast),
    (w::ABOVE, Before::AtLeast),
    (w::EXCEEDING, Before::AtLeast),
    (w::MOST, Before::Most),
    (w::TO, Before::To),
    (w::WITHIN, Before::AtMost),
    (w::MAXIMUM, Before::AtMost),
    (w::MAX, Before::AtMost),
    (w::UNDER, Before::AtMost),
    (w::BELOW, Before::AtMost),
    (w::EXCEED, Before::Exceed),
];

/// A bit per first letter (its low five bits) of the `BOUND_WORDS`.
const BOUND_FIRST: u32 = {
    let mut f = 0u32;
    let mut k = 0;
    while k < BOUND_WORDS.len() {
        f |= 1 << (BOUND_WORDS[k].0 as u8 & 31);
        k += 1;
    }
    f
};

#[inline(always)]
fn bound_before(toks: &[Token], i: usize, bytes: &[u8]) -> Bound {
    let Some(p) = i.checked_sub(1).and_then(|k| toks.get(k)) else {
        return Bound::Exact;
    };
    // Most words before a number start with a letter no bound word starts with.
    match bytes.get(p.start as usize) {
        Some(&b) if BOUND_FIRST >> (b & 31) & 1 != 0 => {}
        _ => return Bound::Exact,
    }
    // Folded, not lowercased: the words match ASCII case-insensitively.
    let p1 = fold_tok(p, bytes);
    let (k, _, b) = CLASS_TABLE[class_slot(p1)];
    match b {
        _ if k != p1 => Bound::Exact,
        Before::None => Bound::Exact,
        Before::AtLeast => Bound::AtLeast,
        Before::AtMost => Bound::AtMost,
        _ => bound_two(toks, i, bytes, b),
    }
}

/// `bound_before` of a word that bounds only after another (`toks[i - 2]`).
#[inline(never)]
fn bound_two(toks: &[Token], i: usize, bytes: &[u8], b: Before) -> Bound {
    let p2 = if i >= 2 {
        fold_tok(&toks[i - 2], bytes)
    } else {
        0
    };
    match (b, p2) {
        (Before::Least, w::AT) => Bound::AtLeast,
        (Before::Of, w::MINIMUM) => Bound::AtLeast,
        (Before::Of, w::MAXIMUM) => Bound::AtMost,
        (Before::Than, w::MORE | w::GREATER | w::LONGER) => Bound::AtLeast,
        (Before::Than, w::LESS | w::FEWER | w::SHORTER) => Bound::AtMost,
        (Before::Most, w::AT) => Bound::AtMost,
        (Before::To, w::UP) => Bound::AtMost,
        (Before::Exceed, w::TO) => Bound::AtMost,
        _ => Bound::Exact,
    }
}

/// The first token from `i` on that can start a quantity: a quantity token, or one before
/// a time unit ("a year"); `toks.len()` if none. The others need no look.
#[inline(always)]
fn next_start(toks: &[Token], i: usize) -> usize {
    let mut k = i;
    while let Some(t) = toks.get(k) {
        let f = t.flags;
        if f & (QUANT | crate::text::TIME) != 0 {
            // The pair ending here, then the one starting here.
            if f & crate::text::TIME != 0 && k > i {
                return k - 1;
            }
            if f & QUANT != 0 {
                return k;
            }
        }
        k += 1;
    }
    toks.len()
}

/// Extract the quantities of a token sequence (tokens of `text`).
pub(crate) fn extract(text: &str, toks: &[Token], out: &mut Vec<Quantity>) {
    let bytes = text.as_bytes();
    let mut i = 0;
    loop {
        i = next_start(toks, i);
        let Some(t) = toks.get(i) else {
            break;
        };
        // "a year", "an hour".
        if bytes[t.start as usize] | 0x20 == b'a'
            && t.end - t.start <= 2
            && let Some(next) = toks.get(i + 1)
            && next.flags & crate::text::TIME != 0
            && matches!(fold_tok(t, bytes), w::A | w::AN)
            && let Some(unit) = time_unit(classify_tok(next, text))
            && !(i > 0
                && matches!(
                    fold_tok(&toks[i - 1], bytes),
                    w::PER | w::ONCE | w::TWICE | w::TIMES | w::EVERY | w::EACH
                ))
        {
            out.push(Quantity {
                lo: 1.0,
                hi: 1.0,
                unit,
                bound: bound_before(toks, i, bytes),
                start: t.start,
                end: next.end,
            });
            i += 2;
            continue;
        }
        if t.flags & QUANT == 0 {
            i += 1;
            continue;
        }
        let word = &bytes[t.start as usize..t.end as usize];
        let is_digits = word[0].is_ascii_digit();
        let number = if is_digits {
            // A word starting with a digit is no weekday or month name.
            digits_number(word)
        } else {
            match classify_tok(t, text) {
                Word::Weekday(d) => {
                    i = weekday_range(text, toks, i, d, out);
                    continue;
                }
                Word::Month(m) if t.flags & crate::text::CAP != 0 => {
                    out.push(Quantity {
                        lo: m,
                        hi: m,
                        unit: Unit::MonthName,
                        bound: Bound::Exact,
                        start: t.start,
                        end: t.end,
                    });
                    i += 1;
                    continue;
                }
                c => word_number(c),
            }
        };
        let Some((mut value, ordinal)) = number else {
            i += 1;
            continue;
        };
        let money = t.start > 0 && bytes[t.start as usize - 1] == b'$';
        let start = if money { t.start - 1 } else { t.start };
        let bound0 = bound_before(toks, i, bytes);
        let mut j = i + 1;
        // The end of `toks[j - 1]`.
        let mut end = t.end;
        // Compound word numbers: "twenty five", "three hundred", "1.5 million". Only a word
        // number (a quantity token without digits) continues one.
        while let Some(n) = toks.get(j) {
            if n.flags & (crate::text::DIGIT | QUANT) != QUANT
                || n.start as usize - end as usize > 1
            {
                break;
            }
            let Some((v, false)) = word_number(classify_tok(n, text)) else {
                break;
            };
            if v >= 100.0 {
                value *= v;
            } else if value >= 20.0 && value % 10.0 == 0.0 && v < 10.0 && !is_digits {
                value += v;
            } else {
                break;
            }
            end = n.end;
            j += 1;
        }
        let mut hi = value;
        // The folded word of `toks[j]` while `j` stays (see `fold_tok`).
        let mut next_fold = None;
        // Ranges: "3-5", "3–5", "3 to 5", "between 3 and 15".
        if !ordinal && let Some(n) = toks.get(j) {
            let ok = dash_gap(bytes, end, n);
            let k = if ok || !(2..=3).contains(&(n.end - n.start)) {
                // "to" and "and" have two and three letters.
                j
            } else {
                let f = fold_tok(n, bytes);
                next_fold = Some(f);
                match f {
                    w::TO => j + 1,
                    w::AND if i > 0 && fold_tok(&toks[i - 1], bytes) == w::BETWEEN => j + 1,
                    _ => j,
                }
            };
            if (ok || k > j)
                && let Some(m) = toks.get(k)
                && let Some((v2, false)) = token_number(m, text)
                && v2 > value
            {
                hi = v2;
                end = m.end;
                j = k + 1;
                next_fold = None;
            }
        }
        let mut bound = bound0;
        let mut unit = Unit::Bare;
        if bytes.get(end as usize) == Some(&b'%') {
            unit = Unit::Percent;
            end += 1;
        } else if money {
            unit = Unit::Money;
        } else if ordinal {
            let noun = toks
                .get(j)
                .filter(|n| n.flags & (STOP | QUANT) == 0 && n.start - end <= 2);
            let Some(n) = noun else {
                // "born first", "finished third": an adverb, compared as a word.
                i = j;
                continue;
            };
            unit = Unit::Ordinal(n.key);
            end = n.end;
            j += 1;
        } else if let Some(n) = toks.get(j) {
            let (s, e) = (n.start as usize, n.end as usize);
            let f = next_fold.unwrap_or_else(|| fold_at(bytes, s, e));
            // Only a `TIME` token can be a time unit (see `token_time_unit`).
            let time = if n.flags & crate::text::TIME != 0 {
                time_from(f, text, s, e)
            } else {
                None
            };
            // The lowercased word, needed only without a time unit (0 matches no word; nor
            // does a word starting with a digit, which lowercasing keeps).
            let nw = if time.is_some() || bytes[s].is_ascii_digit() {
                0
            } else {
                lower_from(f, text, s, e)
            };
            if let Some(u) = time {
                unit = u;
                end = n.end;
                j += 1;
            } else if matches!(nw, w::BUSINESS | w::WORKING | w::CALENDAR)
                && let Some(m) = toks.get(j + 1)
                && matches!(token_time_unit(m, text), Some(Unit::Day))
            {
                unit = if nw == w::CALENDAR {
                    Unit::Day
                } else {
                    Unit::BusinessDay
                };
                end = m.end;
                j += 2;
            } else if matches!(nw, w::PERCENT | w::PERCENTAGE | w::PCT) {
                unit = Unit::Percent;
                end = n.end;
                j += 1;
            } else if matches!(nw, w::DOLLARS | w::DOLLAR | w::USD) {
                unit = Unit::Money;
                end = n.end;
                j += 1;
            } else if n.flags & (STOP | QUANT) == 0
                && n.start - end <= 2
                && !(is_digits && (1000.0..=2100.0).contains(&value) && value.fract() == 0.0)
            {
                (unit, end, j) = noun_unit(text, toks, j);
            }
        }
        if unit == Unit::Bare
            && is_digits
            && (1000.0..=2100.0).contains(&value)
            && value.fract() == 0.0
            && hi == value
            && !word.contains(&b',')
        {
            unit = Unit::CalendarYear;
        }
        // Trailing bound: "30 days or more", "10 or fewer".
        if let Some(a) = toks.get(j)
            && a.end - a.start == 2
            && let Some(b) = toks.get(j + 1)
            // `fold_tok(a, bytes) == w::OR` of two bytes, without building the word.
            && bytes[a.start as usize] | 0x20 == b'o'
            && bytes[a.start as usize + 1] | 0x20 == b'r'
        {
            match fold_tok(b, bytes) {
                w::MORE | w::LONGER | w::GREATER | w::ABOVE => bound = Bound::AtLeast,
                w::LESS | w::FEWER | w::SHORTER | w::BELOW => bound = Bound::AtMost,
                _ => {}
            }
        }
        out.push(Quantity {
            lo: value,
            hi,
            unit,
            bound,
            start,
            end,
        });
        i = j.max(i + 1);
    }
}

/// The unit of a number followed by the noun `toks[j]`: a time unit a few words on ("240
/// annual leave hours") or the noun; with the end and the token to go on from.
#[inline(never)]
fn noun_unit(text: &str, toks: &[Token], j: usize) -> (Unit, u32, usize) {
    let later = (j + 1..(j + 3).min(toks.len()))
        .take_while(|&k| toks[k].flags & (STOP | QUANT) == 0)
        .find_map(|k| token_time_unit(&toks[k], text).map(|u| (k, u)));
    match later {
        Some((k, u)) => (u, toks[k].end, k + 1),
        None => (Unit::Other(toks[j].key), toks[j].end, j + 1),
    }
}

/// The weekday at token `i` (`d`), or a range of them ("Monday - Friday", "Monday through
/// Friday"); returns the token to go on from.
#[inline(never)]
fn weekday_range(
    text: &str,
    toks: &[Token],
    mut i: usize,
    d: f64,
    out: &mut Vec<Quantity>,
) -> usize {
    let bytes = text.as_bytes();
    let t = &toks[i];
    let mut q = Quantity {
        lo: d,
        hi: d,
        unit: Unit::Weekday,
        bound: Bound::Exact,
        start: t.start,
        end: t.end,
    };
    if let Some(n) = toks.get(i + 1) {
        let (j, ok) = if dash_gap(bytes, t.end, n) {
            (i + 1, true)
        } else if matches!(fold_tok(n, bytes), w::TO | w::THROUGH) {
            (i + 2, true)
        } else {
            (i + 1, false)
        };
        if ok
            && let Some(m) = toks.get(j)
            && let Some(d2) = weekday(classify_tok(m, text))
        {
            q.hi = d2.max(d);
            q.lo = d2.min(d);
            q.end = m.end;
            i = j;
        }
    }
    out.push(q);
    i + 1
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::text::tokenize;

    fn quants(text: &str) -> Vec<(f64, f64, Unit, Bound, String)> {
        let mut toks = Vec::new();
        tokenize(text, &[], true, &mut toks);
        let mut q = Vec::new();
        extract(text, &toks, &mut q);
        q.iter()
            .map(|q| (q.lo, q.hi, q.unit, q.bound, q.text(text).to_owned()))
            .collect()
    }

    #[test]
    fn durations_money_percent_ranges() {
        let q = quants("within 5 business days, at least 80% of your time, a $35 fee, $191,900");
        assert_eq!(
            q[0],
            (
                5.0,
                5.0,
                Unit::BusinessDay,
                Bound::AtMost,
                "5 business days".into()
            )
        );
        assert_eq!(
            q[1],
            (80.0, 80.0, Unit::Percent, Bound::AtLeast, "80%".into())
        );
        assert_eq!(q[2].2, Unit::Money);
        assert_eq!(q[3].0, 191_900.0);
        let q = quants(
            "processed within 5-7 working days; between 3 and 15 hours; 3 to 5 weeks; 3–5 days",
        );
        assert_eq!((q[0].0, q[0].1, q[0].2), (5.0, 7.0, Unit::BusinessDay));
        assert_eq!((q[1].0, q[1].1, q[1].2), (3.0, 15.0, Unit::Hour));
        assert_eq!((q[2].0, q[2].1, q[2].2), (3.0, 5.0, Unit::Week));
        assert_eq!((q[3].0, q[3].1, q[3].2), (3.0, 5.0, Unit::Day));
    }

    #[test]
    fn words_weekdays_years() {
        let q = quants(
            "80 hours in a two week pay period, every Wednesday, in 2006, twenty five days, a year",
        );
        assert_eq!(q[1].0, 2.0);
        assert_eq!(q[1].2, Unit::Week);
        assert_eq!(q[2].2, Unit::Weekday);
        assert_eq!(q[3].2, Unit::CalendarYear);
        assert_eq!((q[4].0, q[4].2), (25.0, Unit::Day));
        assert_eq!((q[5].0, q[5].2), (1.0, Unit::Year));
        let q = quants("Monday - Friday");
        assert_eq!((q[0].0, q[0].1), (1.0, 5.0));
    }
}
