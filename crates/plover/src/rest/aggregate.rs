//! `GET {prefix}/{name}/aggregate/` of a resource that serves it (docs/contract.md#aggregates):
//! counts, sums, averages, least and greatest values per group, over the rows the list shows.

use serde_json::{Map, Value};

use super::hooks::{Context, ReadChecks};
use super::prepared::{prepend, Core};
use super::request::{ApiRequest, Reply};
use crate::db::Conn;
use crate::error::Error;
use crate::listing::{AggregateQuery, GROUP, MAX_GROUPS};
use crate::query::{Aggregate, Select};

/// The detail-path name under which a resource serves its aggregates.
pub(crate) const AGGREGATE: &str = "aggregate";

impl Core {
    /// The groups of a request's aggregate, under the list's checks, filters and scope
    /// (`hooks` are the resource's).
    pub(crate) fn aggregate(
        &self,
        hooks: &dyn ReadChecks,
        cx: &Context<'_>,
        req: &ApiRequest,
        conn: &mut Conn<'_>,
    ) -> Result<Reply, Error> {
        hooks.check_list_read(cx)?;
        let meta = self.meta;
        let AggregateQuery {
            mut select,
            aggregate,
            keys,
        } = self.list.aggregate(&req.query, &*self.joins)?;
        prepend(hooks.scope_of(cx), &mut select);
        select.within = self
            .joins
            .within(cx, meta, &with_joins(&select, &aggregate))?;
        let rows = crate::sql::aggregate(conn, meta, &select, &aggregate)?;
        if i64::try_from(rows.len()).map_or(true, |n| n > MAX_GROUPS) {
            return Err(Error::param(
                GROUP,
                format!("more than {MAX_GROUPS} groups: filter the rows or group by fewer fields"),
            ));
        }
        body(&keys, rows).map(Reply::ok)
    }

    /// Whether a request's path is this resource's aggregate (`pk` is what follows its name).
    pub(crate) fn is_aggregate(&self, pk: Option<&str>) -> bool {
        self.access.aggregates && pk == Some(AGGREGATE)
    }
}

/// The selection with the aggregate's fields as its ordering: what [`Joins::within`](
/// super::joins::Joins::within) reads to know the models the joins reach.
fn with_joins(select: &Select, aggregate: &Aggregate) -> Select {
    Select {
        order: aggregate.terms().map(|term| term.order()).collect(),
        ..select.clone()
    }
}

/// `{"groups": [...]}`: each row an object of its columns under their keys.
fn body(keys: &[String], rows: Vec<Vec<Value>>) -> Result<Vec<u8>, Error> {
    let groups: Vec<Value> = rows
        .into_iter()
        .map(|row| {
            let object: Map<String, Value> = keys.iter().cloned().zip(row).collect();
            Value::Object(object)
        })
        .collect();
    let mut out = Map::new();
    out.insert("groups".to_owned(), Value::Array(groups));
    serde_json::to_vec(&out).map_err(|e| Error::Internal(e.to_string()))
}
