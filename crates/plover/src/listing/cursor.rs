//! Keyset (cursor) pagination: the `next` link of a page carries the ordering values of its
//! last row, and the next page selects the rows after them instead of skipping `OFFSET` rows,
//! so that a deep page costs what the first one does.
//!
//! A cursor is `base64url(JSON [page, [value, ...]])`, one value per ordering term (the
//! primary key last). It holds only values of columns the client may already order by; a
//! forged cursor is no more than a filter on those columns, parsed and bound like any filter.

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine as _;
use serde_json::Value;

use super::CURSOR;
use crate::error::Error;
use crate::model::{FieldKind, ModelMeta};
use crate::query::{Filter, Op, Order, Param};

/// Whether keyset pagination applies to this ordering: every term a non-nullable column of
/// the model itself (NULLs would need three-valued comparisons, and a joined row may be
/// missing).
pub(crate) fn supports(meta: &ModelMeta, order: &[Order]) -> bool {
    order.iter().all(|o| {
        o.own_field()
            .and_then(|idx| meta.fields.get(idx))
            .is_some_and(|f| !f.nullable)
    })
}

/// The cursor of the page after `page`, from the values of its last row.
pub(crate) fn encode(page: i64, values: Vec<Value>) -> String {
    // A pair serializes as the array `[page, [value, ...]]`; writing JSON values to memory
    // cannot fail.
    let json = serde_json::to_vec(&(page, values)).unwrap_or_default();
    URL_SAFE_NO_PAD.encode(json)
}

/// The page number a cursor leads to, and the condition selecting the rows after its row:
/// an OR of ANDs, `(a > x) OR (a = x AND b > y) OR ...`, `<` for descending terms.
pub(crate) fn decode(
    token: &str,
    meta: &ModelMeta,
    order: &[Order],
) -> Result<(i64, Vec<Vec<Filter>>), Error> {
    let bad = || Error::param(CURSOR, "not a cursor of this list");
    let bytes = URL_SAFE_NO_PAD.decode(token).map_err(|_| bad())?;
    let json: Value = serde_json::from_slice(&bytes).map_err(|_| bad())?;
    let (page, values) = match json.as_array().map(Vec::as_slice) {
        Some([page, Value::Array(values)]) => (page.as_i64().ok_or_else(bad)?, values),
        _ => return Err(bad()),
    };
    // The page after it must be representable too: page numbers never wrap around.
    if page < 2 || page == i64::MAX || values.len() != order.len() || !supports(meta, order) {
        return Err(bad());
    }
    let params = order
        .iter()
        .zip(values)
        .map(|(o, v)| param(meta.fields[o.field].kind, v).ok_or_else(bad))
        .collect::<Result<Vec<_>, _>>()?;
    let term = |i: usize, op: Op| Filter {
        path: vec![order[i].field],
        op,
        values: vec![params[i].clone()],
    };
    let any_of = (0..order.len())
        .map(|i| {
            let mut all: Vec<Filter> = (0..i).map(|j| term(j, Op::Eq)).collect();
            all.push(term(i, if order[i].desc { Op::Lt } else { Op::Gt }));
            all
        })
        .collect();
    Ok((page, any_of))
}

/// A JSON value of a serialized field, back as a filter value, within the column's range.
fn param(kind: FieldKind, value: &Value) -> Option<Param> {
    match (kind, value) {
        (FieldKind::Int32, Value::Number(n)) => {
            let v = i32::try_from(n.as_i64()?).ok()?;
            Some(Param::Int(v.into()))
        }
        (FieldKind::Int64, Value::Number(n)) => n.as_i64().map(Param::Int),
        (FieldKind::Float, Value::Number(n)) => {
            n.as_f64().filter(|v| v.is_finite()).map(Param::Float)
        }
        (FieldKind::Bool, Value::Bool(b)) => Some(Param::Bool(*b)),
        (_, Value::String(s)) => Param::parse(kind, s).ok(),
        _ => None,
    }
}
