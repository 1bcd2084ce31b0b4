//! The values of the index's filters as people read them (the index's chips, the export
//! page): a foreign key's keys shown as the related rows' texts.

use std::collections::HashMap;

use super::prepared::PreparedAdmin;
use crate::db::Conn;
use crate::error::Error;
use crate::model::ModelMeta;
use crate::query::Select;

/// The related model and keys a filter names, when it is `{fk}`, `{fk}__eq` or `{fk}__ne`
/// (one key) or `{fk}__in` or `{fk}__nin` (keys separated by commas) on a foreign key.
type Related = Option<(&'static ModelMeta, Vec<i64>)>;

impl PreparedAdmin {
    /// The value of each `(key, value)` filter as shown: on a foreign key, the related rows'
    /// texts with their keys (`carol (#4)`, `#4` for a key with no row), read with one query
    /// per related model; any other value as given.
    pub(crate) fn filter_texts(
        &self,
        conn: &mut Conn<'_>,
        pairs: &[(String, String)],
    ) -> Result<Vec<String>, Error> {
        let related: Vec<Related> = pairs.iter().map(|(k, v)| self.related(k, v)).collect();
        let mut wanted: Vec<(&'static ModelMeta, Vec<i64>)> = Vec::new();
        for (target, ids) in related.iter().flatten() {
            match wanted.iter_mut().find(|(t, _)| t.table == target.table) {
                Some((_, all)) => all.extend(ids),
                None => wanted.push((target, ids.clone())),
            }
        }
        let mut texts: HashMap<(&'static str, i64), String> = HashMap::new();
        for (target, ids) in wanted {
            let rows = (target.ops.load_display)(conn, &Select::ids_in(target.pk, &ids))?;
            texts.extend(
                rows.into_iter()
                    .map(|(id, text)| ((target.table, id), text)),
            );
        }
        Ok((pairs.iter().zip(related))
            .map(|((_, value), related)| match related {
                None => value.clone(),
                Some((target, ids)) => (ids.iter())
                    .map(|id| match texts.get(&(target.table, *id)) {
                        Some(text) => format!("{text} (#{id})"),
                        None => format!("#{id}"),
                    })
                    .collect::<Vec<_>>()
                    .join(", "),
            })
            .collect())
    }

    /// The related model and keys of the filter `key=value` ([`Related`]).
    fn related(&self, key: &str, value: &str) -> Related {
        let (name, op) = key.split_once("__").unwrap_or((key, "eq"));
        let target = (self.meta.field(name)?.1.fk?)();
        let values: Vec<&str> = match op {
            "eq" | "ne" => vec![value],
            "in" | "nin" => value.split(',').collect(),
            _ => return None,
        };
        let ids = (values.iter())
            .map(|v| v.trim().parse::<i64>().ok())
            .collect::<Option<Vec<i64>>>()?;
        Some((target, ids))
    }
}
