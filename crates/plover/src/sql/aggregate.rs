//! The statement of an aggregate (docs/contract.md#aggregates): one `SELECT` of the group's
//! fields and the functions of fields over the rows a selection's conditions match, `GROUP BY`
//! the group's fields, ordered by them as a list orders (text by code point, NULLs first), at
//! most the aggregate's limit of groups. The fields of other models are read through
//! `LEFT JOIN`s that hold only the rows the selection's `within` lets joins reach.

use chrono::{NaiveDate, NaiveDateTime};
use diesel::connection::LoadConnection;
use diesel::query_builder::QueryFragment;
use diesel::row::{Field, Row, RowIndex};
use serde_json::Value;

use super::column::Engine;
use super::statement::Statement;
use super::writer::Writer;
use super::{statement, Query};
use crate::db::Conn;
use crate::error::Error;
use crate::meta::{FieldMeta, ModelMeta};
use crate::query::{Aggregate, Func, Operand, Select};
use crate::sql::arg::Arg;
use crate::sql::column::Column;
use crate::value::kind::{FieldKind, SqlType};
use crate::value::{DateText, DateTimeText};

/// How a column of an aggregate's row is read.
#[derive(Debug, Clone, Copy)]
pub(super) enum Out {
    /// As a value of a field of this type (a group's field, a least or greatest value).
    Field(SqlType),
    /// As a 64-bit integer (a count, the sum of an integer field).
    Int,
    /// As a float: the value of `sum` or `avg` (an average, the sum of a float field). A value
    /// beyond the range of a 64-bit float is the request's mistake, a 400 naming the function.
    Float(Func),
}

/// The rows of an aggregate of the rows of `meta` that `s`'s conditions match: per group, the
/// JSON value of each column (the group's fields, the count, the functions' values, in the
/// aggregate's order), at most `a.limit` groups.
pub(crate) fn aggregate<'s>(
    conn: &mut Conn<'_>,
    meta: &ModelMeta,
    s: &'s Select,
    a: &Aggregate,
) -> Result<Vec<Vec<Value>>, Error> {
    let outs = outs(meta, a)?;
    let shape = |k: &mut Vec<usize>| {
        s.shape(k);
        a.shape(k);
    };
    let write = |w: &mut Writer<'s>| write_aggregate(w, meta, s, a);
    on_engine!(conn, |c, pg| {
        let statement = statement(meta, Query::Aggregate, pg, &shape, &write, None)?;
        read_rows(c, statement, &outs)
    })
    .map_err(|e| out_of_range(e, meta, a))
}

/// A sum or average past the range of its type is the request's mistake, the same on both
/// engines: 400 naming the function's parameter. A sum of integers past 64 bits (SQLite's
/// `integer overflow`, PostgreSQL's `bigint out of range`) names `sum`; a sum of floats past
/// the largest 64-bit float (PostgreSQL's `value out of range: overflow`, SQLite's infinity,
/// [`read_rows`]), which an average of the field takes too, names the first `sum` or `avg`
/// of a float field. Any other error is kept.
fn out_of_range(e: Error, meta: &ModelMeta, a: &Aggregate) -> Error {
    let Error::Database(diesel::result::Error::DatabaseError(_, info)) = &e else {
        return e;
    };
    let message = info.message();
    let integer = message.contains("integer overflow") || message.contains("bigint out of range");
    let float = !integer && message.contains("value out of range");
    let first = |float: bool| {
        a.values.iter().find(|(func, term)| {
            let kind = term_field(meta, term).ok().map(|f| f.kind);
            match func {
                Func::Sum if !float => kind.is_some_and(FieldKind::is_integer),
                Func::Sum | Func::Avg if float => kind == Some(FieldKind::Float),
                _ => false,
            }
        })
    };
    match first(float) {
        Some((func, _)) if integer || float => float_or_integer(*func, float),
        _ => e,
    }
}

/// The error of a `sum` or `avg` past the range of 64-bit floats (`float`) or integers.
fn float_or_integer(func: Func, float: bool) -> Error {
    let message = if float {
        "a sum of the values is beyond the range of a 64-bit float"
    } else {
        "a sum is past the range of a 64-bit integer"
    };
    Error::param(func.name(), message)
}

/// How each column of the aggregate's rows is read.
fn outs(meta: &ModelMeta, a: &Aggregate) -> Result<Vec<Out>, Error> {
    let mut outs = Vec::with_capacity(a.group.len() + 1 + a.values.len());
    for term in &a.group {
        outs.push(Out::Field(term_field(meta, term)?.sql_type));
    }
    if a.count {
        outs.push(Out::Int);
    }
    for (func, term) in &a.values {
        let field = term_field(meta, term)?;
        outs.push(match func {
            Func::Sum if field.kind.is_integer() => Out::Int,
            Func::Sum | Func::Avg => Out::Float(*func),
            Func::Min | Func::Max => Out::Field(field.sql_type),
        });
    }
    Ok(outs)
}

/// The model reached through `through` (not empty) from `meta`.
fn model_static(meta: &ModelMeta, through: &[usize]) -> Result<&'static ModelMeta, Error> {
    meta.leaf(through)?.1.joined()
}

/// The alias of the `n`th joined model.
fn alias(n: usize) -> String {
    format!("plover_a{n}")
}

/// The distinct foreign-key paths the terms join through, each prefix once, in order of first
/// use: the `n`th is joined as [`alias`]`(n)`.
fn joined(a: &Aggregate) -> Vec<&[usize]> {
    let mut joined: Vec<&[usize]> = Vec::new();
    for term in a.terms() {
        for depth in 1..=term.through.len() {
            let path = &term.through[..depth];
            if !joined.contains(&path) {
                joined.push(path);
            }
        }
    }
    joined
}

/// `SELECT ... FROM ... LEFT JOIN ... WHERE ... GROUP BY ... ORDER BY ... LIMIT ?`.
fn write_aggregate<'a>(
    w: &mut Writer<'a>,
    meta: &ModelMeta,
    s: &'a Select,
    a: &Aggregate,
) -> Result<(), Error> {
    let joined = joined(a);
    w.sql("SELECT ");
    let mut first = true;
    let mut comma = |w: &mut Writer<'a>| {
        if !std::mem::take(&mut first) {
            w.sql(", ");
        }
    };
    for term in &a.group {
        comma(w);
        expression(w, meta, term, &joined)?;
    }
    if a.count {
        comma(w);
        w.sql("COUNT(*)");
    }
    for (func, term) in &a.values {
        comma(w);
        function(w, meta, *func, term, &joined)?;
    }
    w.from(meta);
    joins(w, meta, s, &joined)?;
    w.conditions(meta, s)?;
    group_and_order(w, meta, a, &joined)?;
    w.sql(" LIMIT ");
    w.bind(Arg::I64(a.limit));
    Ok(())
}

/// The ` LEFT JOIN`s of the joined paths.
fn joins<'a>(
    w: &mut Writer<'a>,
    meta: &ModelMeta,
    s: &'a Select,
    joined: &[&[usize]],
) -> Result<(), Error> {
    for (n, path) in joined.iter().enumerate() {
        let Some((&index, before)) = path.split_last() else {
            continue;
        };
        let (model, from): (&ModelMeta, String) = if before.is_empty() {
            (meta, meta.table.to_owned())
        } else {
            let at = joined
                .iter()
                .position(|p| *p == before)
                .ok_or_else(|| Error::Internal("a join before its prefix".into()))?;
            (model_static(meta, before)?, alias(at))
        };
        w.scoped_left_join(s, &from, model.field_at(index)?, &alias(n))?;
    }
    Ok(())
}

/// The column of a term: the model's own, or the joined model's under its alias.
fn expression(
    w: &mut Writer<'_>,
    meta: &ModelMeta,
    term: &Operand,
    joined: &[&[usize]],
) -> Result<(), Error> {
    if term.through.is_empty() {
        w.column(meta, meta.field_at(term.field)?);
        return Ok(());
    }
    let at = joined
        .iter()
        .position(|p| *p == term.through.as_slice())
        .ok_or_else(|| Error::Internal("a term of no join".into()))?;
    let column = model_static(meta, &term.through)?
        .field_at(term.field)?
        .column;
    w.ident(&alias(at));
    w.sql(".");
    w.ident(column);
    Ok(())
}

/// A function of a term's column, cast on PostgreSQL to the type read back: a sum of
/// integers to `BIGINT` (never `NUMERIC`), of floats (summed in 64 bits) and an average to
/// `DOUBLE PRECISION`; the
/// least and greatest text by code point, as SQLite compares it.
fn function(
    w: &mut Writer<'_>,
    meta: &ModelMeta,
    func: Func,
    term: &Operand,
    joined: &[&[usize]],
) -> Result<(), Error> {
    let leaf = term_field(meta, term)?;
    let kind = leaf.kind;
    let cast = match func {
        Func::Sum if kind.is_integer() => Some("BIGINT"),
        Func::Sum | Func::Avg => Some("DOUBLE PRECISION"),
        Func::Min | Func::Max => None,
    }
    .filter(|_| w.pg);
    if cast.is_some() {
        w.sql("CAST(");
    }
    w.sql(match func {
        Func::Sum => "SUM(",
        Func::Avg => "AVG(",
        Func::Min => "MIN(",
        Func::Max => "MAX(",
    });
    // PostgreSQL sums a `REAL` column in 32 bits, past whose range it fails: summed in 64
    // bits, as SQLite (which stores every float in 64 bits) sums it.
    let widen = w.pg && func == Func::Sum && leaf.sql_type == SqlType::Real;
    if widen {
        w.sql("CAST(");
    }
    expression(w, meta, term, joined)?;
    if widen {
        w.sql(" AS DOUBLE PRECISION)");
    }
    if w.pg && kind == FieldKind::Text {
        w.sql(" COLLATE \"C\"");
    }
    w.sql(")");
    if let Some(cast) = cast {
        w.sql(" AS ");
        w.sql(cast);
        w.sql(")");
    }
    Ok(())
}

/// The field a term names.
fn term_field(meta: &ModelMeta, term: &Operand) -> Result<&'static FieldMeta, Error> {
    if term.through.is_empty() {
        return meta.field_at(term.field);
    }
    model_static(meta, &term.through)?.field_at(term.field)
}

/// ` GROUP BY` and ` ORDER BY` the group's fields (nothing without any): ascending, text by
/// code point and NULLs first on both engines, as a list orders.
fn group_and_order(
    w: &mut Writer<'_>,
    meta: &ModelMeta,
    a: &Aggregate,
    joined: &[&[usize]],
) -> Result<(), Error> {
    for (i, term) in a.group.iter().enumerate() {
        w.sql(if i == 0 { " GROUP BY " } else { ", " });
        expression(w, meta, term, joined)?;
    }
    for (i, term) in a.group.iter().enumerate() {
        w.sql(if i == 0 { " ORDER BY " } else { ", " });
        expression(w, meta, term, joined)?;
        if w.pg && term_field(meta, term)?.kind == FieldKind::Text {
            w.sql(" COLLATE \"C\"");
        }
        w.sql(" ASC");
        if w.pg {
            w.sql(" NULLS FIRST");
        }
    }
    Ok(())
}

/// A connection that can hand a statement's rows over one at a time: SQLite always does;
/// PostgreSQL's driver, by default, receives every row before the first is read, so that a
/// statement's rows would be held whole before the read budget could stop them
/// (docs/security.md).
pub(super) trait RowAtATime: LoadConnection<Self::Mode> {
    /// The loading mode that reads one row at a time.
    type Mode;
}

impl RowAtATime for diesel::SqliteConnection {
    type Mode = diesel::connection::DefaultLoadingMode;
}

#[cfg(feature = "postgres")]
impl RowAtATime for diesel::PgConnection {
    type Mode = diesel::pg::PgRowByRowLoadingMode;
}

/// Runs the statement and reads each row's columns as `outs` says, one row at a time: a read
/// past the request's read budget ends the statement before the rest of its rows arrive.
pub(super) fn read_rows<'q, C>(
    c: &mut C,
    statement: Statement<'q>,
    outs: &[Out],
) -> Result<Vec<Vec<Value>>, Error>
where
    C: RowAtATime,
    C::Backend: Engine,
    Statement<'q>: QueryFragment<C::Backend>,
    for<'c> <C as LoadConnection<C::Mode>>::Row<'c, 'q>: RowIndex<usize>,
{
    let mut rows = Vec::new();
    for row in LoadConnection::<C::Mode>::load(c, statement)? {
        let row = row?;
        let mut cells = Vec::with_capacity(outs.len());
        for (at, out) in outs.iter().enumerate() {
            let cell = Row::get(&row, at)
                .ok_or_else(|| Error::Internal("an aggregate row is short of a column".into()))?;
            let value = cell.value();
            if let Out::Float(func) = out {
                // SQLite's sum past the largest float is infinity (PostgreSQL's an error).
                let number = C::Backend::read::<Option<f64>>(value).map_err(diesel_error)?;
                if number.is_some_and(|n| !n.is_finite()) {
                    return Err(float_or_integer(*func, true));
                }
                cells.push(number.map_or(Value::Null, Value::from));
                continue;
            }
            cells.push(read::<C::Backend>(*out, value).map_err(diesel_error)?);
        }
        rows.push(cells);
    }
    Ok(rows)
}

/// A failed read of a value, as diesel reports it (a read past the budget: busy).
fn diesel_error(e: Box<dyn std::error::Error + Send + Sync>) -> Error {
    Error::from(diesel::result::Error::DeserializationError(e))
}

/// The JSON value of one column, read as `out` says (the field's JSON form: dates as text).
fn read<DB: Engine>(
    out: Out,
    value: Option<DB::RawValue<'_>>,
) -> diesel::deserialize::Result<Value> {
    match out {
        Out::Int => json::<DB, i64>(value, Value::from),
        Out::Float(_) => json::<DB, f64>(value, Value::from),
        Out::Field(sql) => match sql {
            SqlType::Integer => json::<DB, i32>(value, Value::from),
            SqlType::BigInt => json::<DB, i64>(value, Value::from),
            SqlType::Real => json::<DB, f32>(value, Value::from),
            SqlType::Double => json::<DB, f64>(value, Value::from),
            SqlType::Boolean => json::<DB, bool>(value, Value::from),
            SqlType::Text => json::<DB, String>(value, Value::from),
            SqlType::Date => json::<DB, NaiveDate>(value, |d| {
                Value::from(DateText(&d).with_text(str::to_owned))
            }),
            SqlType::Timestamp => json::<DB, NaiveDateTime>(value, |t| {
                Value::from(DateTimeText(&t).with_text(str::to_owned))
            }),
        },
    }
}

/// A nullable value of type `T`, in JSON (`null` for NULL).
fn json<DB: Engine, T: Column>(
    value: Option<DB::RawValue<'_>>,
    to_json: impl FnOnce(T) -> Value,
) -> diesel::deserialize::Result<Value> {
    Ok(DB::read::<Option<T>>(value)?.map_or(Value::Null, to_json))
}

/// The SQL text of an aggregate (placeholders as `?`), for the tests of the text.
#[cfg(test)]
pub(super) fn aggregate_text(
    meta: &ModelMeta,
    s: &Select,
    a: &Aggregate,
    pg: bool,
) -> Result<String, Error> {
    let mut w = Writer::new(pg, true);
    write_aggregate(&mut w, meta, s, a)?;
    Ok(w.into_text()
        .unwrap_or_default()
        .replace(super::writer::PLACEHOLDER, "?"))
}
