//! The statement of an admin facet (docs/admin.md#facets): the values of one field over the
//! rows a selection's conditions match, each with its number of rows, and the number of
//! distinct values, in one `SELECT ... GROUP BY`.

use serde_json::Value;

use super::aggregate::{read_rows, Out};
use super::writer::Writer;
use super::{statement, Query};
use crate::db::Conn;
use crate::error::Error;
use crate::meta::ModelMeta;
use crate::query::Select;
use crate::sql::arg::Arg;
use crate::value::kind::FieldKind;

/// What a facet groups the rows by: a field of the model itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum FacetTerm {
    /// The field's value (a boolean, a choice, a foreign key).
    Value(usize),
    /// The year of a date or date-time field, as an integer.
    Year(usize),
    /// The month (1 to 12) of a date or date-time field, as an integer.
    Month(usize),
}

impl FacetTerm {
    /// The field grouped by.
    fn field(self) -> usize {
        match self {
            FacetTerm::Value(i) | FacetTerm::Year(i) | FacetTerm::Month(i) => i,
        }
    }
}

/// One value of a facet and its number of rows.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct FacetRow {
    /// The value as JSON (a field's value, or a year or month number); `null` for NULL.
    pub(crate) value: Value,
    /// The rows that have it.
    pub(crate) count: i64,
}

/// The values of `term` over the rows of `meta` that `s`'s conditions match (its ordering and
/// window are ignored), each with its number of rows: the `limit` most frequent (ties by
/// value) with `by_count`, else the `limit` first by value. Also the number of distinct values
/// in all, which may be more than `limit`.
pub(crate) fn facet_counts<'s>(
    conn: &mut Conn<'_>,
    meta: &ModelMeta,
    s: &'s Select,
    term: FacetTerm,
    by_count: bool,
    limit: i64,
) -> Result<(Vec<FacetRow>, i64), Error> {
    let index = term.field();
    let grouped = meta.field_at(index)?;
    let out = match term {
        FacetTerm::Value(_) => Out::Field(grouped.sql_type),
        FacetTerm::Year(_) | FacetTerm::Month(_) => {
            if !matches!(grouped.kind, FieldKind::Date | FieldKind::DateTime) {
                return Err(Error::Internal(
                    "a date facet of a field that is no date".into(),
                ));
            }
            Out::Int
        }
    };
    let shape = |k: &mut Vec<usize>| {
        s.shape(k);
        let kind = match term {
            FacetTerm::Value(_) => 0,
            FacetTerm::Year(_) => 1,
            FacetTerm::Month(_) => 2,
        };
        k.extend([kind, index, usize::from(by_count)]);
    };
    let write = |w: &mut Writer<'s>| {
        w.sql("SELECT ");
        expression(w, meta, term)?;
        w.sql(", COUNT(*), COUNT(*) OVER ()");
        w.from(meta);
        w.conditions(meta, s)?;
        w.sql(" GROUP BY ");
        expression(w, meta, term)?;
        w.sql(" ORDER BY ");
        if by_count {
            w.sql("COUNT(*) DESC, ");
        }
        expression(w, meta, term)?;
        if w.pg && grouped.kind == FieldKind::Text {
            w.sql(" COLLATE \"C\"");
        }
        w.sql(if w.pg { " ASC NULLS FIRST" } else { " ASC" });
        w.sql(" LIMIT ");
        w.bind(Arg::I64(limit.max(0)));
        Ok(())
    };
    let rows = on_engine!(conn, |c, pg| {
        let statement = statement(meta, Query::Facet, pg, &shape, &write, None)?;
        read_rows(c, statement, &[out, Out::Int, Out::Int])?
    });
    let mut groups = 0;
    let mut out = Vec::with_capacity(rows.len());
    for row in rows {
        let [value, count, all] = <[Value; 3]>::try_from(row)
            .map_err(|_| Error::Internal("a facet row is not three columns".into()))?;
        groups = all.as_i64().unwrap_or(0);
        out.push(FacetRow {
            value,
            count: count.as_i64().unwrap_or(0),
        });
    }
    Ok((out, groups))
}

/// The grouped expression: the column, or its year or month as an integer (SQLite keeps
/// dates as `YYYY-MM-DD...` text).
fn expression(w: &mut Writer<'_>, meta: &ModelMeta, term: FacetTerm) -> Result<(), Error> {
    let column = meta.field_at(term.field())?;
    let (part, from, length) = match term {
        FacetTerm::Value(_) => {
            w.column(meta, column);
            return Ok(());
        }
        FacetTerm::Year(_) => ("YEAR", "1", "4"),
        FacetTerm::Month(_) => ("MONTH", "6", "2"),
    };
    if w.pg {
        w.sql("CAST(EXTRACT(");
        w.sql(part);
        w.sql(" FROM ");
        w.column(meta, column);
        w.sql(") AS BIGINT)");
    } else {
        w.sql("CAST(substr(");
        w.column(meta, column);
        w.sql(", ");
        w.sql(from);
        w.sql(", ");
        w.sql(length);
        w.sql(") AS INTEGER)");
    }
    Ok(())
}
