//! Field values as text: the date and date-time forms every input accepts and every output
//! writes, the case folding of `ilike`, and the check every client text passes.

use chrono::{NaiveDate, NaiveDateTime};

/// The form of dates (`YYYY-MM-DD`), read and written.
pub const DATE_FORMAT: &str = "%Y-%m-%d";

/// The current UTC time, the usual `#[rest(default = plover::value::now())]` of date-times.
pub fn now() -> NaiveDateTime {
    chrono::Utc::now().naive_utc()
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

/// Appends `value` as exactly `width` digits (zero-padded; wider values are written whole).
fn push_digits(out: &mut Vec<u8>, value: u32, width: usize) {
    let mut buf = [b'0'; 10];
    let mut n = value;
    let mut i = buf.len();
    loop {
        i -= 1;
        buf[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    let start = i.min(buf.len() - width);
    out.extend_from_slice(&buf[start..]);
}

/// Appends `YYYY-MM-DD`, the form every date is written in (JSON, forms, CSV); written without
/// a format string, as it runs for every date of every row.
pub(crate) fn write_date(out: &mut Vec<u8>, date: &NaiveDate) {
    use chrono::Datelike;
    if !(0..=9999).contains(&date.year()) {
        // Outside four-digit years: the year as it is (no `+` sign), then as below.
        let text = format!("{:04}-{:02}-{:02}", date.year(), date.month(), date.day());
        out.extend_from_slice(text.as_bytes());
        return;
    }
    push_digits(out, date.year() as u32, 4);
    out.push(b'-');
    push_digits(out, date.month(), 2);
    out.push(b'-');
    push_digits(out, date.day(), 2);
}

/// Appends `YYYY-MM-DD HH:MM:SS`, the form every date-time is written in (fractional seconds
/// are truncated).
pub(crate) fn write_datetime(out: &mut Vec<u8>, value: &NaiveDateTime) {
    use chrono::Timelike;
    write_date(out, &value.date());
    out.push(b' ');
    push_digits(out, value.hour(), 2);
    out.push(b':');
    push_digits(out, value.minute(), 2);
    out.push(b':');
    push_digits(out, value.second(), 2);
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
pub fn check_text(text: &str) -> Result<(), String> {
    if text.contains('\0') {
        Err("text must not contain the character U+0000".to_owned())
    } else {
        Ok(())
    }
}
