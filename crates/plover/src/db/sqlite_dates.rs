//! Dates and date-times read from SQLite, which stores them as text: the text Plover writes
//! (`YYYY-MM-DD` and `YYYY-MM-DD HH:MM:SS[.fraction]`) is decoded by hand; anything else goes to
//! diesel's own decoding, which tries its list of formats (and Julian day numbers) one by one.
//! diesel parses every value with `chrono`'s format strings, which cost more than the rest of a
//! row's decoding: generated code loads date columns on SQLite through these two types.

use chrono::{NaiveDate, NaiveDateTime, NaiveTime};
use diesel::deserialize::{self, FromSql, FromSqlRow};
use diesel::sql_types::{Date, Timestamp};
use diesel::sqlite::{Sqlite, SqliteValue};

/// A `NaiveDateTime` decoded from SQLite text: Plover's own format by hand, any other by diesel.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, FromSqlRow)]
pub struct SqliteDateTime(pub NaiveDateTime);

/// A `NaiveDate` decoded from SQLite text: Plover's own format by hand, any other by diesel.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, FromSqlRow)]
pub struct SqliteDate(pub NaiveDate);

impl FromSql<Timestamp, Sqlite> for SqliteDateTime {
    fn from_sql(mut value: SqliteValue<'_, '_, '_>) -> deserialize::Result<Self> {
        match date_time(value.read_text().as_bytes()) {
            Some(decoded) => Ok(SqliteDateTime(decoded)),
            None => {
                <NaiveDateTime as FromSql<Timestamp, Sqlite>>::from_sql(value).map(SqliteDateTime)
            }
        }
    }
}

impl FromSql<Date, Sqlite> for SqliteDate {
    fn from_sql(mut value: SqliteValue<'_, '_, '_>) -> deserialize::Result<Self> {
        match date(value.read_text().as_bytes()) {
            Some(decoded) => Ok(SqliteDate(decoded)),
            None => <NaiveDate as FromSql<Date, Sqlite>>::from_sql(value).map(SqliteDate),
        }
    }
}

impl From<SqliteDateTime> for NaiveDateTime {
    fn from(value: SqliteDateTime) -> NaiveDateTime {
        value.0
    }
}

impl From<SqliteDate> for NaiveDate {
    fn from(value: SqliteDate) -> NaiveDate {
        value.0
    }
}

/// The number written by `digits` (ASCII digits only).
fn number(digits: &[u8]) -> Option<u32> {
    digits.iter().try_fold(0u32, |n, &b| {
        b.is_ascii_digit().then(|| n * 10 + u32::from(b - b'0'))
    })
}

/// The number written by two ASCII digits.
fn two(tens: u8, ones: u8) -> Option<u32> {
    let (tens, ones) = (tens.wrapping_sub(b'0'), ones.wrapping_sub(b'0'));
    (tens < 10 && ones < 10).then(|| u32::from(tens) * 10 + u32::from(ones))
}

/// `YYYY-MM-DD`, exactly.
fn date(text: &[u8]) -> Option<NaiveDate> {
    let [y0, y1, y2, y3, b'-', m0, m1, b'-', d0, d1] = *text else {
        return None;
    };
    let year = two(y0, y1)? * 100 + two(y2, y3)?;
    NaiveDate::from_ymd_opt(year as i32, two(m0, m1)?, two(d0, d1)?)
}

/// `YYYY-MM-DD HH:MM:SS`, then optionally `.` and one to nine digits of a second. A leap
/// second (`:60`) is left to diesel.
fn date_time(text: &[u8]) -> Option<NaiveDateTime> {
    let (Some(day), Some(&[b' ', h0, h1, b':', m0, m1, b':', s0, s1]), Some(fraction)) =
        (text.get(..10), text.get(10..19), text.get(19..))
    else {
        return None;
    };
    let nanos = match fraction {
        [] => 0,
        [b'.', digits @ ..] if (1..=9).contains(&digits.len()) => {
            number(digits)? * 10u32.pow(9 - digits.len() as u32)
        }
        _ => return None,
    };
    let (hour, minute, second) = (two(h0, h1)?, two(m0, m1)?, two(s0, s1)?);
    if second > 59 {
        return None;
    }
    Some(date(day)?.and_time(NaiveTime::from_hms_nano_opt(hour, minute, second, nanos)?))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use diesel::dsl::sql;
    use diesel::{Connection, RunQueryDsl, SqliteConnection};

    /// What diesel's own decoding makes of `text`, for comparison.
    fn diesel_date_time(text: &str) -> Option<NaiveDateTime> {
        ["%Y-%m-%d %H:%M:%S%.f"]
            .iter()
            .find_map(|f| NaiveDateTime::parse_from_str(text, f).ok())
    }

    #[test]
    fn decodes_what_plover_writes_as_chrono_does() {
        for text in [
            "2024-01-01 00:00:37",
            "1999-12-31 23:59:59",
            "0001-01-01 00:00:00",
            "9999-12-31 23:59:59",
            "2024-02-29 12:30:00",
            "2024-01-01 00:00:37.5",
            "2024-01-01 00:00:37.123456",
            "2024-01-01 00:00:37.123456789",
        ] {
            assert_eq!(date_time(text.as_bytes()), diesel_date_time(text), "{text}");
            assert!(date_time(text.as_bytes()).is_some(), "{text}");
        }
        assert_eq!(date(b"2024-02-29"), NaiveDate::from_ymd_opt(2024, 2, 29));
    }

    #[test]
    fn leaves_everything_else_to_diesel() {
        for text in [
            "2023-02-29 00:00:00",  // no such day
            "2024-01-01 24:00:00",  // no such hour
            "2024-01-01 23:59:60",  // a leap second: diesel's decoding accepts it
            "2024-01-01T00:00:00",  // another separator
            "2024-01-01 00:00",     // no seconds
            "2024-01-01 00:00:00.", // no fraction digits
            "2024-01-01 00:00:00.1234567890",
            "2024-01-01 00:00:00Z",
            "+2024-01-01 00:00:00",
            "2024-1-01 00:00:00",
            "２０２４-01-01 00:00:00",
            "2459580.5", // a Julian day number
            "",
        ] {
            assert_eq!(date_time(text.as_bytes()), None, "{text}");
        }
        for text in [
            "2023-02-29",
            "2024-13-01",
            "2024-01-1",
            "20240101",
            "2024-01-01 ",
        ] {
            assert_eq!(date(text.as_bytes()), None, "{text}");
        }
    }

    /// Through diesel: the hand-decoded text and the texts left to diesel load as diesel's own
    /// `NaiveDateTime` and `NaiveDate` do.
    #[test]
    fn loads_as_diesel_does() {
        let mut conn = SqliteConnection::establish(":memory:").unwrap();
        for text in [
            "'2024-01-01 00:00:37'",
            "'2024-01-01 00:00:37.25'",
            "'2024-01-01T00:00:37'",
            "'2024-01-01 23:59:60'",
            "2459580.5",
        ] {
            let ours: SqliteDateTime = diesel::select(sql::<Timestamp>(text))
                .get_result(&mut conn)
                .unwrap();
            let theirs: NaiveDateTime = diesel::select(sql::<Timestamp>(text))
                .get_result(&mut conn)
                .unwrap();
            assert_eq!(ours.0, theirs, "{text}");
        }
        let ours: Option<SqliteDate> =
            diesel::select(sql::<diesel::sql_types::Nullable<Date>>("'2024-02-29'"))
                .get_result(&mut conn)
                .unwrap();
        assert_eq!(
            ours.map(NaiveDate::from),
            NaiveDate::from_ymd_opt(2024, 2, 29)
        );
        let bad = diesel::select(sql::<Timestamp>("'not a date'"))
            .get_result::<SqliteDateTime>(&mut conn);
        assert!(bad.is_err());
    }
}
