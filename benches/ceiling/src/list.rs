//! List requests: the query combinations the benchmark sends, Plover's page envelope
//! (docs/contract.md#lists), and its timestamp format (docs/contract.md#objects).

use serde::{Serialize, Serializer};

/// The page size, and the most a `limit` may ask for (larger values are clamped, as in Plover).
pub const PAGINATE_BY: i64 = 20;

/// What a message list selects. Any other combination of parameters is a 400: this is a
/// ceiling for the benchmark's requests, not an API.
pub enum MessageFilter {
    /// `/api/message/` (list_message, list_message_page): by id.
    All,
    /// `?user__username=U&ordering=-pub_date` (filter_join).
    ByUsername(String),
    /// `?id__lt=A&id__gte=B&ordering=-id` (filter_ops).
    IdRange { lt: i32, gte: i32 },
}

/// A parsed list request.
pub struct ListQuery {
    pub page: i64,
    pub limit: i64,
    pub filter: MessageFilter,
    /// The request's parameters but `page`, in their order, decoded: `next` and `previous`
    /// keep them (docs/contract.md#lists).
    kept: Vec<(String, String)>,
}

impl ListQuery {
    /// The rows to skip.
    pub fn offset(&self) -> i64 {
        (self.page - 1).saturating_mul(self.limit)
    }

    /// Parses a query string. `filters`: whether the message filters are accepted (the user
    /// list takes only `page` and `limit`). `None`: not a request of the benchmark.
    pub fn parse(query: &str, filters: bool) -> Option<ListQuery> {
        let (mut page, mut limit, mut ordering) = (None, None, None);
        let (mut username, mut lt, mut gte) = (None, None, None);
        let mut kept = Vec::new();
        for (key, value) in form_urlencoded::parse(query.as_bytes()) {
            let (key, value) = (key.into_owned(), value.into_owned());
            // A repeated page, limit or ordering: the first one counts, as in Plover.
            // A repeated filter would be an OR: not a request of the benchmark.
            match key.as_str() {
                "page" => {
                    page.get_or_insert(positive(&value)?);
                    continue;
                }
                "limit" => {
                    limit.get_or_insert(positive(&value)?);
                }
                "ordering" if filters => {
                    ordering.get_or_insert_with(|| value.clone());
                }
                "user__username" if filters && username.is_none() => username = Some(value.clone()),
                "id__lt" if filters && lt.is_none() => lt = Some(value.parse::<i32>().ok()?),
                "id__gte" if filters && gte.is_none() => gte = Some(value.parse::<i32>().ok()?),
                _ => return None,
            }
            kept.push((key, value));
        }
        let filter = match (username, lt, gte, ordering.as_deref()) {
            (None, None, None, None) => MessageFilter::All,
            (Some(name), None, None, Some("-pub_date")) => MessageFilter::ByUsername(name),
            (None, Some(lt), Some(gte), Some("-id")) => MessageFilter::IdRange { lt, gte },
            _ => return None,
        };
        Some(ListQuery {
            page: page.unwrap_or(1),
            limit: limit.unwrap_or(PAGINATE_BY).min(PAGINATE_BY),
            filter,
            kept,
        })
    }

    /// `{base}?<the other parameters>&page=N`, form-encoded as Plover encodes it; `""` for
    /// page 0.
    fn link(&self, base: &str, page: i64) -> String {
        if page < 1 {
            return String::new();
        }
        let mut query = form_urlencoded::Serializer::new(String::new());
        query.extend_pairs(&self.kept);
        query.append_pair("page", &page.to_string());
        format!("{base}?{}", query.finish())
    }

    /// The page envelope of `rows`, read with `limit + 1` to know whether a next page exists,
    /// serialized.
    pub fn page_json<T: Serialize>(
        &self,
        model: &'static str,
        base: &str,
        mut rows: Vec<T>,
    ) -> Vec<u8> {
        let more = rows.len() as i64 > self.limit;
        rows.truncate(self.limit as usize);
        let envelope = Envelope {
            meta: Meta {
                model,
                page: self.page,
                previous: self.link(base, self.page - 1),
                next: if more {
                    self.link(base, self.page + 1)
                } else {
                    String::new()
                },
            },
            objects: rows,
        };
        serde_json::to_vec(&envelope).unwrap_or_default()
    }
}

/// An integer >= 1 (`limit`, `page`).
fn positive(value: &str) -> Option<i64> {
    value.parse::<i64>().ok().filter(|n| *n >= 1)
}

#[derive(Serialize)]
struct Meta {
    model: &'static str,
    page: i64,
    previous: String,
    next: String,
}

#[derive(Serialize)]
struct Envelope<T> {
    meta: Meta,
    objects: Vec<T>,
}

/// A date-time stored as text, as Plover writes it: `"YYYY-MM-DD HH:MM:SS"`, fractional
/// seconds cut.
pub fn text_timestamp<S: Serializer>(t: &str, serializer: S) -> Result<S::Ok, S::Error> {
    serializer.serialize_str(t.get(..19).unwrap_or(t))
}

/// A date-time as Plover writes it, `"YYYY-MM-DD HH:MM:SS"` (fractional seconds cut), from
/// its digits rather than through a format string.
pub fn timestamp<S: Serializer>(
    t: &chrono::NaiveDateTime,
    serializer: S,
) -> Result<S::Ok, S::Error> {
    use chrono::{Datelike, Timelike};
    let Some(year) = u32::try_from(t.year()).ok().filter(|y| *y <= 9999) else {
        return serializer.collect_str(&t.format("%Y-%m-%d %H:%M:%S"));
    };
    let mut out = *b"0000-00-00 00:00:00";
    for (at, value, width) in [
        (0, year, 4),
        (5, t.month(), 2),
        (8, t.day(), 2),
        (11, t.hour(), 2),
        (14, t.minute(), 2),
        (17, t.second(), 2),
    ] {
        let mut v = value;
        for i in (at..at + width).rev() {
            out[i] = b'0' + (v % 10) as u8;
            v /= 10;
        }
    }
    // Only ASCII digits and separators were written.
    serializer.serialize_str(std::str::from_utf8(&out).unwrap_or_default())
}
