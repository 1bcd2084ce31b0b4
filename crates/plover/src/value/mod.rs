//! Field values: as text here (the date and date-time forms every input accepts and every
//! output writes, the case folding of `ilike`, and the check every client text passes), and,
//! inside Plover, the kinds the derive reads from field types (`kind`) and typed filter values
//! (`param`).

pub(crate) mod kind;
pub(crate) mod param;

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

/// Today's date in UTC, the usual `#[rest(default = plover::value::today())]` of dates.
///
/// ```
/// let today = plover::value::today();
/// assert_eq!(today, plover::value::now().date());
/// ```
pub fn today() -> NaiveDate {
    chrono::Utc::now().date_naive()
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

/// Two decimal digits of `n` (below 100).
fn two_digits(n: u32) -> [u8; 2] {
    [b'0' + (n / 10 % 10) as u8, b'0' + (n % 10) as u8]
}

/// `YYYY-MM-DD` of a date whose year has four digits (every year people write), else `None`.
fn date_ascii(date: &NaiveDate) -> Option<[u8; 10]> {
    use chrono::Datelike;
    let year = u32::try_from(date.year())
        .ok()
        .filter(|year| *year <= 9999)?;
    let [y0, y1] = two_digits(year / 100);
    let [y2, y3] = two_digits(year % 100);
    let [m0, m1] = two_digits(date.month());
    let [d0, d1] = two_digits(date.day());
    Some([y0, y1, y2, y3, b'-', m0, m1, b'-', d0, d1])
}

/// `YYYY-MM-DD HH:MM:SS` of a date-time whose year has four digits, else `None`.
fn date_time_ascii(value: &NaiveDateTime) -> Option<[u8; 19]> {
    let [y0, y1, y2, y3, _, m0, m1, _, d0, d1] = date_ascii(&value.date())?;
    let seconds = value.num_seconds_from_midnight();
    let [h0, h1] = two_digits(seconds / 3600);
    let [i0, i1] = two_digits(seconds / 60 % 60);
    let [s0, s1] = two_digits(seconds % 60);
    Some([
        y0, y1, y2, y3, b'-', m0, m1, b'-', d0, d1, b' ', h0, h1, b':', i0, i1, b':', s0, s1,
    ])
}

/// Appends `text` to a JSON body as a string: dates and date-times are made of digits, `-`,
/// `:` and spaces only, so nothing in them needs escaping.
fn push_quoted(text: &[u8], out: &mut Vec<u8>) {
    out.push(b'"');
    out.extend_from_slice(text);
    out.push(b'"');
}

/// A date as it is written everywhere (JSON, forms, CSV): `YYYY-MM-DD`. Written without a
/// format string, as it runs for every date of every row.
#[derive(Debug, Clone, Copy)]
pub(crate) struct DateText<'a>(pub(crate) &'a NaiveDate);

impl DateText<'_> {
    /// Calls `f` with the text: on the stack for four-digit years.
    pub(crate) fn with_text<R>(&self, f: impl FnOnce(&str) -> R) -> R {
        use chrono::Datelike;
        let date = self.0;
        match date_ascii(date) {
            Some(ascii) => f(std::str::from_utf8(&ascii).unwrap_or_default()),
            // Outside four-digit years: the year as it is (no `+` sign), then as above.
            None => f(&format!(
                "{:04}-{:02}-{:02}",
                date.year(),
                date.month(),
                date.day()
            )),
        }
    }

    /// Appends the text as a JSON string: what serializing it gives, without the escaping.
    pub(crate) fn write_json(&self, out: &mut Vec<u8>) {
        match date_ascii(self.0) {
            Some(ascii) => push_quoted(&ascii, out),
            None => self.with_text(|text| push_quoted(text.as_bytes(), out)),
        }
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
        let value = self.0;
        match date_time_ascii(value) {
            Some(ascii) => f(std::str::from_utf8(&ascii).unwrap_or_default()),
            None => f(&format!(
                "{} {}",
                DateText(&value.date()),
                value.time().format("%H:%M:%S")
            )),
        }
    }

    /// Appends the text as a JSON string: what serializing it gives, without the escaping.
    pub(crate) fn write_json(&self, out: &mut Vec<u8>) {
        match date_time_ascii(self.0) {
            Some(ascii) => push_quoted(&ascii, out),
            None => self.with_text(|text| push_quoted(text.as_bytes(), out)),
        }
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
/// strings at it). Every text value from a client passes here (docs/contract.md#bounded-cost).
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
