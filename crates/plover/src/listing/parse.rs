//! List query strings (docs/contract.md#filters, #ordering and #pagination) to a [`Select`].

use std::borrow::Cow;
use std::collections::HashMap;

use super::groups::{self, Syntax, NOT, OR};
use super::{is_filter, path_parts, COUNT, ORDERING, PAGE, SEARCH};
use crate::error::Error;
use crate::model::{FieldKind, ModelMeta};
use crate::query::{Count, Filter, Group, Limits, Op, Order, Param, Select, Term};

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

/// A parsed list request.
#[derive(Debug, Clone)]
pub(crate) struct ListQuery {
    /// Filters and ordering; `limit` is one more than the page size (to know `next`).
    pub(crate) select: Select,
    /// The page number, from 1.
    pub(crate) page: i64,
    /// The page size.
    pub(crate) limit: i64,
    /// Whether and how to count the matching rows.
    pub(crate) count: Option<Count>,
}

impl ListPlan {
    /// The most words `q` may hold: each is searched in every search field, and the searches
    /// of one request together may take as many patterns as its `like` filters
    /// (`Limits::max_patterns`).
    pub(crate) fn search_words(&self) -> usize {
        (self.limits.max_patterns / self.search.len().max(1)).max(1)
    }

    /// The selection of a list request's decoded query pairs: filters, ordering, page; joins
    /// obey the rules `joins` gives for the models they reach.
    pub(crate) fn parse(
        &self,
        pairs: &[(String, String)],
        joins: &dyn JoinRules,
    ) -> Result<ListQuery, Error> {
        parse_list_query(pairs, self, joins)
    }

    /// The conditions alone (filters, groups, search) of a list request's decoded query
    /// pairs, as a selection of every matching row (an export's).
    #[cfg(feature = "admin")]
    pub(crate) fn conditions(
        &self,
        pairs: &[(String, String)],
        joins: &dyn JoinRules,
    ) -> Result<Select, Error> {
        let (filters, groups) = parse_conditions(pairs, self, joins)?;
        Ok(Select {
            filters,
            groups,
            ..Select::default()
        })
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

fn parse_list_query(
    pairs: &[(String, String)],
    rules: &ListPlan,
    joins: &dyn JoinRules,
) -> Result<ListQuery, Error> {
    let paginate_by = rules.paginate_by;
    let first = |name: &str| {
        pairs
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    };
    let positive = |name: &str| -> Result<Option<i64>, Error> {
        match first(name) {
            None => Ok(None),
            Some(v) => match v.parse::<i64>() {
                Ok(n) if n >= 1 => Ok(Some(n)),
                _ => Err(Error::param(name, "expected an integer >= 1")),
            },
        }
    };
    let limit = positive("limit")?.map_or(paginate_by, |l| l.min(paginate_by));
    let page = positive(PAGE)?.unwrap_or(1);
    // A page too far for the offset to be represented is past the end all the same: the
    // saturated offset skips every row (a page past the end is empty: docs/contract.md#pagination).
    let offset = (page - 1).saturating_mul(limit);

    let (filters, groups) = parse_conditions(pairs, rules, joins)?;
    let mut select = Select {
        filters,
        groups,
        order: match first(ORDERING) {
            Some(v) => parse_ordering(v, rules, joins)?,
            None => Vec::new(),
        },
        limit: Some(limit + 1),
        offset,
        any_of: Vec::new(),
        columns: None,
        within: Vec::new(),
    };
    let pk = rules.meta.pk;
    if !select.order.iter().any(|o| o.own_field() == Some(pk)) {
        select.order.push(Order::asc(pk));
    }
    let count = match first(COUNT) {
        None => rules.count,
        Some(name) => Some(
            Count::from_name(name)
                .ok_or_else(|| Error::param(COUNT, "expected exact or estimated"))?,
        ),
    };
    Ok(ListQuery {
        select,
        page,
        limit,
        count,
    })
}

/// The ordering terms: each a column the resource exposes, or a field that a join which
/// filters may take reaches (`user__username`); none twice, and no more terms than the model
/// has fields (docs/contract.md#bounded-cost).
fn parse_ordering(
    value: &str,
    rules: &ListPlan,
    joins: &dyn JoinRules,
) -> Result<Vec<Order>, Error> {
    let mut order: Vec<Order> = Vec::new();
    if value.is_empty() {
        return Ok(order);
    }
    for part in value.split(',') {
        let (name, desc) = match part.strip_prefix('-') {
            Some(rest) => (rest, true),
            None => (part, false),
        };
        let term = order_term(name, rules, joins)?;
        if order
            .iter()
            .any(|o| o.through == term.through && o.field == term.field)
        {
            return Err(Error::param(ORDERING, "names a column twice"));
        }
        if order.len() == rules.meta.fields.len() {
            return Err(Error::param(
                ORDERING,
                format!("at most {} terms", rules.meta.fields.len()),
            ));
        }
        order.push(Order { desc, ..term });
    }
    Ok(order)
}

/// The ascending term of an ordering name, if the list may order by it.
fn order_term(name: &str, rules: &ListPlan, joins: &dyn JoinRules) -> Result<Order, Error> {
    // The name is not echoed: it is arbitrary client text.
    let refused = || Error::param(ORDERING, "not a column of this resource");
    let mut path = Vec::new();
    let mut meta = rules.meta;
    let mut parts = path_parts(name).peekable();
    while let Some(part) = parts.next() {
        let (idx, field) = meta.field(part).ok_or_else(refused)?;
        path.push(idx);
        if parts.peek().is_some() {
            meta = field.fk.ok_or_else(refused)?();
        }
    }
    // Bounded before the rules walk the path (one step per join).
    if path.len() > rules.limits.max_joins + 1 {
        return Err(too_many_joins(ORDERING, &rules.limits));
    }
    let (&first, _) = path.split_first().ok_or_else(refused)?;
    if path.len() == 1 {
        let shown = rules.exposed[first] && !rules.meta.fields[first].excluded;
        return shown.then(|| Order::asc(first)).ok_or_else(refused);
    }
    if !allowed(rules, &path, joins) {
        return Err(refused());
    }
    let field = path.pop().ok_or_else(refused)?;
    Ok(Order {
        through: path,
        field,
        desc: false,
    })
}

/// The error of a path that joins through more foreign keys than `limits` allow.
fn too_many_joins(param: &str, limits: &Limits) -> Error {
    Error::param(
        param,
        format!("at most {} joins in one path", limits.max_joins),
    )
}

/// What one request's conditions may still use of the limits (docs/contract.md#bounded-cost):
/// every filter key, group term and group counts as a condition; values and patterns add up
/// over all of them.
struct Budget<'l> {
    limits: &'l Limits,
    conditions: usize,
    values: usize,
    patterns: usize,
}

impl<'l> Budget<'l> {
    fn new(limits: &'l Limits) -> Self {
        Budget {
            limits,
            conditions: 0,
            values: 0,
            patterns: 0,
        }
    }

    /// One more condition, named `param`.
    fn condition(&mut self, param: &str) -> Result<(), Error> {
        self.conditions += 1;
        if self.conditions > self.limits.max_conditions {
            return Err(Error::param(
                param,
                format!("at most {} filter conditions", self.limits.max_conditions),
            ));
        }
        Ok(())
    }

    /// The values of `filter`, named `param`.
    fn values(&mut self, param: &str, filter: &Filter) -> Result<(), Error> {
        self.values += filter.values.len();
        if self.values > self.limits.max_values {
            return Err(Error::param(
                param,
                format!("at most {} filter values in all", self.limits.max_values),
            ));
        }
        if matches!(filter.op, Op::Like | Op::ILike) {
            self.patterns(param, filter.values.len())?;
        }
        Ok(())
    }

    /// `n` more `like` or `ilike` patterns, named `param`.
    fn patterns(&mut self, param: &str, n: usize) -> Result<(), Error> {
        self.patterns += n;
        if self.patterns > self.limits.max_patterns {
            return Err(Error::param(
                param,
                format!(
                    "at most {} like or ilike patterns in one request",
                    self.limits.max_patterns
                ),
            ));
        }
        Ok(())
    }
}

/// The filters and groups (`or`, `not`, the search) of a list request's pairs.
fn parse_conditions(
    pairs: &[(String, String)],
    rules: &ListPlan,
    joins: &dyn JoinRules,
) -> Result<(Vec<Filter>, Vec<Group>), Error> {
    let mut budget = Budget::new(&rules.limits);
    let filters = parse_filters(pairs, rules, joins, &mut budget)?;
    let mut groups = Vec::new();
    for (key, value) in pairs {
        let not = match key.as_str() {
            OR => false,
            NOT => true,
            _ => continue,
        };
        let syntax =
            groups::terms(value, rules.limits.max_group_depth).map_err(|m| Error::param(key, m))?;
        let terms =
            parse_group(syntax, rules, joins, &mut budget).map_err(|e| within_group(key, e))?;
        budget.condition(key)?;
        groups.push(if not {
            Group::Not(terms)
        } else {
            Group::Any(terms)
        });
    }
    if let Some(q) = pairs.iter().find(|(k, _)| k == SEARCH).map(|(_, v)| v) {
        groups.extend(parse_search(q, rules)?);
    }
    Ok((filters, groups))
}

/// An error of a term inside group `param`: named by the group's parameter, the term's key
/// in the message.
fn within_group(param: &str, error: Error) -> Error {
    match error {
        Error::BadParam {
            param: key,
            message,
        } if key != param => Error::param(param, format!("{key}: {message}")),
        other => other,
    }
}

fn parse_group(
    syntax: Vec<Syntax<'_>>,
    rules: &ListPlan,
    joins: &dyn JoinRules,
    budget: &mut Budget<'_>,
) -> Result<Vec<Term>, Error> {
    let mut terms = Vec::with_capacity(syntax.len());
    for term in syntax {
        terms.push(match term {
            Syntax::Term(key, value) => {
                if !is_filter(&key) {
                    return Err(Error::param(key, "not a filter"));
                }
                budget.condition(&key)?;
                let filter = parse_filter(&key, &[value], '|', true, rules, joins)?;
                budget.values(&key, &filter)?;
                Term::Filter(filter)
            }
            Syntax::Group { not, terms } => {
                let name = if not { NOT } else { OR };
                budget.condition(name)?;
                let terms = parse_group(terms, rules, joins, budget)?;
                Term::Group(if not {
                    Group::Not(terms)
                } else {
                    Group::Any(terms)
                })
            }
        });
    }
    Ok(terms)
}

/// The search `q`: per word, a group that holds when one of the search fields contains it
/// (case-insensitively, `%` and `_` literal). No words, no condition.
fn parse_search(q: &str, rules: &ListPlan) -> Result<Vec<Group>, Error> {
    if rules.search.is_empty() {
        return Err(Error::param(SEARCH, "this list has no search fields"));
    }
    rules
        .limits
        .check_value(q)
        .map_err(|m| Error::param(SEARCH, m))?;
    let words = rules.search_words();
    if q.split_whitespace().nth(words).is_some() {
        return Err(Error::param(SEARCH, format!("at most {words} words")));
    }
    let mut groups = Vec::new();
    for word in q.split_whitespace() {
        let terms = rules.search.iter().map(|path| {
            Term::Filter(Filter {
                path: path.clone(),
                op: Op::Contains,
                values: vec![Param::Text(word.to_owned())],
            })
        });
        groups.push(Group::Any(terms.collect()));
    }
    Ok(groups)
}

fn parse_filters(
    pairs: &[(String, String)],
    rules: &ListPlan,
    joins: &dyn JoinRules,
    budget: &mut Budget<'_>,
) -> Result<Vec<Filter>, Error> {
    // Same key repeated: one filter with several values, in first-seen order. Each key is kept
    // with the index of its first pair, and counted before any is parsed.
    let mut keys: Vec<(&str, usize)> = Vec::new();
    for (at, (k, _)) in pairs.iter().enumerate() {
        if !is_filter(k) || keys.iter().any(|(key, _)| key == k) {
            continue;
        }
        budget.condition(k)?;
        keys.push((k, at));
    }
    let mut filters = Vec::with_capacity(keys.len());
    let mut raw = Vec::new();
    for (key, first) in keys {
        raw.clear();
        raw.extend(
            pairs[first..]
                .iter()
                .filter(|(k, _)| k == key)
                .map(|(_, v)| v.as_str()),
        );
        let filter = parse_filter(key, &raw, ',', false, rules, joins)?;
        budget.values(key, &filter)?;
        filters.push(filter);
    }
    Ok(filters)
}

/// The filter of `key` with the values `raw`: an `in` list is split at `separator`, and each
/// value percent-decoded when `decode` (inside a group).
fn parse_filter(
    key: &str,
    raw: &[&str],
    separator: char,
    decode: bool,
    rules: &ListPlan,
    joins: &dyn JoinRules,
) -> Result<Filter, Error> {
    let bad = |message: &str| Error::param(key, message);
    if path_parts(key).any(str::is_empty) {
        return Err(bad("malformed filter"));
    }
    let mut parts = path_parts(key).peekable();
    let mut meta = rules.meta;
    let mut path = Vec::new();
    let mut op = Op::Eq;
    while let Some(part) = parts.next() {
        let (idx, field) = meta
            .field(part)
            .ok_or_else(|| bad(&format!("unknown field '{part}'")))?;
        path.push(idx);
        let Some(&next) = parts.peek() else { break };
        match (field.fk, Op::from_name(next)) {
            (_, Some(found)) => {
                parts.next();
                if parts.next().is_some() {
                    return Err(bad("the operator must come last"));
                }
                op = found;
            }
            (Some(target), None) => meta = target(),
            (None, None) => return Err(bad(&format!("unknown operator '{next}'"))),
        }
    }
    if path.len() > rules.limits.max_joins + 1 {
        return Err(too_many_joins(key, &rules.limits));
    }
    if !allowed(rules, &path, joins) {
        return Err(bad("filtering on this field is not allowed"));
    }
    let leaf = &meta.fields[path[path.len() - 1]];
    let kind = leaf.kind;
    if matches!(op, Op::Like | Op::ILike) && kind != FieldKind::Text {
        return Err(bad("like and ilike apply to text fields only"));
    }
    let limits = &rules.limits;
    let mut values = Vec::new();
    for v in raw {
        // Only `in` takes a list; every other operator takes the value whole.
        let items = v.splitn(if op == Op::In { usize::MAX } else { 1 }, separator);
        for item in items {
            let item = if decode {
                groups::decode(item)
            } else {
                Cow::Borrowed(item)
            };
            limits.check_value(&item).map_err(|m| bad(&m))?;
            let value = match op {
                Op::Is => Param::parse_is(kind, &item),
                _ => Param::parse(kind, &item),
            }
            .map_err(|m| bad(&m))?;
            // A choice field holds only its choices: any other value is a mistake.
            let choices = leaf.constraints.choices;
            if let Param::Text(text) = &value {
                if !choices.is_empty() && !choices.contains(&text.as_str()) {
                    return Err(bad(&format!("must be one of: {}", choices.join(", "))));
                }
            }
            values.push(value);
        }
        if op == Op::In && values.len() > limits.max_in_values {
            return Err(bad(&format!(
                "an in list has at most {} values",
                limits.max_in_values
            )));
        }
    }
    Ok(Filter { path, op, values })
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
        let target = rules.meta.fields[*first].fk.map(|target| target());
        let nested = rules.nested.get(first).or_else(|| joins.plan_of(target?));
        if let Some(nested) = nested {
            // The target's list must show the field (its filter_fields does not reach through).
            return nested.exposed.get(rest[0]).copied().unwrap_or(false)
                && allowed(nested, rest, joins);
        }
    }
    true
}
