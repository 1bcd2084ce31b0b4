//! On SQLite, a list ordered by its key reads a searched word's first keys from the search
//! indexes in that order, a window at a time, rather than every key the word has.
//!
//! [`super::read_search_keys`] reads a word's keys, all of them, and gives up past
//! [`super::Span::most_keys`] (a frequent word stays a `LIKE`, which finds a page soon): a word
//! between rare and frequent costs about `sqrt(n)` either way. But an FTS5 table gives its keys
//! in key order, from any key, so a list in the order of its key (the default ordering) needs
//! only the word's first keys in that order: a window of them (the page's rows and more), each
//! index read from the page's start (a cursor's key) with `ORDER BY rowid LIMIT`, the indexes'
//! windows merged. The condition becomes `<key> IN (<the window>)`, and, unless the indexes had
//! no more keys, `<key> <= <the window's last>` (`>=` descending), so that no row past the
//! window comes before one that the next window would bring: the rows found are the first of
//! the list's, and a full page of them is the page. The other conditions are checked on the
//! window's rows; when they leave the page short, the window grows (eight times) up to
//! `most_keys`, after which the condition is read as a whole as before. A search's terms through
//! a join (a user's name) join the window as the keys their own index finds, and only when it
//! finds few enough.

use super::{fold_case, phrase, read_keys, replace, span, table_name, Known, Toward};
use crate::db::Conn;
use crate::error::Error;
use crate::meta::ModelMeta;
use crate::query::{Filter, Group, Op, Param, Select, Term};

/// The keys a first window takes from each index, at least: a page of twenty and more.
const FIRST: usize = 60;

/// How many times a window grows when its rows leave the page short.
const GROWTH: usize = 8;

/// Where the condition that a window reads is in its selection.
#[derive(Debug, Clone, Copy)]
enum At {
    /// The selection's filter at this index.
    Filter(usize),
    /// The selection's group at this index (a search's word: any of its fields holds it).
    Group(usize),
}

/// A condition read from its search indexes a window of keys at a time (the module's
/// documentation says how).
#[derive(Debug)]
pub(crate) struct Window {
    /// Where the condition is.
    at: At,
    /// The search indexes of the model's own fields that the condition reads, each with the
    /// word's FTS5 phrase.
    indexes: Vec<(String, String)>,
    /// The condition's terms through a join, as the keys their indexes found.
    joined: Vec<Term>,
    /// The model's key field.
    pk: usize,
    /// Whether the list is in descending order of its key.
    desc: bool,
    /// The key the page starts after (a cursor's), if any.
    after: Option<i64>,
    /// How many keys each index gives the window.
    size: usize,
    /// The most keys a window takes.
    most: usize,
}

impl Window {
    /// The window of the first condition of `select` that one can serve, on SQLite, when
    /// `select` is in the order of its key alone (and starts at a cursor of that key, if at
    /// all), and `rows` (the rows skipped, the page's, and the one after it) are few enough.
    pub(crate) fn find(
        conn: &mut Conn<'_>,
        meta: &ModelMeta,
        select: &Select,
        rows: usize,
    ) -> Result<Option<Window>, Error> {
        if !matches!(conn, Conn::Sqlite(_)) {
            return Ok(None);
        }
        let [order] = select.order.as_slice() else {
            return Ok(None);
        };
        if order.own_field() != Some(meta.pk) {
            return Ok(None);
        }
        let Some(after) = start(select, meta.pk, order.desc) else {
            return Ok(None);
        };
        let mut known = Known::new();
        let candidates = (select.filters.iter().enumerate())
            .map(|(i, filter)| (At::Filter(i), vec![filter]))
            .chain(select.groups.iter().enumerate().filter_map(|(i, group)| {
                let Group::Any(terms) = group else {
                    return None;
                };
                let filters = terms.iter().map(|term| match term {
                    Term::Filter(filter) => Some(filter),
                    Term::Group(_) => None,
                });
                Some((At::Group(i), filters.collect::<Option<Vec<_>>>()?))
            }));
        for (at, filters) in candidates {
            let Some(mut window) = read(conn, meta, &filters, &mut known)? else {
                continue;
            };
            if rows > window.most {
                return Ok(None);
            }
            window.at = at;
            window.desc = order.desc;
            window.after = after;
            window.size = rows.max(FIRST).min(window.most);
            return Ok(Some(window));
        }
        Ok(None)
    }

    /// `select` with this window's keys in place of its condition, and whether they are all
    /// the keys the condition has past the page's start.
    pub(crate) fn select(
        &self,
        conn: &mut Conn<'_>,
        select: &Select,
    ) -> Result<(Select, bool), Error> {
        let toward = match self.desc {
            true => Toward::Down(self.after),
            false => Toward::Up(self.after),
        };
        let mut keys = Vec::new();
        let mut whole = true;
        for (index, phrase) in &self.indexes {
            let found = read_keys(conn, index, phrase, toward, self.size)?;
            whole &= found.len() < self.size;
            keys.extend(found);
        }
        keys.sort_unstable();
        keys.dedup();
        if self.desc {
            keys.reverse();
        }
        let mut select = select.clone();
        if !whole {
            keys.truncate(self.size);
            if let Some(&last) = keys.last() {
                select.filters.push(Filter {
                    path: vec![self.pk],
                    op: if self.desc { Op::Gte } else { Op::Lte },
                    values: vec![Param::Int(last)],
                });
            }
        }
        let own = Filter {
            path: vec![self.pk],
            op: Op::In,
            values: keys.into_iter().map(Param::Int).collect(),
        };
        let place = match self.at {
            At::Filter(i) => select.filters.get_mut(i).map(|f| *f = own),
            At::Group(i) => select.groups.get_mut(i).map(|g| {
                let own = std::iter::once(Term::Filter(own));
                *g = Group::Any(own.chain(self.joined.iter().cloned()).collect());
            }),
        };
        place.ok_or_else(|| Error::Internal("a search window's condition is gone".into()))?;
        Ok((select, whole))
    }

    /// Makes the window larger, up to its most; `false` when it is at its most already.
    pub(crate) fn grow(&mut self) -> bool {
        if self.size >= self.most {
            return false;
        }
        self.size = self.size.saturating_mul(GROWTH).min(self.most);
        true
    }
}

/// The key a list in the order of key `pk` starts after: `Some(None)` without a cursor,
/// `Some(Some(key))` after a cursor's key, `None` for any other condition of a keyset.
fn start(select: &Select, pk: usize, desc: bool) -> Option<Option<i64>> {
    let [conjunction] = select.any_of.as_slice() else {
        return select.any_of.is_empty().then_some(None);
    };
    let [bound] = conjunction.as_slice() else {
        return None;
    };
    let op = if desc { Op::Lt } else { Op::Gt };
    match bound.values.as_slice() {
        [Param::Int(key)] if bound.path == [pk] && bound.op == op => Some(Some(*key)),
        _ => None,
    }
}

/// The window of a condition that holds when any of `filters` holds, when each is a
/// `contains` of a word of a trigram or more on a field with a search index, at least one of
/// them on the model's own fields, and those through a join find few enough keys; its place
/// and order are set by the caller.
fn read(
    conn: &mut Conn<'_>,
    meta: &ModelMeta,
    filters: &[&Filter],
    known: &mut Known,
) -> Result<Option<Window>, Error> {
    let mut window = Window {
        at: At::Filter(0),
        indexes: Vec::new(),
        joined: Vec::new(),
        pk: meta.pk,
        desc: false,
        after: None,
        size: FIRST,
        most: 0,
    };
    for &filter in filters {
        let [word @ Param::Text(text)] = filter.values.as_slice() else {
            return Ok(None);
        };
        if filter.op != Op::Contains || !word.has_trigram() {
            return Ok(None);
        }
        let (model, field) = meta.leaf(&filter.path)?;
        if !field.search_index {
            return Ok(None);
        }
        let index = table_name(model.table, field.column);
        let Some(span) = span(conn, known, model.table, &index)? else {
            return Ok(None);
        };
        if filter.path.len() == 1 {
            window.most = span.most_keys();
            window.indexes.push((index, phrase(&fold_case(text))));
        } else {
            let mut keys = filter.clone();
            replace(conn, meta, &mut keys, known)?;
            if keys.op != Op::In {
                return Ok(None);
            }
            window.joined.push(Term::Filter(keys));
        }
    }
    Ok((!window.indexes.is_empty()).then_some(window))
}
