//! Usernames: stored NFKC-normalised, and no two that look alike (Unicode TR39 confusable
//! skeletons), for every writer of a user model ([`save`](super::save)), which an
//! [`Auth`](crate::accounts::Auth) registers here.

use std::cell::RefCell;
use std::collections::HashMap;
use std::ops::ControlFlow;
use std::sync::{Arc, PoisonError, RwLock};

use serde_json::Value;
use unicode_normalization::UnicodeNormalization;
use unicode_security::skeleton;

use crate::db::Conn;
use crate::error::Error;
use crate::meta::ModelMeta;
use crate::model::RestModel;
use crate::query::{Filter, Op, Order, Param, Select};

/// The user models an [`Auth`](super::Auth) was built for, with their username field.
static USER_MODELS: RwLock<Vec<(&'static ModelMeta, usize)>> = RwLock::new(Vec::new());

/// Rows read at once while looking for a look-alike name.
const BATCH: i64 = 1000;

/// Makes every writer of the model `meta` normalise and check its username field `field`.
pub(crate) fn register(meta: &'static ModelMeta, field: usize) {
    let mut models = USER_MODELS.write().unwrap_or_else(PoisonError::into_inner);
    if !models.iter().any(|(m, _)| std::ptr::eq(*m, meta)) {
        models.push((meta, field));
    }
}

/// The username field of `meta`, if it is a registered user model.
fn username_field(meta: &'static ModelMeta) -> Option<usize> {
    let models = USER_MODELS.read().unwrap_or_else(PoisonError::into_inner);
    models
        .iter()
        .find(|(m, _)| std::ptr::eq(*m, meta))
        .map(|(_, field)| *field)
}

/// A username as stored and looked up: NFKC-normalised (full-width letters, ligatures and
/// compatibility forms become their plain letters), as Django does, and without surrounding
/// whitespace, as DRF's and Django's form fields strip it: ` alice ` is `alice`.
///
/// ```
/// assert_eq!(plover::accounts::normalize_username("ａｌｉｃｅ"), "alice");
/// assert_eq!(plover::accounts::normalize_username("ﬁona"), "fiona");
/// assert_eq!(plover::accounts::normalize_username(" bob\u{3000}"), "bob");
/// ```
pub fn normalize_username(name: &str) -> String {
    let name: String = name.nfkc().collect();
    match name.trim() {
        trimmed if trimmed.len() == name.len() => name,
        trimmed => trimmed.to_owned(),
    }
}

/// Whether two usernames look alike: their TR39 skeletons match after case folding, compared
/// both ways (the skeleton of the folded name, and the folding of the skeleton).
///
/// ```
/// use plover::accounts::confusable_usernames;
///
/// assert!(confusable_usernames("alice", "Alice"));
/// assert!(confusable_usernames("alice", "al\u{0456}ce"), "Cyrillic і");
/// assert!(confusable_usernames("alice", "alic\u{0435}"), "Cyrillic е");
/// assert!(confusable_usernames("paypal", "paypa1"));
/// assert!(!confusable_usernames("alice", "alicia"));
/// ```
pub fn confusable_usernames(a: &str, b: &str) -> bool {
    LookAlike::of(a).matches(&LookAlike::of(b))
}

/// The two forms a name is compared by.
struct LookAlike(String, String);

impl LookAlike {
    fn of(name: &str) -> LookAlike {
        let folded = name.to_lowercase();
        let skeleton_of_folded: String = skeleton(&folded).collect();
        let folded_skeleton = skeleton(name).collect::<String>().to_lowercase();
        LookAlike(skeleton_of_folded, folded_skeleton)
    }

    fn matches(&self, other: &LookAlike) -> bool {
        self.0 == other.0 || self.0 == other.1 || self.1 == other.0 || self.1 == other.1
    }
}

/// For a user model: the username in `changes` as stored ([`normalize_username`]); a name that
/// is blank once trimmed is refused (400 naming the field). Runs before the field's
/// constraints, so that they see the stored name. Other models pass untouched.
pub(crate) fn normalize<M: RestModel>(changes: &mut M::Changes) -> Result<(), Error> {
    let Some(field) = username_field(M::meta()) else {
        return Ok(());
    };
    if let Some(name) = normalized(M::meta(), field, M::changes_json(changes, field))? {
        M::set_json(changes, field, &Value::String(name)).map_err(Error::Internal)?;
    }
    Ok(())
}

/// The stored form of the username `given` of `meta`'s field `field`, when it differs from
/// what was given ([`normalize`]'s body, compiled once for every model).
fn normalized(
    meta: &ModelMeta,
    field: usize,
    given: Option<Value>,
) -> Result<Option<String>, Error> {
    let Some(Value::String(given)) = given else {
        return Ok(None);
    };
    let name = normalize_username(&given);
    if name.is_empty() {
        return Err(Error::field(
            meta.fields[field].name,
            "this field may not be blank",
        ));
    }
    Ok((name != given).then_some(name))
}

/// Reads the key and the username of the rows of a user table that a selection picks: the
/// one part of the checks that knows the model's type.
type LoadNames = fn(&mut Conn<'_>, &Select, usize) -> Result<Vec<(i64, Value)>, Error>;

/// [`LoadNames`] of the model `M`.
fn load_names<M: RestModel>(
    conn: &mut Conn<'_>,
    select: &Select,
    field: usize,
) -> Result<Vec<(i64, Value)>, Error> {
    let rows = M::load(conn, select)?;
    Ok(rows.iter().map(|r| (r.pk(), r.field_json(field))).collect())
}

/// For a user model: refuses (409 naming the field) a new or changed username (normalised by
/// [`normalize`]) that looks like another user's. On PostgreSQL the check first takes a lock
/// that every create and rename of the model takes, held to the end of the transaction, so
/// that two concurrent writes of look-alike names cannot both pass (on SQLite, write
/// transactions take turns already). Other models pass untouched.
pub(crate) fn check<M: RestModel>(
    conn: &mut Conn<'_>,
    changes: &M::Changes,
    existing: Option<&M>,
) -> Result<(), Error> {
    let Some(field) = username_field(M::meta()) else {
        return Ok(());
    };
    let Some(Value::String(name)) = M::changes_json(changes, field) else {
        return Ok(());
    };
    let existing = existing.map(|row| (row.pk(), row.field_json(field)));
    let names = Names {
        meta: M::meta(),
        field,
        load: load_names::<M>,
    };
    names.check(conn, name, existing)
}

/// The username field of one user table, and how its rows are read.
struct Names {
    meta: &'static ModelMeta,
    field: usize,
    load: LoadNames,
}

impl Names {
    /// [`check`] of `name`, given to the row `existing` (its key and current name) or to a
    /// new row.
    fn check(
        &self,
        conn: &mut Conn<'_>,
        name: String,
        existing: Option<(i64, Value)>,
    ) -> Result<(), Error> {
        if existing
            .as_ref()
            .is_some_and(|(_, current)| *current == Value::String(name.clone()))
        {
            return Ok(()); // not renamed
        }
        lock_names(conn, self.meta)?;
        let wanted = LookAlike::of(&name);
        let skip = existing.map(|(pk, _)| pk);
        let found = match self.in_bulk_index(conn, &mut |index| index.find(&wanted, skip))? {
            Some(found) => found,
            None => self.scan_for(conn, &wanted, skip)?,
        };
        match found {
            None => Ok(()),
            Some(other) => Err(Error::FieldConflict {
                field: self.meta.fields[self.field].name.to_owned(),
                message: if other == name {
                    format!("a user named '{other}' exists")
                } else {
                    format!("a user named '{other}' exists, and this name looks like it")
                },
            }),
        }
    }

    /// The name of a row but `skip` that looks like `wanted`, read from the table.
    fn scan_for(
        &self,
        conn: &mut Conn<'_>,
        wanted: &LookAlike,
        skip: Option<i64>,
    ) -> Result<Option<String>, Error> {
        let mut found = None;
        self.each_name(conn, &mut |pk, other| {
            if skip != Some(pk) && wanted.matches(&LookAlike::of(&other)) {
                found = Some(other);
                return ControlFlow::Break(());
            }
            ControlFlow::Continue(())
        })?;
        Ok(found)
    }

    /// Calls `visit` with the key and name of every row of the user table, key ascending,
    /// [`BATCH`] rows a query, until it breaks. Stops (with the error of an interrupted
    /// statement) once the request's client has gone.
    fn each_name(
        &self,
        conn: &mut Conn<'_>,
        visit: &mut dyn FnMut(i64, String) -> ControlFlow<()>,
    ) -> Result<(), Error> {
        let pk = self.meta.pk;
        let mut columns = vec![false; self.meta.fields.len()];
        columns[self.field] = true;
        columns[pk] = true;
        let mut select = Select {
            order: vec![Order::asc(pk)],
            limit: Some(BATCH),
            columns: Some(Arc::from(columns)),
            ..Select::default()
        };
        loop {
            crate::db::cancel::stop_if_client_gone()?;
            let rows = (self.load)(conn, &select, self.field)?;
            let last = rows.last().map(|(pk, _)| *pk);
            let full = rows.len() as i64 == BATCH;
            for (pk, name) in rows {
                if let Value::String(name) = name {
                    if visit(pk, name).is_break() {
                        return Ok(());
                    }
                }
            }
            let Some(last) = last.filter(|_| full) else {
                return Ok(());
            };
            select.filters = vec![Filter {
                path: vec![pk],
                op: Op::Gt,
                values: vec![Param::Int(last)],
            }];
        }
    }

    /// Runs `f` with the look-alike index of the user table when a bulk write runs on this
    /// thread (reading it at the first call); `None` outside one.
    fn in_bulk_index<R>(
        &self,
        conn: &mut Conn<'_>,
        f: &mut dyn FnMut(&mut NameIndex) -> R,
    ) -> Result<Option<R>, Error> {
        let meta = self.meta;
        let (active, built) = BULK.with(|b| match &*b.borrow() {
            None => (false, false),
            Some(indexes) => (true, indexes.iter().any(|i| std::ptr::eq(i.meta, meta))),
        });
        if !active {
            return Ok(None);
        }
        if !built {
            let index = NameIndex::read(self, conn)?;
            BULK.with(|b| {
                if let Some(indexes) = b.borrow_mut().as_mut() {
                    indexes.push(index);
                }
            });
        }
        Ok(BULK.with(|b| {
            (b.borrow_mut().as_mut())
                .and_then(|indexes| indexes.iter_mut().find(|i| std::ptr::eq(i.meta, meta)))
                .map(f)
        }))
    }
}

/// The first key of the advisory locks of usernames (`"plun"` in ASCII); the second is the
/// hash of the user table's name.
#[cfg(feature = "postgres")]
const NAMES_LOCK: i32 = 0x706c_756e;

/// On PostgreSQL, waits for the lock on the usernames of `meta`'s table, held until the
/// transaction ends (the writes of other models never take it). A `SELECT` run after it sees
/// every name committed by the writers that held it before.
fn lock_names(conn: &mut Conn<'_>, meta: &ModelMeta) -> Result<(), Error> {
    match conn {
        Conn::Sqlite(_) => {
            let _ = meta; // write transactions take turns already
            Ok(())
        }
        #[cfg(feature = "postgres")]
        Conn::Pg(c) => {
            use diesel::RunQueryDsl;
            diesel::sql_query("SELECT pg_advisory_xact_lock($1, hashtext($2))")
                .bind::<diesel::sql_types::Integer, _>(NAMES_LOCK)
                .bind::<diesel::sql_types::Text, _>(meta.table)
                .execute(*c)
                .map(|_| ())
                .map_err(Error::from)
        }
    }
}

thread_local! {
    /// The look-alike indexes of the bulk write this thread runs ([`in_bulk`]), one per user
    /// table, each made at its first check; `None` outside a bulk write.
    static BULK: RefCell<Option<Vec<NameIndex>>> = const { RefCell::new(None) };
}

/// The usernames of one user table as a bulk write sees them: each row's name, and the rows
/// by each of the two forms names are compared by ([`LookAlike`]).
struct NameIndex {
    meta: &'static ModelMeta,
    names: HashMap<i64, String>,
    forms: HashMap<String, Vec<i64>>,
}

impl NameIndex {
    /// The index of every row of the user table of `names`: one read of the table.
    fn read(names: &Names, conn: &mut Conn<'_>) -> Result<NameIndex, Error> {
        let mut index = NameIndex {
            meta: names.meta,
            names: HashMap::new(),
            forms: HashMap::new(),
        };
        names.each_name(conn, &mut |pk, name| {
            index.set(pk, name);
            ControlFlow::Continue(())
        })?;
        Ok(index)
    }

    /// Row `pk` is named `name` now.
    fn set(&mut self, pk: i64, name: String) {
        if let Some(old) = self.names.remove(&pk) {
            let LookAlike(a, b) = LookAlike::of(&old);
            for form in [a, b] {
                if let Some(rows) = self.forms.get_mut(&form) {
                    rows.retain(|&r| r != pk);
                }
            }
        }
        let LookAlike(a, b) = LookAlike::of(&name);
        for form in [a, b] {
            let rows = self.forms.entry(form).or_default();
            if !rows.contains(&pk) {
                rows.push(pk);
            }
        }
        self.names.insert(pk, name);
    }

    /// The name of a row but `skip` that looks like `wanted` (one of its forms is one of
    /// `wanted`'s, as [`LookAlike::matches`] compares them).
    fn find(&self, wanted: &LookAlike, skip: Option<i64>) -> Option<String> {
        [&wanted.0, &wanted.1]
            .into_iter()
            .filter_map(|form| self.forms.get(form))
            .flatten()
            .find(|&&pk| skip != Some(pk))
            .and_then(|pk| self.names.get(pk).cloned())
    }
}

/// Runs `f`, a write of many rows in one transaction on this thread (the admin's import and
/// inlines), checking usernames against an index of the table read once, at the first check,
/// and kept up to date by the writes ([`saved`]): each row costs a lookup instead of a read of
/// every user (1,000 new users on a table of 7,000 read it 1,000 times). The index is only
/// valid inside the transaction whose writes it follows: `f` must be that whole transaction.
pub(crate) fn in_bulk<R>(f: impl FnOnce() -> R) -> R {
    struct Reset;
    impl Drop for Reset {
        fn drop(&mut self) {
            BULK.with(|b| *b.borrow_mut() = None);
        }
    }
    BULK.with(|b| *b.borrow_mut() = Some(Vec::new()));
    let _reset = Reset;
    f()
}

/// Tells the index of a bulk write running on this thread, if any, that `row` was written.
pub(crate) fn saved<M: RestModel>(row: &M) {
    if let Some(field) = username_field(M::meta()) {
        saved_name(M::meta(), row.pk(), row.field_json(field));
    }
}

/// [`saved`] of the row `pk` of `meta`, named `name`.
fn saved_name(meta: &'static ModelMeta, pk: i64, name: Value) {
    BULK.with(|b| {
        let mut bulk = b.borrow_mut();
        let index = (bulk.as_mut())
            .and_then(|indexes| indexes.iter_mut().find(|i| std::ptr::eq(i.meta, meta)));
        if let (Some(index), Value::String(name)) = (index, name) {
            index.set(pk, name);
        }
    });
}
