//! The SQL texts of a model's statements, kept per query shape.
//!
//! A list's filters and ordering come from the query string, so the text of its statement is
//! built at run time; it depends only on the query's shape (`Select::shape`), so each model
//! keeps the text per shape ([`SqlCache`]) and a request only collects its arguments. diesel
//! keeps one prepared statement per text and connection.
//!
//! Each cache holds at most [`CAPACITY`] shapes, and only shapes whose statement diesel may
//! keep prepared (an `IN` list of values on SQLite is not: its text changes with the number of
//! values). A query of any other shape is built and prepared each time, so a client that sends
//! ever new shapes grows neither this cache nor the prepared statements of the pool's
//! connections (docs/contract.md#bounded-cost).

use std::collections::HashMap;

use foldhash::fast::FixedState;
use parking_lot::RwLock;

/// The most shapes one model's cache keeps (of all its queries, on both engines).
pub(crate) const CAPACITY: usize = 256;

/// A kept text, cut at its placeholders (`\0`): the pieces between the bound values.
pub(crate) type Pieces = &'static [&'static str];

/// Texts by shape key. The keys are short lists of small numbers hashed on every query: a
/// fast hash serves better than SipHash, and no flood of keys can hurt a map of at most
/// [`CAPACITY`] entries.
type Texts = HashMap<Box<[usize]>, Pieces, FixedState>;

/// The SQL texts of one model's statements by shape (held in the model's metadata).
#[derive(Debug)]
pub(crate) struct SqlCache {
    texts: RwLock<Texts>,
}

impl SqlCache {
    /// An empty cache.
    pub(crate) const fn new() -> SqlCache {
        SqlCache {
            texts: RwLock::new(HashMap::with_hasher(FixedState::with_seed(0))),
        }
    }

    /// The number of texts kept.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.texts.read().len()
    }

    pub(crate) fn get(&self, key: &[usize]) -> Option<Pieces> {
        self.texts.read().get(key).copied()
    }

    /// Keeps `text` (placeholders as `\0`) for `key`, cut at its placeholders, unless the cache
    /// is full (then `text` comes back). A kept text is never freed: the cache lives as long as
    /// the program.
    pub(crate) fn keep(&self, key: &[usize], text: String) -> Result<Pieces, String> {
        let mut texts = self.texts.write();
        if let Some(&kept) = texts.get(key) {
            return Ok(kept);
        }
        if texts.len() >= CAPACITY {
            return Err(text);
        }
        let text: &'static str = Box::leak(text.into_boxed_str());
        let pieces: Pieces = Box::leak(text.split('\0').collect::<Box<[_]>>());
        texts.insert(key.into(), pieces);
        Ok(pieces)
    }
}

impl Default for SqlCache {
    fn default() -> SqlCache {
        SqlCache::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_full_cache_keeps_no_more_shapes() {
        let cache = SqlCache::new();
        for n in 0..CAPACITY {
            assert!(cache.keep(&[n], format!("SELECT {n}")).is_ok());
        }
        assert_eq!(cache.keep(&[0], "SELECT 0".into()), Ok(&["SELECT 0"][..]));
        assert_eq!(
            cache.keep(&[CAPACITY], "SELECT x".into()),
            Err("SELECT x".into())
        );
        assert_eq!(cache.texts.read().len(), CAPACITY);
    }

    #[test]
    fn a_kept_text_is_cut_at_its_placeholders() {
        let cache = SqlCache::new();
        let pieces = cache.keep(&[1], "a = \0 AND b = \0".into());
        assert_eq!(pieces, Ok(&["a = ", " AND b = ", ""][..]));
    }
}
