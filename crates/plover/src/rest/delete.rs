//! Deletes with their dependent rows (SPEC.md section 6): rows that reach the deleted ones
//! through a non-nullable foreign key are deleted in turn, nullable references are set to NULL.
//! Runs inside the caller's transaction.

use crate::db::Conn;
use crate::error::Error;
use crate::model::{all_models, ModelMeta};
use crate::query::Select;

/// Foreign keys deeper than this are a cycle in the schema, not data.
const MAX_DEPTH: usize = 64;

/// Deletes the rows `ids` of `meta`; with `recursive` false any dependent row is a 409.
pub(crate) fn delete_rows(
    conn: &mut Conn<'_>,
    meta: &'static ModelMeta,
    ids: &[i64],
    recursive: bool,
) -> Result<usize, Error> {
    delete_at(conn, meta, ids, recursive, 0)
}

fn delete_at(
    conn: &mut Conn<'_>,
    meta: &'static ModelMeta,
    ids: &[i64],
    recursive: bool,
    depth: usize,
) -> Result<usize, Error> {
    if depth > MAX_DEPTH {
        return Err(Error::Internal(format!(
            "foreign keys to {} nest too deep",
            meta.name
        )));
    }
    let target_type = (meta.type_id)();
    for referrer in all_models() {
        for (idx, field) in referrer.fields.iter().enumerate() {
            let Some(target) = field.fk else { continue };
            if (target().type_id)() != target_type {
                continue;
            }
            let children = (referrer.ops.load_ids)(conn, &Select::ids_in(idx, ids))?;
            if children.is_empty() {
                continue;
            }
            if !recursive {
                return Err(Error::Conflict(format!(
                    "{} rows of {} refer to this {}",
                    children.len(),
                    referrer.name,
                    meta.name
                )));
            }
            if field.nullable {
                (referrer.ops.nullify)(conn, idx, ids)?;
            } else {
                delete_at(conn, referrer, &children, true, depth + 1)?;
            }
        }
    }
    (meta.ops.delete_ids)(conn, ids)
}
