//! Field values as text: the date and date-time forms every input accepts and every output
//! writes, the case folding of `ilike`, and the check every client text passes.

use std::fmt;

use chrono::{NaiveDate, NaiveDateTime, Timelike};

/// The form of dates (`YYYY-MM-DD`), read and written.
pub const DATE_FORMAT: &str = "%Y-%m-%d";

/// The current UTC time to the microsecond, the usual `#[rest(default = plover::value::now())]`
/// of date-times: what PostgreSQL's `TIMESTAMP` keeps, so that both engines store the same
/// value (SQLite would keep the text of every nanosecond).
pub fn now() -> NaiveDateTime {
    let now = chrono::Utc::now().naive_utc();
    now.with_nanosecond(now.nanosecond() / 1_000 * 1_000)
        .unwrap_or(now)
}

/// Parses `YYYY-MM-DD` (exactly that form).
pub fn parse_date(raw: &str) -> Option<NaiveDate> {
    if raw.len() != 10 {
        return None;
    }
    NaiveDate::parse_from_str(raw, DATE_FORMAT).ok()
}

/// Parses `YYYY-MM-DD HH:MM:SS`, `YYYY-MM-DDTHH:MM:SS` (optional fractional seconds) or
/// `YYYY-MM-DD` (midnight).
pub fn parse_datetime(raw: &str) -> Option<NaiveDateTime> {
    if let Some(date) = parse_date(raw) {
        return date.and_hms_opt(0, 0, 0);
    }
    if raw.len() < 19 || !raw.is_char_boundary(10) {
        return None;
    }
    let (date, rest) = raw.split_at(10);
    let sep = rest.as_bytes()[0];
    if sep != b' ' && sep != b'T' {
        return None;
    }
    let normalized = format!("{date} {}", &rest[1..]);
    NaiveDateTime::parse_from_str(&normalized, "%Y-%m-%d %H:%M:%S%.f").ok()
}

/// Up to 24 ASCII bytes on the stack: a date or date-time being written.
struct Ascii {
    buf: [u8; 24],
    len: usize,
}

impl Ascii {
    fn new() -> Ascii {
        Ascii {
            buf: [b'0'; 24],
            len: 0,
        }
    }

    fn push(&mut self, byte: u8) {
        if let Some(slot) = self.buf.get_mut(self.len) {
            *slot = byte;
            self.len += 1;
        }
    }

    /// `value` as exactly `width` digits (`value` has at most `width` digits).
    fn digits(&mut self, value: u32, width: usize) {
        let mut n = value;
        for place in (0..width).rev() {
            if let Some(slot) = self.buf.get_mut(self.len + place) {
                *slot = b'0' + (n % 10) as u8;
            }
            n /= 10;
        }
        self.len = (self.len + width).min(self.buf.len());
    }

    fn date(&mut self, date: &NaiveDate) {
        use chrono::Datelike;
        self.digits(date.year() as u32, 4);
        self.push(b'-');
        self.digits(date.month(), 2);
        self.push(b'-');
        self.digits(date.day(), 2);
    }

    fn as_str(&self) -> &str {
        std::str::from_utf8(&self.buf[..self.len]).unwrap_or_default()
    }
}

/// A date as it is written everywhere (JSON, forms, CSV): `YYYY-MM-DD`. Written without a
/// format string, as it runs for every date of every row.
#[derive(Debug, Clone, Copy)]
pub(crate) struct DateText<'a>(pub(crate) &'a NaiveDate);

impl DateText<'_> {
    /// Calls `f` with the text: on the stack for four-digit years (every year people write).
    pub(crate) fn with_text<R>(&self, f: impl FnOnce(&str) -> R) -> R {
        use chrono::Datelike;
        let date = self.0;
        if !(0..=9999).contains(&date.year()) {
            // Outside four-digit years: the year as it is (no `+` sign), then as below.
            let text = format!("{:04}-{:02}-{:02}", date.year(), date.month(), date.day());
            return f(&text);
        }
        let mut out = Ascii::new();
        out.date(date);
        f(out.as_str())
    }
}

impl fmt::Display for DateText<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.with_text(|text| f.write_str(text))
    }
}

/// A date-time as it is written everywhere: `YYYY-MM-DD HH:MM:SS` (fractional seconds are
/// truncated).
#[derive(Debug, Clone, Copy)]
pub(crate) struct DateTimeText<'a>(pub(crate) &'a NaiveDateTime);

impl DateTimeText<'_> {
    /// Calls `f` with the text: on the stack for four-digit years.
    pub(crate) fn with_text<R>(&self, f: impl FnOnce(&str) -> R) -> R {
        use chrono::{Datelike, Timelike};
        let value = self.0;
        if !(0..=9999).contains(&value.year()) {
            let date = DateText(&value.date()).to_string();
            return f(&format!("{date} {}", value.time().format("%H:%M:%S")));
        }
        let mut out = Ascii::new();
        out.date(&value.date());
        out.push(b' ');
        out.digits(value.hour(), 2);
        out.push(b':');
        out.digits(value.minute(), 2);
        out.push(b':');
        out.digits(value.second(), 2);
        f(out.as_str())
    }
}

impl fmt::Display for DateTimeText<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.with_text(|text| f.write_str(text))
    }
}

/// Text in the case `ilike` and the admin's lookups compare: each character lower-cased on its
/// own, to one character (`İ` is `i`, `Σ` is `σ` wherever it stands), as PostgreSQL's `ILIKE`
/// does. Rust's `str::to_lowercase` would turn `İ` into two characters (so `_` no longer
/// matches it) and a final `Σ` into `ς` (so `%Σ` no longer finds it): the engines would
/// disagree.
pub fn fold_case(text: &str) -> String {
    text.chars()
        .map(|c| c.to_lowercase().next().unwrap_or(c))
        .collect()
}

/// Refuses text that no engine stores the same: U+0000 (PostgreSQL refuses it, SQLite cuts C
/// strings at it). Every text value from a client passes here (SPEC.md section 15).
pub(crate) fn check_text(text: &str) -> Result<(), String> {
    if text.contains('\0') {
        Err("text must not contain the character U+0000".to_owned())
    } else {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use chrono::Timelike;

    #[test]
    fn now_keeps_whole_microseconds() {
        // The clock ticks in nanoseconds here: a hundred readings in a row that all land on a
        // whole microsecond by chance would be one in 10^300.
        for _ in 0..100 {
            assert_eq!(super::now().nanosecond() % 1_000, 0);
        }
    }
}
