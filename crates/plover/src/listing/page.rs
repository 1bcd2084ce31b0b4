//! Running one page of a list (docs/contract.md#pagination): its rows, whether more follow,
//! and the number of matching rows, counted as the list's [`Counting`] says. REST lists, the
//! admin index, its facets and its lookups all read their pages here.

use serde_json::Value;

use super::links::Links;
use super::CURSOR;
use super::{cursor, estimates};
use crate::db::{Conn, Engine};
use crate::error::Error;
use crate::model::row::Rows;
use crate::model::{ModelMeta, RestModel};
use crate::query::{Count, Select};
use crate::sql::search::{read_search_keys, Window};
use crate::sql::{count, count_up_to, estimate, read_related_keys};

/// At most `size` rows, and whether more follow them.
#[derive(Debug)]
pub(crate) struct Page<R> {
    /// The rows, at most `size`.
    pub(crate) rows: R,
    /// Whether the selection has rows after these.
    pub(crate) has_next: bool,
}

/// What a page reads its rows into: it reads one row more than it keeps.
pub(crate) trait PageRows {
    /// How many rows.
    fn count(&self) -> usize;
    /// Keeps the first `len`.
    fn keep(&mut self, len: usize);
}

impl<T> PageRows for Vec<T> {
    fn count(&self) -> usize {
        self.len()
    }
    fn keep(&mut self, len: usize) {
        self.truncate(len);
    }
}

impl PageRows for Box<dyn Rows> {
    fn count(&self) -> usize {
        self.len()
    }
    fn keep(&mut self, len: usize) {
        self.truncate(len);
    }
}

impl<R: PageRows> Page<R> {
    /// Reads at most `size` rows of `select` with `load`, which is given the selection with its
    /// limit set one row beyond `size`: that row, when it comes, tells that more follow, and is
    /// dropped.
    pub(crate) fn read(
        select: &mut Select,
        size: i64,
        load: impl FnOnce(&Select) -> Result<R, Error>,
    ) -> Result<Page<R>, Error> {
        select.limit = Some(size.saturating_add(1));
        let mut rows = load(select)?;
        let has_next = rows.count() as i64 > size;
        rows.keep(usize::try_from(size).unwrap_or(0));
        Ok(Page { rows, has_next })
    }
}

/// The rows skipped before page `page` (from 1) of `size` rows. A page too far for the offset
/// to be represented is past the end all the same: the saturated offset skips every row.
pub(crate) fn offset(page: i64, size: i64) -> i64 {
    (page - 1).saturating_mul(size)
}

/// How a list counts the rows its conditions match: REST's `count=exact|estimated` (and a
/// resource's default), the admin index's exact count up to a bound.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Counting {
    /// One exact `COUNT`.
    Exact,
    /// The PostgreSQL planner's estimate; an exact count on SQLite.
    Estimated,
    /// On PostgreSQL, exact up to this many rows (a count that stops one row after it), above
    /// it the planner's estimate (never below the bound); on SQLite, which has no estimate, one
    /// exact count.
    #[cfg_attr(not(feature = "admin"), allow(dead_code))]
    ExactUpTo(i64),
    /// On PostgreSQL, the planner's estimate when it is above this many rows, else one exact
    /// count (`count=auto`): no scan of a large table's rows; on SQLite one exact count.
    EstimatedPast(i64),
}

impl Counting {
    /// The policy of a REST `count`, with the resource's `count_exact_up_to`.
    pub(crate) fn of(count: Count, exact_up_to: i64) -> Counting {
        match count {
            Count::Exact => Counting::Exact,
            Count::Estimated => Counting::Estimated,
            Count::Auto => Counting::EstimatedPast(exact_up_to),
        }
    }
}

impl Counting {
    /// Whether a number of rows known without a query is what this policy would answer: an
    /// exact number it would not have estimated.
    fn takes(self, rows: i64) -> bool {
        match self {
            Counting::Exact | Counting::Estimated | Counting::EstimatedPast(_) => true,
            Counting::ExactUpTo(bound) => rows <= bound,
        }
    }

    /// The rows the conditions of `select` match, counted under this policy; on PostgreSQL
    /// with the estimates of the last second where `database` is known ([`estimates`]).
    fn count(
        self,
        conn: &mut Conn<'_>,
        meta: &ModelMeta,
        select: &Select,
        database: Option<u64>,
    ) -> Result<RowCount, Error> {
        let exact = |rows| RowCount {
            rows,
            estimated: false,
        };
        let estimated = conn.engine() != Engine::Sqlite;
        let planned = |conn: &mut Conn<'_>| match database {
            Some(database) if estimated => estimates::recent(database, meta.table, select, || {
                estimate(conn, meta, select)
            }),
            _ => estimate(conn, meta, select),
        };
        match self {
            Counting::Exact => Ok(exact(count(conn, meta, select)?)),
            Counting::Estimated => Ok(RowCount {
                rows: planned(conn)?,
                estimated,
            }),
            Counting::ExactUpTo(_) | Counting::EstimatedPast(_) if !estimated => {
                Ok(exact(count(conn, meta, select)?))
            }
            Counting::EstimatedPast(bound) => {
                let rows = planned(conn)?;
                if rows <= bound {
                    return Ok(exact(count(conn, meta, select)?));
                }
                Ok(RowCount {
                    rows,
                    estimated: true,
                })
            }
            Counting::ExactUpTo(bound) => {
                let rows = count_up_to(conn, meta, select, bound.saturating_add(1))?;
                if rows <= bound {
                    return Ok(exact(rows));
                }
                Ok(RowCount {
                    rows: planned(conn)?.max(rows),
                    estimated: true,
                })
            }
        }
    }
}

/// The rows a list's filters and search match, as counted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
#[cfg_attr(not(feature = "admin"), allow(unreachable_pub))]
pub struct RowCount {
    /// The number of rows (with `estimated`, PostgreSQL's planner estimate).
    pub rows: i64,
    /// Whether `rows` is an estimate (in the admin: more rows than `count_exact_up_to` match,
    /// on PostgreSQL).
    pub estimated: bool,
}

#[cfg(feature = "admin")]
impl RowCount {
    /// `37 messages`, `1 message`, `about 120,000 messages`, for the names of one row
    /// (`singular`) and of several (`plural`).
    pub fn text(&self, singular: &str, plural: &str) -> String {
        let about = if self.estimated { "about " } else { "" };
        let name = if self.rows == 1 { singular } else { plural };
        format!("{about}{} {name}", grouped(self.rows))
    }
}

/// `n` with a comma between groups of three digits.
#[cfg(feature = "admin")]
pub(crate) fn grouped(n: i64) -> String {
    let digits = n.unsigned_abs().to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3 + 1);
    if n < 0 {
        out.push('-');
    }
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// A parsed list request.
#[derive(Debug, Clone)]
pub(crate) struct ListQuery {
    /// Filters, ordering and offset; the page runner sets the limit ([`ListQuery::run`]).
    pub(crate) select: Select,
    /// The page number, from 1.
    pub(crate) page: i64,
    /// The page size.
    pub(crate) limit: i64,
    /// Whether and how to count the matching rows.
    pub(crate) count: Option<Counting>,
    /// How many terms of `select.order` the request's `ordering` named (the primary key that
    /// ends every ordering is added after them when they lack it).
    #[cfg_attr(not(feature = "admin"), allow(dead_code))]
    pub(crate) ordered: usize,
    /// Whether the page after this one is named by a cursor (keyset pagination).
    pub(crate) keyset: bool,
    /// Whether this page was named by a cursor.
    pub(crate) from_cursor: bool,
    /// The database the page reads ([`crate::db::Database::id`]), where its count may take
    /// the planner's estimates that this process read in the last second ([`estimates`]).
    pub(crate) database: Option<u64>,
}

impl ListQuery {
    /// Pages by cursor where the list allows it (`allowed`) and its ordering supports it: the
    /// next page's link then carries a cursor, and the request's cursor `token`, if any, names
    /// this page instead of its number and offset. A cursor where the list does not page by
    /// cursor is a 400.
    pub(crate) fn page_by_cursor(
        &mut self,
        meta: &ModelMeta,
        allowed: bool,
        token: Option<&str>,
    ) -> Result<(), Error> {
        self.keyset = allowed && cursor::supports(meta, &self.select.order);
        let Some(token) = token else {
            return Ok(());
        };
        if !self.keyset {
            return Err(Error::param(CURSOR, "this list does not page by cursor"));
        }
        let (page, any_of) = cursor::decode(token, meta, &self.select.order)?;
        self.page = page;
        self.select.offset = 0;
        self.select.any_of = any_of;
        self.from_cursor = true;
        Ok(())
    }
}

/// One page of a list request, as run.
#[derive(Debug)]
pub(crate) struct ListPage<'q, R> {
    /// The request it answers.
    pub(crate) query: &'q ListQuery,
    /// The rows, at most the page size.
    pub(crate) rows: R,
    /// Whether rows follow this page.
    pub(crate) has_next: bool,
    /// The rows the request's conditions match, if it counts them.
    pub(crate) count: Option<RowCount>,
}

impl ListQuery {
    /// Runs this page: its rows (one more read to know whether more follow), and the count
    /// its policy asks for. A numbered page that ends the list tells the count without a
    /// query, where the policy would have answered that exact number.
    pub(crate) fn run<M: RestModel>(
        &mut self,
        conn: &mut Conn<'_>,
    ) -> Result<ListPage<'_, Vec<M>>, Error> {
        self.run_with(conn, M::meta(), |conn, s| M::load(conn, s))
    }

    /// [`ListQuery::run`] with the rows of `meta` read by `load`. On PostgreSQL, the conditions
    /// through a join in `or` groups (the search's words) are read as keys first
    /// ([`read_related_keys`]); on SQLite, those a search index serves are read as keys
    /// first too: a window of them in the page's order where the list is in the order of its
    /// key ([`Window`]), else all of them ([`read_search_keys`]).
    pub(crate) fn run_with<R: PageRows>(
        &mut self,
        conn: &mut Conn<'_>,
        meta: &ModelMeta,
        mut load: impl FnMut(&mut Conn<'_>, &Select) -> Result<R, Error>,
    ) -> Result<ListPage<'_, R>, Error> {
        read_related_keys(conn, meta, &mut self.select)?;
        let Page { rows, has_next } = self.read_page(conn, meta, &mut load)?;
        let count = match self.count {
            None => None,
            Some(counting) => {
                Some(self.count_rows(conn, meta, counting, has_next, rows.count())?)
            }
        };
        Ok(ListPage {
            query: self,
            rows,
            has_next,
            count,
        })
    }

    /// The page's rows: through a search's [`Window`] while one fills the page or holds every
    /// key, else with every condition a search index serves read as keys.
    fn read_page<R: PageRows>(
        &mut self,
        conn: &mut Conn<'_>,
        meta: &ModelMeta,
        load: &mut impl FnMut(&mut Conn<'_>, &Select) -> Result<R, Error>,
    ) -> Result<Page<R>, Error> {
        let size = self.limit;
        let rows = usize::try_from(self.select.offset.saturating_add(size).saturating_add(1));
        let mut window = match rows {
            Ok(rows) => Window::find(conn, meta, &self.select, rows)?,
            Err(_) => None,
        };
        while let Some(through) = &mut window {
            let (mut select, whole) = through.select(conn, &self.select)?;
            let page = Page::read(&mut select, size, |s| load(conn, s))?;
            if page.has_next || whole {
                return Ok(page);
            }
            if !through.grow() {
                window = None;
            }
        }
        read_search_keys(conn, meta, &mut self.select)?;
        Page::read(&mut self.select, size, |s| load(conn, s))
    }

    fn count_rows(
        &self,
        conn: &mut Conn<'_>,
        meta: &ModelMeta,
        counting: Counting,
        has_next: bool,
        shown: usize,
    ) -> Result<RowCount, Error> {
        if !has_next && !self.from_cursor && (self.page == 1 || shown > 0) {
            let rows = self.select.offset.saturating_add(shown as i64);
            if counting.takes(rows) {
                return Ok(RowCount {
                    rows,
                    estimated: false,
                });
            }
        }
        let mut conditions = self.select.conditions_only();
        read_search_keys(conn, meta, &mut conditions)?;
        counting.count(conn, meta, &conditions, self.database)
    }
}

impl<R: Rows> ListPage<'_, R> {
    /// The link to the page before, if there is one: none before the first, and none from a
    /// cursor page (cursor pages lead forward only).
    pub(crate) fn previous(&self, links: &Links<'_>) -> Option<String> {
        if self.query.from_cursor {
            return None;
        }
        links.page(self.query.page - 1)
    }

    /// The link to the page after, if rows follow: by cursor where the list pages by cursor
    /// (the ordering values of this page's last row), else by number.
    pub(crate) fn next(&self, links: &Links<'_>) -> Option<String> {
        if !self.has_next {
            return None;
        }
        let page = self.query.page.saturating_add(1);
        match self.rows.len().checked_sub(1).map(|i| self.rows.row(i)) {
            Some(last) if self.query.keyset => {
                let order = &self.query.select.order;
                let values: Vec<Value> = order.iter().map(|o| last.field_json(o.field)).collect();
                Some(links.with(CURSOR, &cursor::encode(page, values)))
            }
            _ => links.page(page),
        }
    }

    /// The pages of the page size that the counted rows fill.
    pub(crate) fn pages(&self) -> Option<i64> {
        let limit = self.query.limit;
        self.count.map(|n| n.rows.saturating_add(limit - 1) / limit)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(feature = "admin")]
    #[test]
    fn counts_read_with_thousands_and_plurals() {
        let count = |rows, estimated| RowCount { rows, estimated };
        assert_eq!(count(0, false).text("message", "messages"), "0 messages");
        assert_eq!(count(1, false).text("message", "messages"), "1 message");
        assert_eq!(count(37, false).text("message", "messages"), "37 messages");
        assert_eq!(
            count(1234567, true).text("message", "messages"),
            "about 1,234,567 messages"
        );
        assert_eq!(
            count(100_000, false).text("status", "statuses"),
            "100,000 statuses"
        );
        assert_eq!(
            count(1, true).text("message", "messages"),
            "about 1 message"
        );
        assert_eq!(grouped(999), "999");
        assert_eq!(grouped(1000), "1,000");
        assert_eq!(grouped(-12345), "-12,345");
    }

    #[test]
    fn a_page_reads_one_row_more_and_keeps_its_size() -> Result<(), Error> {
        let mut select = Select::default();
        let page = Page::read(&mut select, 2, |s| Ok((0..s.limit.unwrap_or(0)).collect()))?;
        assert_eq!((page.rows, page.has_next), (vec![0, 1], true));
        let page = Page::read(&mut select, 2, |_| Ok(vec![0, 1]))?;
        assert_eq!((page.rows, page.has_next), (vec![0, 1], false));
        assert_eq!(offset(3, 20), 40);
        assert_eq!(offset(i64::MAX, 20), i64::MAX);
        Ok(())
    }
}
