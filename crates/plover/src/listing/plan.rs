//! A list's plan, compiled once at set-up (docs/contract.md#filters): what it lets clients
//! filter and order on, its bounds and page size, and the rules joins obey.

use std::collections::HashMap;

use crate::error::Error;
use crate::model::ModelMeta;
use crate::query::{Count, Limits};

/// A list compiled once at set-up: what a resource or model admin allows to filter and order
/// on, as field indexes, and its page size; it parses each request's query string.
#[derive(Debug, Clone)]
pub(crate) struct ListPlan {
    /// The model.
    pub(crate) meta: &'static ModelMeta,
    /// `filter_fields`: allowed paths, as field indexes along the joins (`None` = every field
    /// the resource shows; a field it hides is filterable only when listed here).
    pub(crate) fields: Option<Vec<Vec<usize>>>,
    /// `filter_exclude`: refused paths (and everything below them).
    pub(crate) exclude: Vec<Vec<usize>>,
    /// `filter_recursive`: whether joins through foreign keys are allowed.
    pub(crate) recursive: bool,
    /// Per field: whether the resource serializes it (after `fields`/`exclude`).
    pub(crate) exposed: Vec<bool>,
    /// Rules of the included resource per foreign-key field index, applied to joins through it.
    pub(crate) nested: HashMap<usize, ListPlan>,
    /// Bounds on the conditions and values of one request.
    pub(crate) limits: Limits,
    /// Rows a page, and the most `limit` may ask for.
    pub(crate) paginate_by: i64,
    /// How the list counts its rows when the request does not say (`None`: it does not).
    pub(crate) count: Option<Count>,
    /// `search_fields`: the text fields `q` searches, as paths of field indexes.
    pub(crate) search: Vec<Vec<usize>>,
}

impl ListPlan {
    /// The most words `q` may hold: each is searched in every search field, and the searches
    /// of one request together may take as many patterns as its `like` filters
    /// (`Limits::max_patterns`).
    pub(crate) fn search_words(&self) -> usize {
        (self.limits.max_patterns / self.search.len().max(1)).max(1)
    }
}

/// The filter rules of the lists registered for the models that joins reach: a join into a
/// model obeys the rules of the list registered for it (REST: its resource in the same API).
pub(crate) trait JoinRules: std::fmt::Debug {
    /// The plan of the list registered for `meta`, if any.
    fn plan_of(&self, meta: &ModelMeta) -> Option<&ListPlan>;
}

/// No list registered for any model (`&()`): joins obey only the target models' write-only
/// and private fields, and the rules of included lists.
impl JoinRules for () {
    fn plan_of(&self, _meta: &ModelMeta) -> Option<&ListPlan> {
        None
    }
}

/// The error of a path that joins through more foreign keys than `limits` allow.
pub(super) fn too_many_joins(param: &str, limits: &Limits) -> Error {
    Error::param(
        param,
        format!("at most {} joins in one path", limits.max_joins),
    )
}

/// Whether the path (field indexes, one per model along the joins) may be filtered under
/// `rules`, each join under the rules of its target: the included resource's for a field that
/// includes one, else the list `joins` gives for the target model.
pub(crate) fn allowed(rules: &ListPlan, path: &[usize], joins: &dyn JoinRules) -> bool {
    let mut meta = rules.meta;
    for (depth, &idx) in path.iter().enumerate() {
        let field = &meta.fields[idx];
        if field.excluded {
            return false;
        }
        // A private field only where this resource shows it: never through a join.
        if field.private && (depth > 0 || !rules.exposed[idx]) {
            return false;
        }
        if let Some(target) = field.fk {
            if depth + 1 < path.len() {
                meta = target();
            }
        }
    }
    if path.len() > 1 && !rules.recursive {
        return false;
    }
    // A rule names a path (`user__username`); it covers the paths that start with it.
    let covers = |rule: &Vec<usize>| !rule.is_empty() && path.starts_with(rule);
    if rules.exclude.iter().any(covers) {
        return false;
    }
    let listed = rules
        .fields
        .as_ref()
        .map(|fields| fields.iter().any(covers));
    if listed == Some(false) {
        return false;
    }
    // What the resource does not show it does not filter (a bisection on a hidden price would
    // recover it), unless its `filter_fields` names it.
    if path
        .first()
        .is_some_and(|&idx| !rules.exposed.get(idx).copied().unwrap_or(true))
        && listed != Some(true)
    {
        return false;
    }
    if let ([first, rest @ ..], true) = (path, path.len() > 1) {
        let target = rules.meta.fields[*first].target();
        let nested = rules.nested.get(first).or_else(|| joins.plan_of(target?));
        if let Some(nested) = nested {
            // The target's list must show the field (its filter_fields does not reach through).
            return nested.exposed.get(rest[0]).copied().unwrap_or(false)
                && allowed(nested, rest, joins);
        }
    }
    true
}
