//! List query strings (docs/contract.md#filters, #ordering and #pagination) to a [`Select`].

use super::filters::parse_conditions;
use super::page::{offset, Counting, ListQuery};
use super::path::{walk, Refused};
use super::plan::{allowed, too_many_joins, JoinRules, ListPlan};
use super::{first, COUNT, LIMIT, ORDERING, PAGE};
use crate::error::Error;
use crate::query::{Count, Order, Select};

impl ListPlan {
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
    /// pairs, as a selection of every matching row (an export's, a write by filter's).
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

/// The value of the parameter `name` (`page`, `limit`) as an integer from 1, if given.
pub(crate) fn positive(name: &str, value: Option<&str>) -> Result<Option<i64>, Error> {
    match value {
        None => Ok(None),
        Some(v) => match v.parse::<i64>() {
            Ok(n) if n >= 1 => Ok(Some(n)),
            _ => Err(Error::param(name, "expected an integer >= 1")),
        },
    }
}

fn parse_list_query(
    pairs: &[(String, String)],
    rules: &ListPlan,
    joins: &dyn JoinRules,
) -> Result<ListQuery, Error> {
    let paginate_by = rules.paginate_by;
    let first = |name: &str| first(pairs, name);
    let limit = positive(LIMIT, first(LIMIT))?.map_or(paginate_by, |l| l.min(paginate_by));
    let page = positive(PAGE, first(PAGE))?.unwrap_or(1);

    let (filters, groups) = parse_conditions(pairs, rules, joins)?;
    let mut select = Select {
        filters,
        groups,
        order: match first(ORDERING) {
            Some(v) => parse_ordering(v, rules, joins)?,
            None => Vec::new(),
        },
        limit: None,
        // A page past the end is empty (docs/contract.md#pagination).
        offset: offset(page, limit),
        any_of: Vec::new(),
        columns: None,
        within: Vec::new(),
    };
    let ordered = select.order.len();
    let pk = rules.meta.pk;
    if !select.order.iter().any(|o| o.own_field() == Some(pk)) {
        select.order.push(Order::asc(pk));
    }
    let count = match first(COUNT) {
        None => rules.count,
        Some(name) => Some(
            Count::from_name(name)
                .ok_or_else(|| Error::param(COUNT, "expected exact, estimated or auto"))?,
        ),
    };
    Ok(ListQuery {
        select,
        page,
        limit,
        count: count.map(|count| Counting::of(count, rules.limits.count_exact_up_to)),
        ordered,
        keyset: false,
        from_cursor: false,
        database: None,
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
    let mut path = walk(rules.meta, name, rules.limits.max_joins, |_| false)
        .map_err(|refused_as| match refused_as {
            Refused::TooManyJoins => too_many_joins(ORDERING, &rules.limits),
            _ => refused(),
        })?
        .path;
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
