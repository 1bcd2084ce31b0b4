//! The conditions of a list request (docs/contract.md#filters, #filter-logic and #search):
//! filters, `or` and `not` groups, and the search, within the request's bounds.

use std::borrow::Cow;

use super::groups::{self, Syntax, NOT, OR};
use super::path::{walk, Refused};
use super::plan::{allowed, too_many_joins, JoinRules, ListPlan};
use super::{is_filter, path_parts, SEARCH};
use crate::error::Error;
use crate::model::FieldKind;
use crate::query::{Filter, Group, Limits, Op, Param, Term};

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

    /// `n` more patterns, named `param`: the values of `like` and `ilike` filters, and each
    /// search word once per search field it is matched against, all in one budget.
    fn patterns(&mut self, param: &str, n: usize) -> Result<(), Error> {
        self.patterns += n;
        if self.patterns > self.limits.max_patterns {
            return Err(Error::param(
                param,
                format!(
                    "at most {} patterns in one request: each like or ilike value, and each \
                     search word once per search field",
                    self.limits.max_patterns
                ),
            ));
        }
        Ok(())
    }
}

/// The filters and groups (`or`, `not`, the search) of a list request's pairs.
pub(super) fn parse_conditions(
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
    if let Some(q) = super::first(pairs, SEARCH) {
        groups.extend(parse_search(q, rules, &mut budget)?);
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
/// (case-insensitively, `%` and `_` literal), each word a pattern per search field in the
/// request's budget. No words, no condition.
fn parse_search(q: &str, rules: &ListPlan, budget: &mut Budget<'_>) -> Result<Vec<Group>, Error> {
    if rules.search.is_empty() {
        return Err(Error::param(SEARCH, "this list has no search fields"));
    }
    check_search_text(&rules.limits, q)?;
    let words = rules.search_words();
    if q.split_whitespace().nth(words).is_some() {
        return Err(Error::param(SEARCH, format!("at most {words} words")));
    }
    let mut groups = Vec::new();
    for word in q.split_whitespace() {
        budget.patterns(SEARCH, rules.search.len())?;
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

/// Checks a search text (`q`, a lookup's) against the bounds on one value: 400 on `q`.
pub(crate) fn check_search_text(limits: &Limits, q: &str) -> Result<(), Error> {
    check_text_param(limits, SEARCH, q)
}

/// Checks the text of the parameter `param` (a search of some kind) against the bounds on one
/// value: 400 on `param`.
pub(crate) fn check_text_param(limits: &Limits, param: &str, text: &str) -> Result<(), Error> {
    limits
        .check_value(text)
        .and_then(|()| crate::value::check_text(text))
        .map_err(|m| Error::param(param, m))
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
    let walked = walk(rules.meta, key, rules.limits.max_joins, |n| {
        Op::from_name(n).is_some()
    })
    .map_err(|refused| match refused {
        Refused::Unknown(part) => bad(&format!("unknown field '{part}'")),
        Refused::NotJoined(next) => bad(&format!("unknown operator '{next}'")),
        Refused::AfterEnd => bad("the operator must come last"),
        Refused::TooManyJoins => too_many_joins(key, &rules.limits),
    })?;
    let op = walked.end.and_then(Op::from_name).unwrap_or(Op::Eq);
    let leaf = walked.leaf().ok_or_else(|| bad("malformed filter"))?;
    let path = walked.path;
    if !allowed(rules, &path, joins) {
        return Err(bad("filtering on this field is not allowed"));
    }
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
