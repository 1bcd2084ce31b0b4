//! The SQL text of list queries, built once per query shape.
//!
//! A list's filters and ordering come from the query string, so its diesel query is boxed, and
//! diesel finds a boxed query's prepared statement by its SQL text, which it would otherwise
//! build on every request by walking the query (quoting each identifier in a new string). The
//! text depends only on the query's shape ([`Select::shape`]), so a [`SqlCache`] keeps it per
//! shape and [`Shaped`] hands it to diesel in one piece; diesel still walks the query to
//! collect the bound values.
//!
//! Each cache holds at most [`CAPACITY`] shapes, and only shapes whose statement diesel may keep
//! prepared (an `IN` list of values is not: its text changes with the number of values). A
//! query of any other shape runs as before and is not kept prepared, so a client that sends
//! ever new shapes grows neither this cache nor the prepared statements of the pool's
//! connections (docs/contract.md#bounded-cost).

use std::cell::RefCell;
use std::collections::HashMap;

use foldhash::fast::FixedState;

use diesel::backend::Backend;
use diesel::query_builder::{AstPass, Query, QueryBuilder, QueryFragment, QueryId};
use diesel::{QueryResult, RunQueryDsl};
use parking_lot::RwLock;

use crate::error::Error;
use crate::query::Select;

/// The most shapes one cache keeps (one cache per model, query and backend).
pub(crate) const CAPACITY: usize = 64;

/// Texts by shape key. The keys are short lists of small numbers hashed on every list request:
/// a fast hash serves better than SipHash, and no flood of keys can hurt a map of at most
/// [`CAPACITY`] entries.
type Texts = HashMap<Box<[usize]>, &'static str, FixedState>;

/// The SQL text of each shape of one query (a `static` in the code `#[derive(RestModel)]`
/// generates for each model, query and backend).
#[derive(Debug)]
pub struct SqlCache {
    texts: RwLock<Texts>,
}

impl SqlCache {
    /// An empty cache.
    pub const fn new() -> SqlCache {
        SqlCache {
            texts: RwLock::new(HashMap::with_hasher(FixedState::with_seed(0))),
        }
    }

    fn get(&self, key: &[usize]) -> Option<&'static str> {
        self.texts.read().get(key).copied()
    }

    fn is_full(&self) -> bool {
        self.texts.read().len() >= CAPACITY
    }

    /// Keeps `text` for `key` unless the cache is full. The text is never freed: the cache is a
    /// `static` and never drops an entry, so each text lives as long as the program anyway.
    fn insert(&self, key: &[usize], text: String) -> Option<&'static str> {
        let mut texts = self.texts.write();
        if let Some(&kept) = texts.get(key) {
            return Some(kept);
        }
        if texts.len() >= CAPACITY {
            return None;
        }
        let text: &'static str = Box::leak(text.into_boxed_str());
        texts.insert(key.into(), text);
        Some(text)
    }
}

impl Default for SqlCache {
    fn default() -> SqlCache {
        SqlCache::new()
    }
}

/// A query with the SQL text of its shape, when the shape is cached.
#[derive(Debug)]
pub struct Shaped<Q> {
    query: Q,
    text: Option<&'static str>,
}

thread_local! {
    /// The shape key of the current query (kept to reuse its allocation).
    static KEY: RefCell<Vec<usize>> = const { RefCell::new(Vec::new()) };
}

/// `query`, built from `select`, with the SQL text of its shape from `cache` (computed and
/// kept on the shape's first use).
pub fn shaped<DB, Q>(query: Q, select: &Select, cache: &SqlCache) -> Result<Shaped<Q>, Error>
where
    DB: Backend + Default,
    DB::QueryBuilder: Default,
    Q: QueryFragment<DB>,
{
    KEY.with_borrow_mut(|key| {
        key.clear();
        select.shape(key);
        if let Some(text) = cache.get(key) {
            #[cfg(debug_assertions)]
            if sql_text::<DB, _>(&query)? != text {
                return Err(Error::Internal(format!(
                    "the cached SQL text of {select:?} is not its text"
                )));
            }
            return Ok(Shaped {
                query,
                text: Some(text),
            });
        }
        // A full cache keeps no more: the text is not built twice (here and by diesel).
        let text = if !cache.is_full() && query.is_safe_to_cache_prepared(&DB::default())? {
            cache.insert(key, sql_text::<DB, _>(&query)?)
        } else {
            None
        };
        Ok(Shaped { query, text })
    })
}

fn sql_text<DB, Q>(query: &Q) -> QueryResult<String>
where
    DB: Backend + Default,
    DB::QueryBuilder: Default,
    Q: QueryFragment<DB>,
{
    let mut builder = DB::QueryBuilder::default();
    query.to_sql(&mut builder, &DB::default())?;
    Ok(builder.finish())
}

impl<DB: Backend, Q: QueryFragment<DB>> QueryFragment<DB> for Shaped<Q> {
    fn walk_ast<'b>(&'b self, pass: AstPass<'_, 'b, DB>) -> QueryResult<()> {
        self.query.walk_ast(pass)
    }

    fn to_sql(&self, out: &mut DB::QueryBuilder, backend: &DB) -> QueryResult<()> {
        match self.text {
            Some(text) => {
                out.push_sql(text);
                Ok(())
            }
            None => self.query.to_sql(out, backend),
        }
    }

    fn is_safe_to_cache_prepared(&self, _backend: &DB) -> QueryResult<bool> {
        Ok(self.text.is_some())
    }
}

impl<Q> QueryId for Shaped<Q> {
    type QueryId = ();
    const HAS_STATIC_QUERY_ID: bool = false;
}

impl<Q: Query> Query for Shaped<Q> {
    type SqlType = Q::SqlType;
}

impl<Q, C> RunQueryDsl<C> for Shaped<Q> {}

#[cfg(test)]
#[allow(clippy::expect_used)]
mod tests {
    use diesel::prelude::*;
    use diesel::sqlite::{Sqlite, SqliteConnection};

    use super::*;
    use crate::query::{Filter, Op, Param};

    diesel::table! { item (id) { id -> Integer, name -> Text } }

    fn select(op: Op, values: Vec<Param>) -> Select {
        Select {
            filters: vec![Filter {
                path: vec![0],
                op,
                values,
            }],
            ..Select::default()
        }
    }

    /// The ids of the items whose id is below `below`, through `cache`.
    fn ids_below(
        conn: &mut SqliteConnection,
        cache: &SqlCache,
        below: i32,
    ) -> (Vec<i32>, Option<&'static str>) {
        let query = item::table
            .select(item::id)
            .filter(item::id.lt(below))
            .order(item::id)
            .into_boxed::<Sqlite>();
        let shaped = shaped::<Sqlite, _>(query, &select(Op::Lt, vec![Param::Int(0)]), cache)
            .expect("a query of a known shape");
        let text = shaped.text;
        (shaped.load(conn).expect("the query runs"), text)
    }

    fn connection() -> SqliteConnection {
        let mut conn = SqliteConnection::establish(":memory:").expect("an in-memory database");
        diesel::sql_query("CREATE TABLE item (id INTEGER PRIMARY KEY, name TEXT NOT NULL)")
            .execute(&mut conn)
            .expect("the table");
        diesel::sql_query("INSERT INTO item (id, name) VALUES (1, 'a'), (2, 'b'), (3, 'c')")
            .execute(&mut conn)
            .expect("the rows");
        conn
    }

    #[test]
    fn one_text_per_shape_and_the_values_are_bound() {
        let mut conn = connection();
        let cache = SqlCache::new();
        let (first, text) = ids_below(&mut conn, &cache, 3);
        assert_eq!(first, [1, 2]);
        let text = text.expect("the shape is kept");
        assert!(text.contains("`item`.`id` < ?"), "{text}");
        let (second, again) = ids_below(&mut conn, &cache, 2);
        assert_eq!(second, [1], "the new value is bound, not the first one");
        assert!(
            again.is_some_and(|t| std::ptr::eq(t, text)),
            "the second query reuses the kept text"
        );
    }

    #[test]
    fn an_in_list_is_not_kept() {
        let cache = SqlCache::new();
        let query = item::table
            .select(item::id)
            .filter(item::id.eq_any([1, 2]))
            .into_boxed::<Sqlite>();
        let values = vec![Param::Int(1), Param::Int(2)];
        let shaped = shaped::<Sqlite, _>(query, &select(Op::In, values), &cache).expect("a query");
        assert_eq!(shaped.text, None);
        assert!(!shaped.is_safe_to_cache_prepared(&Sqlite).expect("a query"));
        assert!(cache.texts.read().is_empty());
    }

    #[test]
    fn a_full_cache_keeps_no_more_shapes() {
        let cache = SqlCache::new();
        for n in 0..CAPACITY {
            assert!(cache.insert(&[n], format!("SELECT {n}")).is_some());
        }
        assert_eq!(cache.insert(&[0], "SELECT 0".into()), Some("SELECT 0"));
        assert_eq!(cache.insert(&[CAPACITY], "SELECT x".into()), None);
        assert_eq!(cache.texts.read().len(), CAPACITY);
    }
}
