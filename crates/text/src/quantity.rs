//! Quantities: numbers (digits and words), ranges, money, percentages, durations, weekdays,
//! month names, calendar years and ordinals, with their bounds ("at least", "up to", ...).
//!
//! Every quantity word is one line of [`WORDS`]: the tokenizer flags it (`QUANT` or `TIME`)
//! and [`extract`] reads it from there.

use std::sync::LazyLock;

use rustc_hash::FxHashMap;

use crate::fold::fold;
use crate::token::{CAP, DIGIT, QUANT, STOP, TIME, Token};

/// What a quantity counts or measures.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Unit {
    /// A number with no recognised unit.
    Bare,
    /// A percentage ("15%", "15 percent").
    Percent,
    /// An amount of money ("$40", "40 dollars").
    Money,
    /// A span of time in a unit of this many days (seconds to years; a month is a twelfth of a
    /// year, so "twelve months" is "one year").
    Days(f64),
    /// Business or working days.
    BusinessDay,
    /// A day of the week, Monday 1 to Sunday 7.
    Weekday,
    /// A capitalised month name, January 1 to December 12.
    MonthName,
    /// A year written in digits, 1000 to 2100 ("2024").
    CalendarYear,
    /// An ordinal ("third season"), with the key of the noun after it (0 if none).
    Ordinal(u64),
    /// A count of something else ("6.213 km", "40 drug stores"): the key of the noun.
    Other(u64),
}

impl Unit {
    /// Days per unit, for a span of time.
    fn days(self) -> Option<f64> {
        match self {
            Unit::Days(days) => Some(days),
            Unit::BusinessDay => Some(1.0),
            _ => None,
        }
    }
}

/// What a quantity word stands for.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Word {
    /// A number word ("twelve", "dozen", "million"), with its value.
    Number(f64),
    /// An ordinal word ("third"), with its number.
    Ordinal(f64),
    /// Monday is 1.
    Weekday(f64),
    /// January is 1.
    Month(f64),
    /// A time unit, in days.
    Time(f64),
}

/// Seconds, minutes, hours and months in days.
const SECOND: f64 = 1.0 / 86400.0;
const MINUTE: f64 = 1.0 / 1440.0;
const HOUR: f64 = 1.0 / 24.0;
const MONTH: f64 = 365.0 / 12.0;

/// Two spans of time in different units are the same when they differ by at most this
/// fraction: "30 days" is "a month" (30.4 days), "4 weeks" (28 days) is not.
const DURATION_TOLERANCE: f64 = 0.02;

/// Every quantity word, folded (see [`crate::fold`]), and what it stands for. A new unit or
/// number word is one line here.
pub const WORDS: &[(&str, Word)] = {
    use Word::*;
    &[
        ("zero", Number(0.0)),
        ("one", Number(1.0)),
        ("two", Number(2.0)),
        ("three", Number(3.0)),
        ("four", Number(4.0)),
        ("five", Number(5.0)),
        ("six", Number(6.0)),
        ("seven", Number(7.0)),
        ("eight", Number(8.0)),
        ("nine", Number(9.0)),
        ("ten", Number(10.0)),
        ("eleven", Number(11.0)),
        ("twelve", Number(12.0)),
        ("thirteen", Number(13.0)),
        ("fourteen", Number(14.0)),
        ("fifteen", Number(15.0)),
        ("sixteen", Number(16.0)),
        ("seventeen", Number(17.0)),
        ("eighteen", Number(18.0)),
        ("nineteen", Number(19.0)),
        ("twenty", Number(20.0)),
        ("thirty", Number(30.0)),
        ("forty", Number(40.0)),
        ("fifty", Number(50.0)),
        ("sixty", Number(60.0)),
        ("seventy", Number(70.0)),
        ("eighty", Number(80.0)),
        ("ninety", Number(90.0)),
        ("hundred", Number(100.0)),
        ("thousand", Number(1000.0)),
        ("dozen", Number(12.0)),
        ("million", Number(1e6)),
        ("billion", Number(1e9)),
        ("first", Ordinal(1.0)),
        ("second", Ordinal(2.0)),
        ("third", Ordinal(3.0)),
        ("fourth", Ordinal(4.0)),
        ("fifth", Ordinal(5.0)),
        ("sixth", Ordinal(6.0)),
        ("seventh", Ordinal(7.0)),
        ("eighth", Ordinal(8.0)),
        ("ninth", Ordinal(9.0)),
        ("tenth", Ordinal(10.0)),
        ("eleventh", Ordinal(11.0)),
        ("twelfth", Ordinal(12.0)),
        ("thirteenth", Ordinal(13.0)),
        ("fourteenth", Ordinal(14.0)),
        ("fifteenth", Ordinal(15.0)),
        ("twentieth", Ordinal(20.0)),
        ("monday", Weekday(1.0)),
        ("tuesday", Weekday(2.0)),
        ("wednesday", Weekday(3.0)),
        ("thursday", Weekday(4.0)),
        ("friday", Weekday(5.0)),
        ("saturday", Weekday(6.0)),
        ("sunday", Weekday(7.0)),
        ("mondays", Weekday(1.0)),
        ("tuesdays", Weekday(2.0)),
        ("wednesdays", Weekday(3.0)),
        ("thursdays", Weekday(4.0)),
        ("fridays", Weekday(5.0)),
        ("saturdays", Weekday(6.0)),
        ("sundays", Weekday(7.0)),
        ("january", Month(1.0)),
        ("february", Month(2.0)),
        ("march", Month(3.0)),
        ("april", Month(4.0)),
        ("may", Month(5.0)),
        ("june", Month(6.0)),
        ("july", Month(7.0)),
        ("august", Month(8.0)),
        ("september", Month(9.0)),
        ("october", Month(10.0)),
        ("november", Month(11.0)),
        ("december", Month(12.0)),
        ("seconds", Time(SECOND)),
        ("secs", Time(SECOND)),
        ("minute", Time(MINUTE)),
        ("minutes", Time(MINUTE)),
        ("min", Time(MINUTE)),
        ("mins", Time(MINUTE)),
        ("hour", Time(HOUR)),
        ("hours", Time(HOUR)),
        ("hr", Time(HOUR)),
        ("hrs", Time(HOUR)),
        ("day", Time(1.0)),
        ("days", Time(1.0)),
        ("week", Time(7.0)),
        ("weeks", Time(7.0)),
        ("month", Time(MONTH)),
        ("months", Time(MONTH)),
        ("year", Time(365.0)),
        ("years", Time(365.0)),
        ("yr", Time(365.0)),
        ("yrs", Time(365.0)),
    ]
};

static MEANINGS: LazyLock<FxHashMap<&'static str, Word>> =
    LazyLock::new(|| WORDS.iter().copied().collect());

/// What a folded word stands for, if it is a quantity word.
pub fn meaning(folded: &str) -> Option<Word> {
    MEANINGS.get(folded).copied()
}

/// What a token stands for, if it is a quantity word.
fn token_meaning(t: &Token, text: &str) -> Option<Word> {
    with_folded(t.text(text), meaning)
}

/// `f` of the folded word. Quantity words are short ASCII words: those are folded in a stack
/// buffer, the others through [`fold`].
fn with_folded<R>(word: &str, f: impl FnOnce(&str) -> R) -> R {
    let mut buf = [0u8; 16];
    if word.len() <= buf.len() && word.bytes().all(|b| b.is_ascii_alphanumeric()) {
        for (d, b) in buf.iter_mut().zip(word.bytes()) {
            *d = b.to_ascii_lowercase();
        }
        f(std::str::from_utf8(&buf[..word.len()]).unwrap_or_default())
    } else {
        f(&fold(word))
    }
}

/// The time unit of a token, if it is one. Only a `TIME` token can be one.
fn token_time_unit(t: &Token, text: &str) -> Option<Unit> {
    if t.flags & TIME == 0 {
        return None;
    }
    time_unit(token_meaning(t, text))
}

fn time_unit(meaning: Option<Word>) -> Option<Unit> {
    match meaning {
        Some(Word::Time(days)) => Some(Unit::Days(days)),
        _ => None,
    }
}

/// Whether a token is one of `words` (ASCII case-insensitive).
fn is_any(t: &Token, text: &str, words: &[&str]) -> bool {
    let w = t.text(text);
    words.iter().any(|x| w.eq_ignore_ascii_case(x))
}

/// The bound words around a number put on it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Bound {
    /// No bound word: the value itself.
    Exact,
    /// "at least", "over", "minimum of", "or more", ...
    AtLeast,
    /// "at most", "up to", "within", "under", "or fewer", ...
    AtMost,
}

/// A quantity of a text.
#[derive(Debug, Clone, Copy)]
pub struct Quantity {
    /// The value, or the low end of a range ("3" in "3-5 days"), in `unit`.
    pub lo: f64,
    /// The high end of a range, in `unit`; equal to `lo` for a single value.
    pub hi: f64,
    /// What the value counts or measures.
    pub unit: Unit,
    /// Whether the value is exact, a minimum or a maximum.
    pub bound: Bound,
    /// Byte span of the number and its unit in the source text.
    pub start: u32,
    /// Byte offset just past the quantity's end in the source text.
    pub end: u32,
}

impl Quantity {
    /// The quantity's words in `text`, the source text it was extracted from.
    pub fn text<'t>(&self, text: &'t str) -> &'t str {
        &text[self.start as usize..self.end as usize]
    }
}

fn eq(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1.0)
}

/// Whether evidence quantity `e` states claim quantity `c` (same value, compatible unit).
pub fn states(c: &Quantity, e: &Quantity) -> bool {
    // Business days are not calendar days ("5 business days" is not "5 days").
    if (c.unit == Unit::BusinessDay) != (e.unit == Unit::BusinessDay)
        && c.unit.days().is_some()
        && e.unit.days().is_some()
    {
        return false;
    }
    let (clo, chi, elo, ehi) = match (c.unit.days(), e.unit.days()) {
        (Some(a), Some(b)) if a != b => {
            // Different units of time: the same span within the tolerance.
            let same = |x: f64, y: f64| (x - y).abs() <= DURATION_TOLERANCE * x.abs().max(y.abs());
            let (clo, chi, elo, ehi) = (c.lo * a, c.hi * a, e.lo * b, e.hi * b);
            return if same(clo, chi) {
                same(clo, elo) || (clo >= elo && clo <= ehi)
            } else {
                same(clo, elo) && same(chi, ehi)
            };
        }
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
pub fn comparable(c: &Quantity, e: &Quantity) -> bool {
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
pub fn bounds_conflict(c: &Quantity, e: &Quantity) -> bool {
    matches!(
        (c.bound, e.bound),
        (Bound::AtLeast, Bound::AtMost) | (Bound::AtMost, Bound::AtLeast)
    )
}

/// "19th", "32nd", "1st", "3RD": the number of an ordinal written with digits.
pub fn ordinal_digits(word: &str) -> Option<f64> {
    let digits = word.bytes().take_while(u8::is_ascii_digit).count();
    let suffix = word.get(digits..)?;
    if digits == 0
        || !["st", "nd", "rd", "th"]
            .iter()
            .any(|s| suffix.eq_ignore_ascii_case(s))
    {
        return None;
    }
    word[..digits].parse().ok()
}

/// The number a token stands for, if any, and whether it is an ordinal.
fn token_number(t: &Token, text: &str) -> Option<(f64, bool)> {
    if t.flags & QUANT == 0 {
        return None;
    }
    let word = t.text(text);
    if word.as_bytes()[0].is_ascii_digit() {
        return digits_number(word);
    }
    word_number(token_meaning(t, text))
}

/// The number of a word of digits ("1,000", "3.5", "2nd"), and whether it is an ordinal.
fn digits_number(word: &str) -> Option<(f64, bool)> {
    let value = if word.contains(',') {
        word.replace(',', "").parse()
    } else {
        word.parse()
    };
    if let Ok(v) = value {
        return Some((v, false));
    }
    ordinal_digits(word).map(|v| (v, true))
}

fn word_number(meaning: Option<Word>) -> Option<(f64, bool)> {
    match meaning {
        Some(Word::Number(v)) => Some((v, false)),
        Some(Word::Ordinal(v)) => Some((v, true)),
        _ => None,
    }
}

/// Whether the gap between a token's end and the next token is a range dash: only spaces,
/// '$' and dashes ('-', '–', '—'), with at least one dash.
fn dash_gap(text: &str, end: u32, next: &Token) -> bool {
    let gap = &text[end as usize..next.start as usize];
    gap.contains(['-', '–', '—'])
        && gap
            .chars()
            .all(|c| matches!(c, ' ' | '$' | '-' | '–' | '—'))
}

/// What a word right before a number says of its bound, alone or with the word before it.
#[derive(Clone, Copy, PartialEq)]
enum Before {
    AtLeast,
    AtMost,
    /// After "at": at least.
    Least,
    /// After "minimum" or "maximum".
    Of,
    /// After "more", "less", ...
    Than,
    /// After "at": at most.
    Most,
    /// After "up".
    To,
    /// After "to".
    Exceed,
}

/// The words right before a number that can bound it.
const BOUND_WORDS: &[(&str, Before)] = &[
    ("least", Before::Least),
    ("minimum", Before::AtLeast),
    ("min", Before::AtLeast),
    ("of", Before::Of),
    ("than", Before::Than),
    ("over", Before::AtLeast),
    ("above", Before::AtLeast),
    ("exceeding", Before::AtLeast),
    ("most", Before::Most),
    ("to", Before::To),
    ("within", Before::AtMost),
    ("maximum", Before::AtMost),
    ("max", Before::AtMost),
    ("under", Before::AtMost),
    ("below", Before::AtMost),
    ("exceed", Before::Exceed),
];

/// A word after a number that makes it a unit ("5 business days", "80 percent").
#[derive(Clone, Copy, PartialEq)]
enum UnitWord {
    None,
    BusinessDays,
    CalendarDays,
    Percent,
    Money,
}

/// Trailing bounds: "30 days or more", "10 or fewer".
const MORE: &[&str] = &["more", "longer", "greater", "above"];
const LESS: &[&str] = &["less", "fewer", "shorter", "below"];

/// The bound the words before `toks[i]` put on it.
fn bound_before(toks: &[Token], i: usize, text: &str) -> Bound {
    let Some(p) = i.checked_sub(1).map(|k| &toks[k]) else {
        return Bound::Exact;
    };
    let word = p.text(text);
    let Some(&(_, before)) = BOUND_WORDS
        .iter()
        .find(|(w, _)| word.eq_ignore_ascii_case(w))
    else {
        return Bound::Exact;
    };
    let Some(p2) = i.checked_sub(2).map(|k| &toks[k]) else {
        return match before {
            Before::AtLeast => Bound::AtLeast,
            Before::AtMost => Bound::AtMost,
            _ => Bound::Exact,
        };
    };
    let is = |words: &[&str]| is_any(p2, text, words);
    match before {
        Before::AtLeast => Bound::AtLeast,
        Before::AtMost => Bound::AtMost,
        Before::Least if is(&["at"]) => Bound::AtLeast,
        Before::Of if is(&["minimum"]) => Bound::AtLeast,
        Before::Of if is(&["maximum"]) => Bound::AtMost,
        Before::Than if is(&["more", "greater", "longer"]) => Bound::AtLeast,
        Before::Than if is(&["less", "fewer", "shorter"]) => Bound::AtMost,
        Before::Most if is(&["at"]) => Bound::AtMost,
        Before::To if is(&["up"]) => Bound::AtMost,
        Before::Exceed if is(&["to"]) => Bound::AtMost,
        _ => Bound::Exact,
    }
}

/// The first token from `i` on that can start a quantity: a quantity token, or one before a
/// time unit ("a year"); `toks.len()` if none.
fn next_start(toks: &[Token], i: usize) -> usize {
    for (k, t) in toks.iter().enumerate().skip(i) {
        if t.flags & TIME != 0 && k > i {
            return k - 1;
        }
        if t.flags & QUANT != 0 {
            return k;
        }
    }
    toks.len()
}

/// Extracts the quantities of a token sequence (tokens of `text`).
pub fn extract(text: &str, toks: &[Token], out: &mut Vec<Quantity>) {
    let bytes = text.as_bytes();
    let mut i = 0;
    loop {
        i = next_start(toks, i);
        let Some(t) = toks.get(i) else {
            break;
        };
        // "a year", "an hour", but not "once a year".
        if is_any(t, text, &["a", "an"])
            && let Some(next) = toks.get(i + 1)
            && let Some(unit) = token_time_unit(next, text)
            && !(i > 0
                && is_any(
                    &toks[i - 1],
                    text,
                    &["per", "once", "twice", "times", "every", "each"],
                ))
        {
            out.push(Quantity {
                lo: 1.0,
                hi: 1.0,
                unit,
                bound: bound_before(toks, i, text),
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
        let word = t.text(text);
        let is_digits = word.as_bytes()[0].is_ascii_digit();
        let number = if is_digits {
            // A word starting with a digit is no weekday or month name.
            digits_number(word)
        } else {
            match token_meaning(t, text) {
                Some(Word::Weekday(d)) => {
                    i = weekday_range(text, toks, i, d, out);
                    continue;
                }
                Some(Word::Month(m)) if t.flags & CAP != 0 => {
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
                meaning => word_number(meaning),
            }
        };
        let Some((mut value, ordinal)) = number else {
            i += 1;
            continue;
        };
        let money = t.start > 0 && bytes[t.start as usize - 1] == b'$';
        let start = if money { t.start - 1 } else { t.start };
        let mut bound = bound_before(toks, i, text);
        let mut j = i + 1;
        // The end of `toks[j - 1]`.
        let mut end = t.end;
        // Compound word numbers: "twenty five", "three hundred", "1.5 million". Only a word
        // number (a quantity token without digits) continues one.
        while let Some(n) = toks.get(j) {
            if n.flags & (DIGIT | QUANT) != QUANT || n.start - end > 1 {
                break;
            }
            let Some((v, false)) = word_number(token_meaning(n, text)) else {
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
        // Ranges: "3-5", "3–5", "3 to 5", "between 3 and 15".
        if !ordinal && let Some(n) = toks.get(j) {
            let dash = dash_gap(text, end, n);
            let to = !dash
                && (is_any(n, text, &["to"])
                    || (i > 0
                        && is_any(n, text, &["and"])
                        && is_any(&toks[i - 1], text, &["between"])));
            let k = if to { j + 1 } else { j };
            if (dash || to)
                && let Some(m) = toks.get(k)
                && let Some((v2, false)) = token_number(m, text)
                && v2 > value
            {
                hi = v2;
                end = m.end;
                j = k + 1;
            }
        }
        let calendar_year = is_digits && (1000.0..=2100.0).contains(&value) && value.fract() == 0.0;
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
            if let Some(u) = token_time_unit(n, text) {
                unit = u;
                end = n.end;
                j += 1;
            } else {
                let next = with_folded(n.text(text), |w| match w {
                    "business" | "working" => UnitWord::BusinessDays,
                    "calendar" => UnitWord::CalendarDays,
                    "percent" | "percentage" | "pct" => UnitWord::Percent,
                    "dollars" | "dollar" | "usd" => UnitWord::Money,
                    _ => UnitWord::None,
                });
                if matches!(next, UnitWord::BusinessDays | UnitWord::CalendarDays)
                    && let Some(m) = toks.get(j + 1)
                    && token_time_unit(m, text) == Some(Unit::Days(1.0))
                {
                    unit = if next == UnitWord::CalendarDays {
                        Unit::Days(1.0)
                    } else {
                        Unit::BusinessDay
                    };
                    end = m.end;
                    j += 2;
                } else if next == UnitWord::Percent {
                    unit = Unit::Percent;
                    end = n.end;
                    j += 1;
                } else if next == UnitWord::Money {
                    unit = Unit::Money;
                    end = n.end;
                    j += 1;
                } else if n.flags & (STOP | QUANT) == 0 && n.start - end <= 2 && !calendar_year {
                    (unit, end, j) = noun_unit(text, toks, j);
                }
            }
        }
        // A range with a unit on both ends: "6 months to a year", "30 minutes to 2 hours".
        if hi == value
            && let Some(days) = unit.days()
            && let Some(to) = toks.get(j)
            && is_any(to, text, &["to"])
            && let Some((v2, unit2, k)) = number_with_unit(text, toks, j + 1)
            && let Some(days2) = unit2.days()
            && v2 * days2 > value * days
        {
            hi = v2 * days2 / days;
            end = toks[k - 1].end;
            j = k;
        }
        if unit == Unit::Bare && calendar_year && hi == value && !word.contains(',') {
            unit = Unit::CalendarYear;
        }
        if let Some(a) = toks.get(j)
            && is_any(a, text, &["or"])
            && let Some(b) = toks.get(j + 1)
        {
            if is_any(b, text, MORE) {
                bound = Bound::AtLeast;
            } else if is_any(b, text, LESS) {
                bound = Bound::AtMost;
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

/// A number and its time unit at `toks[i]` ("a year", "2 hours"), with the token after it.
fn number_with_unit(text: &str, toks: &[Token], i: usize) -> Option<(f64, Unit, usize)> {
    let t = toks.get(i)?;
    let value = if is_any(t, text, &["a", "an"]) {
        1.0
    } else {
        match token_number(t, text)? {
            (v, false) => v,
            _ => return None,
        }
    };
    let unit = token_time_unit(toks.get(i + 1)?, text)?;
    Some((value, unit, i + 2))
}

/// The unit of a number followed by the noun `toks[j]`: a time unit a few words on ("240
/// annual leave hours") or the noun; with the end and the token to go on from.
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
fn weekday_range(
    text: &str,
    toks: &[Token],
    mut i: usize,
    d: f64,
    out: &mut Vec<Quantity>,
) -> usize {
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
        let j = if dash_gap(text, t.end, n) {
            Some(i + 1)
        } else if is_any(n, text, &["to", "through"]) {
            Some(i + 2)
        } else {
            None
        };
        if let Some(j) = j
            && let Some(m) = toks.get(j)
            && let Some(Word::Weekday(d2)) = token_meaning(m, text)
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
    use crate::token::tokenize;

    fn quants(text: &str) -> Vec<(f64, f64, Unit, Bound, String)> {
        let mut toks = Vec::new();
        tokenize(text, &[], true, &mut toks);
        let mut q = Vec::new();
        extract(text, &toks, &mut q);
        q.iter()
            .map(|q| (q.lo, q.hi, q.unit, q.bound, q.text(text).to_owned()))
            .collect()
    }

    const DAY: Unit = Unit::Days(1.0);
    const WEEK: Unit = Unit::Days(7.0);

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
        assert_eq!((q[1].0, q[1].1, q[1].2), (3.0, 15.0, Unit::Days(HOUR)));
        assert_eq!((q[2].0, q[2].1, q[2].2), (3.0, 5.0, WEEK));
        assert_eq!((q[3].0, q[3].1, q[3].2), (3.0, 5.0, DAY));
    }

    /// Exactly equivalent forms of one span of time state each other; near ones do not.
    #[test]
    fn equivalent_number_forms() {
        let one = |text: &str| {
            let mut toks = Vec::new();
            tokenize(text, &[], true, &mut toks);
            let mut q = Vec::new();
            extract(text, &toks, &mut q);
            assert_eq!(q.len(), 1, "{text}: {q:?}");
            q[0]
        };
        for (claim, evidence) in [
            ("twelve months", "one year"),
            ("two weeks", "14 days"),
            ("ten seconds", "10 seconds"),
            ("a month", "30 days"),
            ("six to twelve months", "6 months to a year"),
            ("90 minutes", "1.5 hours"),
        ] {
            assert!(states(&one(claim), &one(evidence)), "{claim} = {evidence}");
            assert!(states(&one(evidence), &one(claim)), "{evidence} = {claim}");
        }
        for (claim, evidence) in [
            ("4 weeks", "a month"),
            ("eleven months", "one year"),
            ("six to eleven months", "6 months to a year"),
            ("5 business days", "5 calendar days"),
        ] {
            assert!(
                !states(&one(claim), &one(evidence)),
                "{claim} != {evidence}"
            );
        }
        let range = one("6 months to a year");
        assert_eq!((range.lo, range.hi), (6.0, 12.0));
    }

    #[test]
    fn words_weekdays_years() {
        let q = quants(
            "80 hours in a two week pay period, every Wednesday, in 2006, twenty five days, a year",
        );
        assert_eq!(q[1].0, 2.0);
        assert_eq!(q[1].2, WEEK);
        assert_eq!(q[2].2, Unit::Weekday);
        assert_eq!(q[3].2, Unit::CalendarYear);
        assert_eq!((q[4].0, q[4].2), (25.0, DAY));
        assert_eq!((q[5].0, q[5].2), (1.0, Unit::Days(365.0)));
        let q = quants("Monday - Friday");
        assert_eq!((q[0].0, q[0].1), (1.0, 5.0));
    }

    #[test]
    fn bounds_before_and_after() {
        let q = quants("up to 3 days, no more than 5 hours, a minimum of 2 weeks, 10 or fewer");
        let bounds: Vec<Bound> = q.iter().map(|q| q.3).collect();
        assert_eq!(
            bounds,
            [Bound::AtMost, Bound::AtLeast, Bound::AtLeast, Bound::AtMost]
        );
    }

    /// A word added to `WORDS` is all it takes: every entry is flagged by the tokenizer and
    /// read by `extract`, and a time unit converts through its days.
    #[test]
    fn every_table_word_is_recognised() {
        for &(word, meaning) in WORDS {
            let mut toks = Vec::new();
            let capitalised = format!("{}{}", word[..1].to_uppercase(), &word[1..]);
            let text = format!("2 {word} and {capitalised}");
            tokenize(&text, &[], true, &mut toks);
            let flags = toks[1].flags;
            let q = quants(&text);
            match meaning {
                Word::Time(days) => {
                    assert_ne!(flags & TIME, 0, "{word}");
                    assert_eq!((q[0].0, q[0].2), (2.0, Unit::Days(days)), "{word}");
                    let two_days = Quantity {
                        lo: 2.0 * days,
                        hi: 2.0 * days,
                        unit: DAY,
                        bound: Bound::Exact,
                        start: 0,
                        end: 0,
                    };
                    let claimed = Quantity {
                        lo: 2.0,
                        hi: 2.0,
                        unit: Unit::Days(days),
                        ..two_days
                    };
                    assert!(states(&claimed, &two_days), "{word}");
                }
                Word::Month(m) => {
                    assert_eq!(flags & QUANT, 0, "{word}: a month only when capitalised");
                    assert_ne!(toks[3].flags & QUANT, 0, "{word}");
                    assert_eq!((q[1].0, q[1].2), (m, Unit::MonthName), "{word}");
                }
                Word::Number(_) | Word::Ordinal(_) | Word::Weekday(_) => {
                    assert_ne!(flags & QUANT, 0, "{word}");
                    assert_eq!(meaning_of_token(&text, &toks[1]), Some(meaning), "{word}");
                }
            }
        }
    }

    fn meaning_of_token(text: &str, t: &Token) -> Option<Word> {
        token_meaning(t, text)
    }
}
