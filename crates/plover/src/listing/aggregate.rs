//! An aggregate request's query string (docs/contract.md#aggregates): `group`, `count`, `sum`,
//! `avg`, `min` and `max` on fields the list lets clients filter, and the list's filters.

use super::path::{walk, Refused};
use super::{allowed, JoinRules, ListPlan, COUNT, CURSOR, FIELDS, LIMIT, ORDERING, PAGE};
use crate::error::Error;
use crate::model::{FieldKind, FieldMeta};
use crate::query::{Aggregate, Func, Operand, Select};

/// The parameter that names the fields of a group.
pub(crate) const GROUP: &str = "group";
/// The most fields a group has.
pub(crate) const MAX_GROUP_FIELDS: usize = 3;
/// The most groups an answer has: a request that makes more is a 400.
pub(crate) const MAX_GROUPS: i64 = 1000;
/// The most functions of fields (`sum`, `avg`, `min`, `max` together) one request asks for.
pub(crate) const MAX_VALUES: usize = 20;

/// A parsed aggregate request.
#[derive(Debug, Clone)]
pub(crate) struct AggregateQuery {
    /// The list's conditions (no ordering, no window).
    pub(crate) select: Select,
    /// What to compute; its limit is one more than [`MAX_GROUPS`].
    pub(crate) aggregate: Aggregate,
    /// The key of each column of a result row, in order: the group's fields, `count`, then
    /// the functions' (`sum_priority`).
    pub(crate) keys: Vec<String>,
}

/// Whether a parameter belongs to the aggregate rather than to the filters.
fn is_aggregate_param(key: &str) -> bool {
    key == GROUP || key == COUNT || Func::ALL.iter().any(|f| f.name() == key)
}

impl ListPlan {
    /// The aggregate of a request's decoded query pairs; joins obey the rules `joins` gives
    /// for the models they reach, as a filter's do.
    pub(crate) fn aggregate(
        &self,
        pairs: &[(String, String)],
        joins: &dyn JoinRules,
    ) -> Result<AggregateQuery, Error> {
        for name in [ORDERING, LIMIT, PAGE, CURSOR, FIELDS] {
            if pairs.iter().any(|(k, _)| k == name) {
                return Err(Error::param(
                    name,
                    "an aggregate takes no ordering, page or fields",
                ));
            }
        }
        let filters: Vec<(String, String)> = pairs
            .iter()
            .filter(|(k, _)| !is_aggregate_param(k))
            .cloned()
            .collect();
        let select = self.parse(&filters, joins)?.select.conditions_only();
        let mut parsed = Parsed::new(self, joins);
        parsed.group(pairs)?;
        parsed.count(pairs)?;
        for func in Func::ALL {
            parsed.values(pairs, func)?;
        }
        parsed.finish(select)
    }
}

/// The aggregate being parsed, and the keys and joins of its terms so far.
struct Parsed<'a> {
    rules: &'a ListPlan,
    joins: &'a dyn JoinRules,
    aggregate: Aggregate,
    keys: Vec<String>,
    /// The distinct foreign-key paths the terms join through (each prefix once).
    joined: Vec<Vec<usize>>,
}

impl<'a> Parsed<'a> {
    fn new(rules: &'a ListPlan, joins: &'a dyn JoinRules) -> Parsed<'a> {
        Parsed {
            rules,
            joins,
            aggregate: Aggregate {
                limit: MAX_GROUPS + 1,
                ..Aggregate::default()
            },
            keys: Vec::new(),
            joined: Vec::new(),
        }
    }

    /// `group`: up to three fields, none twice.
    fn group(&mut self, pairs: &[(String, String)]) -> Result<(), Error> {
        for name in names(pairs, GROUP)? {
            if self.aggregate.group.len() == MAX_GROUP_FIELDS {
                let message = format!("at most {MAX_GROUP_FIELDS} fields");
                return Err(Error::param(GROUP, message));
            }
            let (term, key, _) = self.term(GROUP, name)?;
            if self.aggregate.group.contains(&term) {
                return Err(Error::param(GROUP, "names a field twice"));
            }
            self.aggregate.group.push(term);
            self.key(GROUP, key)?;
        }
        Ok(())
    }

    /// `count`: a flag, without a value.
    fn count(&mut self, pairs: &[(String, String)]) -> Result<(), Error> {
        let mut values = pairs.iter().filter(|(k, _)| k == COUNT).map(|(_, v)| v);
        match values.next() {
            None => Ok(()),
            Some(v) if v.is_empty() => {
                self.aggregate.count = true;
                self.key(COUNT, COUNT.to_owned())
            }
            Some(_) => Err(Error::param(COUNT, "takes no value: `count` alone")),
        }
    }

    /// `sum`, `avg`, `min` or `max`: fields the function applies to, none twice.
    fn values(&mut self, pairs: &[(String, String)], func: Func) -> Result<(), Error> {
        let param = func.name();
        for name in names(pairs, param)? {
            if self.aggregate.values.len() == MAX_VALUES {
                let message = format!("at most {MAX_VALUES} of sum, avg, min and max in all");
                return Err(Error::param(param, message));
            }
            let (term, key, field) = self.term(param, name)?;
            check_kind(func, field)?;
            if self
                .aggregate
                .values
                .iter()
                .any(|(f, t)| *f == func && *t == term)
            {
                return Err(Error::param(param, "names a field twice"));
            }
            self.aggregate.values.push((func, term));
            self.key(param, format!("{param}_{key}"))?;
        }
        Ok(())
    }

    /// The aggregate, once something was asked.
    fn finish(self, select: Select) -> Result<AggregateQuery, Error> {
        if !self.aggregate.count && self.aggregate.values.is_empty() {
            return Err(Error::param(
                COUNT,
                "ask for at least one of count, sum, avg, min and max",
            ));
        }
        Ok(AggregateQuery {
            select,
            aggregate: self.aggregate,
            keys: self.keys,
        })
    }

    /// Adds a result key; two columns under one key are a 400 on `param`.
    fn key(&mut self, param: &str, key: String) -> Result<(), Error> {
        if self.keys.contains(&key) {
            return Err(Error::param(param, format!("the key {key} is taken twice")));
        }
        self.keys.push(key);
        Ok(())
    }

    /// The term a field name of `param` names (`priority`, `user__username`), with its result
    /// key and its field: a path that a filter may take, joining through at most `max_joins`
    /// foreign keys in all the terms together.
    fn term(
        &mut self,
        param: &str,
        name: &str,
    ) -> Result<(Operand, String, &'static FieldMeta), Error> {
        let refused = || Error::param(param, "not a field of this resource");
        let max_joins = self.rules.limits.max_joins;
        let walked = walk(self.rules.meta, name, max_joins, |_| false).map_err(|e| match e {
            Refused::TooManyJoins => too_many_joins(param, max_joins),
            _ => refused(),
        })?;
        // The key: the names of the fields joined through, then the field's key; a foreign key
        // this resource includes shows under its name (`user`).
        let (&leaf, through) = walked.fields.split_last().ok_or_else(refused)?;
        let mut key: Vec<&str> = through.iter().map(|f| f.name).collect();
        let mut path = walked.path;
        key.push(match path.as_slice() {
            [idx] if self.rules.nested.contains_key(idx) => leaf.name,
            _ => leaf.json_key(),
        });
        if !allowed(self.rules, &path, self.joins) {
            return Err(Error::param(
                param,
                "aggregates take only the fields clients may filter on",
            ));
        }
        let field = path.pop().ok_or_else(refused)?;
        for depth in 1..=path.len() {
            if !self.joined.iter().any(|p| p[..] == path[..depth]) {
                self.joined.push(path[..depth].to_vec());
            }
        }
        if self.joined.len() > max_joins {
            return Err(too_many_joins(param, max_joins));
        }
        let term = Operand {
            through: path,
            field,
        };
        Ok((term, key.join("__"), leaf))
    }
}

/// The field names a parameter gives: comma-separated, or the parameter repeated.
fn names<'p>(pairs: &'p [(String, String)], param: &str) -> Result<Vec<&'p str>, Error> {
    let mut out = Vec::new();
    for (_, value) in pairs.iter().filter(|(k, _)| k == param) {
        for name in value.split(',') {
            if name.is_empty() {
                return Err(Error::param(param, "expected field names, comma-separated"));
            }
            out.push(name);
        }
    }
    Ok(out)
}

/// Sums and averages of numbers only; least and greatest values of any field but a boolean.
fn check_kind(func: Func, field: &FieldMeta) -> Result<(), Error> {
    let numeric = field.kind.is_integer() || field.kind == FieldKind::Float;
    match func {
        Func::Sum | Func::Avg if !numeric => Err(Error::param(
            func.name(),
            "sum and avg apply to number fields only",
        )),
        Func::Min | Func::Max if field.kind == FieldKind::Bool => Err(Error::param(
            func.name(),
            "min and max do not apply to boolean fields",
        )),
        _ => Ok(()),
    }
}

/// The error of terms that join through more foreign keys than `max_joins`.
fn too_many_joins(param: &str, max_joins: usize) -> Error {
    Error::param(param, format!("at most {max_joins} joins in one aggregate"))
}
