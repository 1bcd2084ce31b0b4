//! The PostgreSQL planner's estimates of list counts that this process read in the last
//! second, by database, table and conditions: on a busy list, `count=auto` and
//! `count=estimated` then cost one `EXPLAIN` a second instead of one a request (an estimate
//! is an estimate, and one a second old is as good as a new one: the planner's own statistics
//! change only when the table is analysed).

use std::collections::HashMap;
use std::sync::LazyLock;
use std::time::{Duration, Instant};

use parking_lot::Mutex;

use crate::error::Error;
use crate::http::digest::Tag;
use crate::query::Select;

/// How long an estimate is taken again without a statement.
const FRESH: Duration = Duration::from_secs(1);

/// The most estimates kept; past it they are all forgotten and read again.
const CAPACITY: usize = 1024;

/// By database ([`crate::db::Database::id`]) and the digest of the table's name with the
/// conditions' text (a fixed size, however long the conditions: the memory kept is bounded
/// by [`CAPACITY`] alone): when the estimate was read, and the estimate.
type Kept = HashMap<(u64, Tag), (Instant, i64)>;

static KEPT: LazyLock<Mutex<Kept>> = LazyLock::new(Mutex::default);

/// The estimate of the rows of `table` that `conditions` match in `database`: one read less
/// than [`FRESH`] ago, or `read`'s (kept for the next requests).
pub(crate) fn recent(
    database: u64,
    table: &str,
    conditions: &Select,
    read: impl FnOnce() -> Result<i64, Error>,
) -> Result<i64, Error> {
    let key = (
        database,
        Tag::of(format!("{table}{conditions:?}").as_bytes()),
    );
    let now = Instant::now();
    if let Some((at, rows)) = KEPT.lock().get(&key) {
        if now.duration_since(*at) < FRESH {
            return Ok(*rows);
        }
    }
    let rows = read()?;
    let mut kept = KEPT.lock();
    if kept.len() >= CAPACITY {
        kept.clear();
    }
    kept.insert(key, (now, rows));
    Ok(rows)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_estimate_is_read_once_a_second_per_database_and_conditions() {
        let table = "estimates_demo";
        let ok = |r: Result<i64, Error>| r.unwrap_or_else(|e| panic!("{e:?}"));
        let all = Select::default();
        let some = Select {
            offset: 1,
            ..Select::default()
        };
        let database = u64::MAX - 7;
        assert_eq!(ok(recent(database, table, &all, || Ok(10))), 10);
        // Kept: the second read is not made.
        assert_eq!(ok(recent(database, table, &all, || Ok(20))), 10);
        // Other conditions, another database: read.
        assert_eq!(ok(recent(database, table, &some, || Ok(30))), 30);
        assert_eq!(ok(recent(database - 1, table, &all, || Ok(40))), 40);
        // A failed read keeps nothing.
        let failed = recent(database - 2, table, &all, || {
            Err(Error::Internal("x".into()))
        });
        assert!(failed.is_err());
        assert_eq!(ok(recent(database - 2, table, &all, || Ok(50))), 50);
    }
}
