//! What a join into another model obeys (docs/contract.md#joins-respect-the-targets-rules):
//! the resource registered for that model in the same API lets a filter reach only the fields
//! it lets clients filter, and only the rows its `get_query` scope shows.

use std::sync::{Arc, OnceLock};

use super::hooks::{Context, Hooks, Scope};
use crate::error::Error;
use crate::listing::{JoinRules, ListPlan};
use crate::model::{ModelMeta, RestModel};
use crate::query::{Filter, Select, Within};

/// The scope of a resource's rows for a request (its `get_query`), its model type erased.
type ScopeOf = Arc<dyn Fn(&Context<'_>) -> Vec<Filter> + Send + Sync>;

/// The rules of one model's resource, as joins from other resources see them.
pub(crate) struct JoinTarget {
    meta: &'static ModelMeta,
    plan: ListPlan,
    scope: ScopeOf,
}

impl JoinTarget {
    /// The rules of a resource of `M` with this list plan and these hooks.
    pub(crate) fn new<M: RestModel>(plan: ListPlan, hooks: Arc<dyn Hooks<M>>) -> JoinTarget {
        JoinTarget {
            meta: M::meta(),
            plan,
            scope: Arc::new(move |cx: &Context<'_>| {
                let mut scope = Scope::default();
                hooks.get_query(cx, &mut scope);
                scope.filters
            }),
        }
    }
}

/// The join rules of an API: the first resource registered for each model, known once the
/// API is set up (the resources are registered before, and hold this table meanwhile).
#[derive(Default)]
pub(crate) struct Joins(OnceLock<Vec<JoinTarget>>);

impl Joins {
    /// Fixes the table (at set-up; a second call changes nothing).
    pub(crate) fn set(&self, targets: Vec<JoinTarget>) {
        let mut first: Vec<JoinTarget> = Vec::with_capacity(targets.len());
        for target in targets {
            if !first.iter().any(|t| std::ptr::eq(t.meta, target.meta)) {
                first.push(target);
            }
        }
        let _ = self.0.set(first);
    }

    fn target(&self, meta: &ModelMeta) -> Option<&JoinTarget> {
        self.0.get()?.iter().find(|t| std::ptr::eq(t.meta, meta))
    }

    /// The scope of `meta`'s registered resource for `cx` (nothing without one): what an
    /// included object of `meta` obeys besides its own resource's.
    pub(crate) fn scope(&self, cx: &Context<'_>, meta: &ModelMeta) -> Vec<Filter> {
        self.target(meta).map(|t| (t.scope)(cx)).unwrap_or_default()
    }

    /// The scopes of the models that the joins of `select` (on `meta`: its filters' and its
    /// ordering's) reach, for `cx`.
    pub(crate) fn within(
        &self,
        cx: &Context<'_>,
        meta: &'static ModelMeta,
        select: &Select,
    ) -> Result<Vec<Within>, Error> {
        let mut within: Vec<Within> = Vec::new();
        let mut joins: Vec<&[usize]> = Vec::new();
        select.each_filter(|f| {
            if f.path.len() > 1 {
                joins.push(&f.path[..f.path.len() - 1]);
            }
        });
        let orders = select.order.iter().map(|o| o.through.as_slice());
        joins.extend(orders.filter(|through| !through.is_empty()));
        for through in joins {
            let mut model = meta;
            for &index in through {
                model = model.field_at(index)?.joined()?;
                if within.iter().any(|w| w.table == model.table) {
                    continue;
                }
                if let Some(target) = self.target(model) {
                    within.push(Within {
                        table: model.table,
                        filters: (target.scope)(cx),
                    });
                }
            }
        }
        within.retain(|w| !w.filters.is_empty());
        Ok(within)
    }
}

impl JoinRules for Joins {
    fn plan_of(&self, meta: &ModelMeta) -> Option<&ListPlan> {
        self.target(meta).map(|t| &t.plan)
    }
}

impl std::fmt::Debug for Joins {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let names: Vec<&str> = self
            .0
            .get()
            .into_iter()
            .flatten()
            .map(|t| t.meta.name)
            .collect();
        f.debug_tuple("Joins").field(&names).finish()
    }
}
