//! The words of queries: filter operators ([`Op`]) and their values ([`Param`]), how a list
//! counts ([`Count`]) and how much one request may ask for ([`Limits`]). The selections built
//! from them (by the list query string's parser and by `views::Query`) are written as SQL for
//! either engine.

mod aggregate;
mod limits;
pub(crate) mod select;

pub use crate::value::param::Param;
pub(crate) use aggregate::{Aggregate, Func, Operand};
pub use limits::{Limits, MAX_IDEMPOTENCY_KEY_CHARS};
pub(crate) use select::{Filter, Group, Order, Select, Term, Within};

/// A filter operator (`<field>__<op>=<value>`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    /// `=`
    Eq,
    /// `<>` (combined with AND when repeated)
    Ne,
    /// `<`
    Lt,
    /// `<=`
    Lte,
    /// `>`
    Gt,
    /// `>=`
    Gte,
    /// `IN (...)`
    In,
    /// `IS NULL`, or `= true/false` on booleans
    Is,
    /// case-sensitive `LIKE`
    Like,
    /// case-insensitive `LIKE`, for all of Unicode
    ILike,
    /// contains the text as a literal substring (`%` and `_` are plain), case-insensitive
    /// for all of Unicode; not a query-string operator (the admin's lookups use it)
    Contains,
}

impl Op {
    /// The operator that a query-string suffix names.
    pub fn from_name(name: &str) -> Option<Op> {
        Some(match name {
            "eq" => Op::Eq,
            "ne" => Op::Ne,
            "lt" => Op::Lt,
            "lte" => Op::Lte,
            "gt" => Op::Gt,
            "gte" => Op::Gte,
            "in" => Op::In,
            "is" => Op::Is,
            "like" => Op::Like,
            "ilike" => Op::ILike,
            _ => return None,
        })
    }
}

/// How a list counts the rows its filters match (`?count=`, or a resource's default).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Count {
    /// `COUNT(*)` of the matching rows (`count=exact`).
    Exact,
    /// The query planner's estimate on PostgreSQL, an exact count on SQLite
    /// (`count=estimated`): cheap on a large table, approximate.
    Estimated,
    /// An exact count up to [`Limits::count_exact_up_to`](crate::query::Limits) rows, past it
    /// (by the planner's estimate) the estimate, on PostgreSQL; exact on SQLite
    /// (`count=auto`): what a list on a table that may grow large should count by.
    Auto,
}

impl Count {
    /// The mode a `count` parameter names.
    pub fn from_name(name: &str) -> Option<Count> {
        match name {
            "exact" => Some(Count::Exact),
            "estimated" => Some(Count::Estimated),
            "auto" => Some(Count::Auto),
            _ => None,
        }
    }
}
