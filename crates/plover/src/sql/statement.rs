//! A statement of SQL text and bound arguments that diesel runs on either engine.

use std::marker::PhantomData;

use diesel::query_builder::{AstPass, Query, QueryFragment, QueryId};
use diesel::sql_types::Untyped;
use diesel::sqlite::Sqlite;
use diesel::{QueryResult, RunQueryDsl};

use crate::db::sql_text::Pieces;
use crate::sql::arg::Arg;
use crate::sql::writer::PLACEHOLDER;

/// Whether a statement's text is the same for every use of its type: diesel then finds the
/// prepared statement by the type alone, without reading the text.
pub(crate) trait Identity: 'static {
    const FIXED: bool;
}

/// A statement whose text varies with its shape.
pub(crate) struct Dynamic;

impl Identity for Dynamic {
    const FIXED: bool = false;
}

/// A statement of one text per type `T` (a model and one of its queries of fixed shape).
pub(crate) struct Fixed<T>(PhantomData<T>);

impl<T: 'static> Identity for Fixed<T> {
    const FIXED: bool = true;
}

/// SQL text, kept (cut at its placeholders) or written for this statement alone.
pub(crate) enum Text {
    /// The pieces between the placeholders, from the model's cache.
    Kept(Pieces),
    /// A text with a `\0` for each placeholder.
    Owned(String),
}

/// SQL text and its bound arguments.
pub(crate) struct Statement<'a, I = Dynamic> {
    text: Text,
    args: Vec<Arg<'a>>,
    /// Whether diesel may keep it prepared.
    prepared: bool,
    identity: PhantomData<I>,
}

impl<'a, I> Statement<'a, I> {
    pub(crate) fn new(text: Text, args: Vec<Arg<'a>>, prepared: bool) -> Self {
        Statement {
            text,
            args,
            prepared,
            identity: PhantomData,
        }
    }

    /// The same statement, known to have one text per type `J`.
    pub(crate) fn fixed<J>(self) -> Statement<'a, Fixed<J>> {
        Statement::new(self.text, self.args, self.prepared)
    }
}

impl<I> Statement<'_, I> {
    /// The text and the arguments in order, each argument at its placeholder.
    fn walk<'b, DB: diesel::backend::Backend>(
        &'b self,
        pass: &mut AstPass<'_, 'b, DB>,
        bind: impl Fn(&'b Arg<'_>, &mut AstPass<'_, 'b, DB>) -> QueryResult<()>,
    ) -> QueryResult<()> {
        if !self.prepared {
            pass.unsafe_to_cache_prepared();
        }
        let mut args = self.args.iter();
        let mut piece = |sql: &str, pass: &mut AstPass<'_, 'b, DB>| {
            pass.push_sql(sql);
            args.next().map_or(Ok(()), |arg| bind(arg, pass))
        };
        match &self.text {
            Text::Kept(pieces) => pieces.iter().try_for_each(|sql| piece(sql, pass)),
            Text::Owned(text) => text.split(PLACEHOLDER).try_for_each(|sql| piece(sql, pass)),
        }
    }
}

impl<I> QueryFragment<Sqlite> for Statement<'_, I> {
    fn walk_ast<'b>(&'b self, mut pass: AstPass<'_, 'b, Sqlite>) -> QueryResult<()> {
        self.walk(&mut pass, |arg, pass| arg.bind_sqlite(pass))
    }

    fn is_safe_to_cache_prepared(&self, _: &Sqlite) -> QueryResult<bool> {
        Ok(self.prepared)
    }
}

#[cfg(feature = "postgres")]
impl<I> QueryFragment<diesel::pg::Pg> for Statement<'_, I> {
    fn walk_ast<'b>(&'b self, mut pass: AstPass<'_, 'b, diesel::pg::Pg>) -> QueryResult<()> {
        self.walk(&mut pass, |arg, pass| arg.bind_pg(pass))
    }

    fn is_safe_to_cache_prepared(&self, _: &diesel::pg::Pg) -> QueryResult<bool> {
        Ok(self.prepared)
    }
}

impl<I: Identity> QueryId for Statement<'_, I> {
    type QueryId = I;
    const HAS_STATIC_QUERY_ID: bool = I::FIXED;
}

impl<I> Query for Statement<'_, I> {
    type SqlType = Untyped;
}

impl<I, C> RunQueryDsl<C> for Statement<'_, I> {}
