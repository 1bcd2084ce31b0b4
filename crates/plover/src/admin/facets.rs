//! Facets of the admin index (docs/admin.md#facets): per `list_filter` field, the values that
//! filter the index in one click (booleans, choices, foreign keys, dates by year then month),
//! each with its number of rows under the other filters and the search when counts are shown
//! (one `GROUP BY` per facet), and the row count of the index itself. A foreign key's facet
//! with more related rows than it lists has a search box, which its lookup answers.

use std::collections::HashMap;

use chrono::{Datelike, NaiveDate};
use serde_json::Value;

use super::lookup::{Lookup, Lookups};
use super::names::in_sentence;
use crate::db::Conn;
use crate::error::Error;
use crate::listing::links::with_query;
use crate::listing::page::grouped;
use crate::listing::{allowed, check_text_param, first, Links, ListPlan, Page};
use crate::model::{FieldKind, FieldMeta, ModelMeta};
use crate::query::{Aggregate, Filter, Func, Op, Operand, Order, Param, Select};
use crate::sql::{facet_counts, FacetRow, FacetTerm};

/// The query parameter that asks for the facets' counts (`_facets=1`). It is no filter: the
/// index and the export ignore it, and every link of the index keeps it.
pub(crate) const FACETS: &str = "_facets";

/// The beginning of the parameter that searches the related rows of a foreign key's facet:
/// `_facet_q_user=bo` lists, in the facet `user`, the users whose lookup text contains `bo`.
/// It is no filter, and no link of the index keeps it.
pub(crate) const FACET_SEARCH: &str = "_facet_q_";

/// Whether the parameter `key` is a facet's search ([`FACET_SEARCH`]).
pub(crate) fn is_facet_search(key: &str) -> bool {
    key.starts_with(FACET_SEARCH)
}

/// The related rows a foreign key's facet lists: the most frequent ones with counts, the first
/// ones by key without.
const FOREIGN_KEY_VALUES: i64 = 10;

/// The most years a date facet lists (the earliest ones).
const MAX_YEARS: i64 = 100;

/// When the index counts the rows of each facet value (Django's `ModelAdmin.show_facets`):
/// those counts cost one `GROUP BY` per facet over the filtered rows, which a large table
/// feels.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ShowFacets {
    /// Only when the request asks with `_facets=1`: the index offers a "Show counts" link (and
    /// then "Hide counts"), and every link keeps the choice.
    #[default]
    Allow,
    /// Always, with no link to hide them.
    Always,
    /// Never (`_facets` is ignored).
    Never,
}

/// What one facet groups the rows by.
#[derive(Debug, Clone, Copy)]
enum Kind {
    /// `Yes`, `No` (and `Unknown` when nullable).
    Bool,
    /// Each of the field's choices.
    Choice(&'static [&'static str]),
    /// The related rows of a foreign key into this model, and the foreign key's lookup (its
    /// `foreign_key_lookup`), which the facet's search box runs.
    ForeignKey(&'static ModelMeta, Option<Lookup>),
    /// Years, then the months of a chosen year.
    Date,
}

/// A `list_filter` field, checked at set-up.
#[derive(Debug, Clone, Copy)]
struct Prepared {
    /// The field's index.
    field: usize,
    kind: Kind,
}

/// The facets of one model admin and when they count.
#[derive(Debug, Clone)]
pub(crate) struct Facets {
    fields: Vec<Prepared>,
    show: ShowFacets,
    /// The admin's scope ([`ModelAdmin::scope`](super::ModelAdmin)): counts are of its rows.
    pub(crate) scope: Vec<(String, String)>,
    /// The related rows a facet's search lists (`filter_paginate_by`, as the lookups).
    per_page: i64,
}

impl Facets {
    /// The facets of the fields `fields` (indexes) of `meta`, the admin `name`'s `list_filter`;
    /// a foreign key's searches with its lookup among `lookups`, if it has one. Panics, at
    /// set-up, on a field that is not a boolean, a field with choices, a foreign key or a date,
    /// on a field the index may not filter, and on a field named twice.
    pub(crate) fn new(
        meta: &'static ModelMeta,
        plan: &ListPlan,
        name: &str,
        fields: &[usize],
        show: ShowFacets,
        lookups: &Lookups,
    ) -> Facets {
        let mut prepared: Vec<Prepared> = Vec::with_capacity(fields.len());
        for &idx in fields {
            let field = &meta.fields[idx];
            let kind = if !field.constraints.choices.is_empty() {
                Kind::Choice(field.constraints.choices)
            } else if let Some(target) = field.fk {
                Kind::ForeignKey(target(), lookups.by_field.get(&idx).copied())
            } else {
                match field.kind {
                    FieldKind::Bool => Kind::Bool,
                    FieldKind::Date | FieldKind::DateTime => Kind::Date,
                    FieldKind::Text => panic!(
                        "plover admin: list_filter of `{name}`: `{}` is a free text without \
                         choices: facets take booleans, fields with choices, foreign keys and \
                         dates (search a text with search_fields)",
                        field.name
                    ),
                    _ => panic!(
                        "plover admin: list_filter of `{name}`: `{}` is a number without \
                         choices: facets take booleans, fields with choices, foreign keys and \
                         dates",
                        field.name
                    ),
                }
            };
            assert!(
                allowed(plan, &[idx], &()),
                "plover admin: list_filter of `{name}`: `{}` is not a field this index may \
                 filter (hidden by the forms, write-only, private, or refused by \
                 filter_fields/filter_exclude)",
                field.name
            );
            assert!(
                !prepared.iter().any(|p| p.field == idx),
                "plover admin: list_filter of `{name}` names `{}` twice",
                field.name
            );
            prepared.push(Prepared { field: idx, kind });
        }
        Facets {
            fields: prepared,
            show,
            scope: Vec::new(),
            per_page: lookups.per_page,
        }
    }

    /// Whether the index of this request shows counts (the request's `_facets`: `1` or `0`).
    pub(crate) fn counting(&self, pairs: &[(String, String)]) -> Result<bool, Error> {
        let asked = match first(pairs, FACETS) {
            None | Some("0") => false,
            Some("1") => true,
            Some(_) => return Err(Error::param(FACETS, "expected 1 (show counts) or 0")),
        };
        Ok(match self.show {
            ShowFacets::Allow => asked,
            ShowFacets::Always => true,
            ShowFacets::Never => false,
        })
    }

    /// The link that shows or hides the counts (with `ShowFacets::Allow` and facets only).
    pub(crate) fn toggle(&self, links: &Links<'_>, counting: bool) -> Option<String> {
        if self.fields.is_empty() || self.show != ShowFacets::Allow {
            return None;
        }
        // The page too is kept.
        let mut kept: Vec<(String, String)> = (links.pairs.iter())
            .filter(|(k, _)| k != FACETS)
            .cloned()
            .collect();
        if !counting {
            kept.push((FACETS.to_owned(), "1".to_owned()));
        }
        Some(with_query(links.path, &kept))
    }

    /// The facets of the index whose links are `links` (`_facets` kept in them), counted or
    /// not. `plan` parses each facet's conditions: the request's filters and search but the
    /// facet's own. `searches` are the request's facet searches ([`FACET_SEARCH`]), which
    /// `links` leave out.
    pub(crate) fn views(
        &self,
        conn: &mut Conn<'_>,
        meta: &'static ModelMeta,
        plan: &ListPlan,
        links: &Links<'_>,
        counting: bool,
        searches: &[(String, String)],
    ) -> Result<Vec<Facet>, Error> {
        let mut out = Vec::with_capacity(self.fields.len());
        for facet in &self.fields {
            let field = &meta.fields[facet.field];
            let cx = FacetCx {
                meta,
                plan,
                scope: &self.scope,
                field,
                links,
                counting,
                search: (searches.iter())
                    .find(|(k, _)| k.strip_prefix(FACET_SEARCH) == Some(field.name))
                    .map(|(_, v)| v.trim()),
                per_page: self.per_page,
            };
            out.push(match facet.kind {
                Kind::Bool => {
                    let mut values = vec![
                        (Value::Bool(true), "Yes".to_owned()),
                        (Value::Bool(false), "No".to_owned()),
                    ];
                    if field.nullable {
                        values.push((Value::Null, "Unknown".to_owned()));
                    }
                    cx.fixed(conn, facet.field, values)?
                }
                Kind::Choice(choices) => {
                    let mut values: Vec<(Value, String)> = choices
                        .iter()
                        .map(|&c| (Value::from(c), c.to_owned()))
                        .collect();
                    if field.nullable {
                        values.push((Value::Null, "None".to_owned()));
                    }
                    cx.fixed(conn, facet.field, values)?
                }
                Kind::ForeignKey(target, lookup) => {
                    cx.foreign_key(conn, facet.field, target, lookup.as_ref())?
                }
                Kind::Date => cx.date(conn, facet.field)?,
            });
        }
        Ok(out)
    }
}

/// One facet of the index: a field's values, each a link that filters the index by it.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Facet {
    /// The field's name for people, as it reads inside a sentence: the heading reads
    /// `By {title}` (`By date joined`).
    pub title: String,
    /// The index without this facet's filter ("All").
    pub all: String,
    /// Whether no value of this facet is chosen ("All" is then the current one).
    pub all_current: bool,
    /// The values, in order: the chosen one has `current`.
    pub values: Vec<FacetValue>,
    /// For a foreign key with more related rows than listed: the text ("and 12 more") and the
    /// link to the facet's search box when it has one ([`Facet::search`]), else to the index's
    /// filter form, where any key can be typed or looked up.
    pub more: Option<(String, String)>,
    /// For a foreign key with a lookup (`foreign_key_lookup`) and more related rows than
    /// listed, or a search under way: the facet's search box and what it found.
    pub search: Option<FacetSearch>,
}

/// The search box of a foreign key's facet: a GET form back to the index (its place kept)
/// that lists, under the box, the related rows whose lookup text contains what was typed,
/// each a link that filters the index by it as the facet's values do. The admin's script
/// makes the box a type-ahead on the foreign key's JSON lookup, whose chosen row opens the
/// same link.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct FacetSearch {
    /// The input's `id` (`facet-q-user`), which the facet's "and N more" links to.
    pub id: String,
    /// The input's name: `_facet_q_` and the field's (`_facet_q_user`).
    pub param: String,
    /// The foreign key's filter, which a chosen row's key is the value of (`user`).
    pub field: String,
    /// What was searched (empty before a search).
    pub text: String,
    /// The query pairs the form keeps (hidden inputs): the index's search, filters, ordering
    /// and `_facets`, not its page.
    pub keep: Vec<(String, String)>,
    /// The foreign key's JSON lookup (`{prefix}/{name}/lookup/{field}/`), for the type-ahead.
    pub lookup: String,
    /// The related rows that match [`FacetSearch::text`] (the lookup's first page), as values
    /// of the facet; counted when the facet is.
    pub matches: Vec<FacetValue>,
    /// Whether more related rows match than [`FacetSearch::matches`] lists.
    pub more_matches: bool,
}

/// A value of a facet.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct FacetValue {
    /// What people read: `Yes`, a choice, the related row's text, a year, a month.
    pub label: String,
    /// The index filtered by this value (the other filters, the search, the ordering and
    /// `_facets` kept; back to page 1).
    pub link: String,
    /// Whether the index is filtered by this value now.
    pub current: bool,
    /// The rows with this value under the other filters and the search, when counts are shown.
    pub count: Option<i64>,
    /// Whether this value is within the one before (a month under its year).
    pub nested: bool,
}

/// What the values of one facet are made from.
struct FacetCx<'a> {
    meta: &'static ModelMeta,
    plan: &'a ListPlan,
    /// Filters applied before the request's.
    scope: &'a [(String, String)],
    field: &'static FieldMeta,
    links: &'a Links<'a>,
    counting: bool,
    /// The request's search of this facet's related rows (trimmed), if any.
    search: Option<&'a str>,
    /// The related rows a search lists.
    per_page: i64,
}

/// The first `YYYY-MM-DD` of a date or date-time's text.
fn date_of(text: &str) -> Option<NaiveDate> {
    NaiveDate::parse_from_str(text.get(..10)?, "%Y-%m-%d").ok()
}

/// The first day of the month after `day`'s.
fn next_month(day: NaiveDate) -> Option<NaiveDate> {
    let (y, m) = if day.month() == 12 {
        (day.year().checked_add(1)?, 1)
    } else {
        (day.year(), day.month() + 1)
    };
    NaiveDate::from_ymd_opt(y, m, 1)
}

/// The years a date facet lists (`None`: NULL), each with its count when counted.
type Years = Vec<(Option<i32>, Option<i64>)>;

/// A chosen date range: a year, or a month of it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Chosen {
    Year(i32),
    Month(i32, u32),
}

impl<'a> FacetCx<'a> {
    /// The parameters of this field's own filters: `name`, `name__is`, and for dates
    /// `name__gte` and `name__lt`.
    fn own(&self, key: &str) -> bool {
        let name = self.field.name;
        key.strip_prefix(name).is_some_and(|rest| {
            matches!(rest, "" | "__is") || (self.is_date() && matches!(rest, "__gte" | "__lt"))
        })
    }

    fn is_date(&self) -> bool {
        matches!(self.field.kind, FieldKind::Date | FieldKind::DateTime)
    }

    /// The request's pairs without this facet's filters and the page.
    fn others(&self) -> Vec<(String, String)> {
        (self.links.kept())
            .filter(|(k, _)| !self.own(k))
            .cloned()
            .collect()
    }

    /// The index filtered by `filter` instead of this facet's filters.
    fn link(&self, filter: &[(String, &str)]) -> String {
        let mut pairs = self.others();
        pairs.extend(filter.iter().map(|(k, v)| (k.clone(), (*v).to_owned())));
        with_query(self.links.path, &pairs)
    }

    /// The value of the request's parameter `key`.
    fn param(&self, key: &str) -> Option<&'a str> {
        self.links.param(key)
    }

    /// The filter of a value: `name=value`, or `name__is=null`.
    fn filter_of(&self, value: &Value) -> (String, String) {
        let name = self.field.name;
        match value {
            Value::Null => (format!("{name}__is"), "null".to_owned()),
            Value::String(s) => (name.to_owned(), s.clone()),
            other => (name.to_owned(), other.to_string()),
        }
    }

    /// Whether the request filters by `value` (as [`FacetCx::filter_of`] writes it).
    fn is_current(&self, value: &Value) -> bool {
        let (key, text) = self.filter_of(value);
        self.param(&key) == Some(text.as_str())
    }

    /// The selection of the rows the request's other filters and its search match, and
    /// `extra` filters (`_facets` is not a filter).
    fn conditions(&self, extra: &[(String, String)]) -> Result<Select, Error> {
        let mut pairs: Vec<(String, String)> = (self.scope.iter().cloned())
            .chain(self.others())
            .filter(|(k, _)| k != super::facets::FACETS)
            .collect();
        pairs.extend_from_slice(extra);
        self.plan.conditions(&pairs, &())
    }

    /// The counts of the field's values, by value.
    fn counts(
        &self,
        conn: &mut Conn<'_>,
        term: FacetTerm,
        by_count: bool,
        limit: i64,
        extra: &[(String, String)],
    ) -> Result<(Vec<FacetRow>, i64), Error> {
        let select = self.conditions(extra)?;
        facet_counts(conn, self.meta, &select, term, by_count, limit)
    }

    /// The facet of `values` known in advance (booleans, choices), counted with one query.
    fn fixed(
        &self,
        conn: &mut Conn<'_>,
        field: usize,
        values: Vec<(Value, String)>,
    ) -> Result<Facet, Error> {
        let counts: Option<HashMap<String, i64>> = if self.counting {
            let limit = i64::try_from(values.len()).unwrap_or(i64::MAX);
            let (rows, _) = self.counts(conn, FacetTerm::Value(field), false, limit, &[])?;
            Some(
                rows.into_iter()
                    .map(|r| (r.value.to_string(), r.count))
                    .collect(),
            )
        } else {
            None
        };
        let values = values
            .into_iter()
            .map(|(value, label)| {
                let (key, text) = self.filter_of(&value);
                FacetValue {
                    current: self.is_current(&value),
                    link: self.link(&[(key, &text)]),
                    count: counts
                        .as_ref()
                        .map(|c| c.get(&value.to_string()).copied().unwrap_or(0)),
                    label,
                    nested: false,
                }
            })
            .collect();
        Ok(self.facet(values, None))
    }

    /// The facet of `values`, with its "All" link.
    fn facet(&self, values: Vec<FacetValue>, more: Option<(String, String)>) -> Facet {
        Facet {
            title: in_sentence(self.field.verbose_name),
            all: self.link(&[]),
            all_current: !values.iter().any(|v| v.current),
            values,
            more,
            search: None,
        }
    }

    /// A foreign key's value: the related row `id` (`None`: NULL) read as `label`.
    fn related(&self, id: Option<i64>, label: String, count: Option<i64>) -> FacetValue {
        let value = id.map_or(Value::Null, Value::from);
        let (key, text) = self.filter_of(&value);
        FacetValue {
            label,
            current: self.is_current(&value),
            link: self.link(&[(key, &text)]),
            count,
            nested: false,
        }
    }

    /// A foreign key's facet: with counts, the most frequent related rows (one `GROUP BY`);
    /// without, the first related rows by key (one bounded query of the related table). Then
    /// one query of their texts.
    fn foreign_key(
        &self,
        conn: &mut Conn<'_>,
        field: usize,
        target: &'static ModelMeta,
        lookup: Option<&Lookup>,
    ) -> Result<Facet, Error> {
        let chosen = self
            .param(self.field.name)
            .and_then(|v| v.parse::<i64>().ok());
        // (key or NULL, count), in order; then the texts of the keys.
        let mut listed: Vec<(Option<i64>, Option<i64>)>;
        let more;
        let mut texts: HashMap<i64, String>;
        if self.counting {
            let (rows, groups) =
                self.counts(conn, FacetTerm::Value(field), true, FOREIGN_KEY_VALUES, &[])?;
            let shown = i64::try_from(rows.len()).unwrap_or(0);
            more = (groups > shown).then(|| format!("and {} more", grouped(groups - shown)));
            listed = rows
                .into_iter()
                .map(|r| (r.value.as_i64(), Some(r.count)))
                .collect();
            let mut ids: Vec<i64> = listed.iter().filter_map(|(id, _)| *id).collect();
            ids.extend(chosen.filter(|c| !ids.contains(c)));
            texts = if ids.is_empty() {
                HashMap::new()
            } else {
                (target.ops.load_display)(conn, &Select::ids_in(target.pk, &ids))?
                    .into_iter()
                    .collect()
            };
        } else {
            let mut first = Select {
                order: vec![Order::asc(target.pk)],
                ..Select::default()
            };
            let load = |s: &Select| (target.ops.load_display)(conn, s);
            let Page { rows, has_next } = Page::read(&mut first, FOREIGN_KEY_VALUES, load)?;
            more = has_next.then(|| "and more".to_owned());
            listed = rows.iter().map(|(id, _)| (Some(*id), None)).collect();
            texts = rows.into_iter().collect();
            if let Some(id) = chosen.filter(|c| !texts.contains_key(c)) {
                texts.extend((target.ops.load_display)(
                    conn,
                    &Select::ids_in(target.pk, &[id]),
                )?);
            }
            if self.field.nullable {
                listed.push((None, None));
            }
        }
        // The chosen row is listed even when it is not among the first (its count unknown).
        if let Some(id) = chosen.filter(|c| !listed.iter().any(|(l, _)| *l == Some(*c))) {
            if texts.contains_key(&id) {
                listed.push((Some(id), None));
            }
        }
        let values = listed
            .into_iter()
            .map(|(id, count)| {
                let label = match id {
                    Some(id) => texts.get(&id).cloned().unwrap_or_else(|| format!("#{id}")),
                    None => "None".to_owned(),
                };
                self.related(id, label, count)
            })
            .collect();
        let search = match lookup {
            Some(lookup) if more.is_some() || self.search.is_some() => {
                Some(self.search(conn, field, lookup)?)
            }
            _ => None,
        };
        // "and N more" leads to the search box, else to the filter form, where any key can be
        // typed or looked up.
        let to = search
            .as_ref()
            .map_or_else(|| "#filter-key".to_owned(), |s| format!("#{}", s.id));
        let more = more.map(|text| (text, to));
        Ok(Facet {
            search,
            ..self.facet(values, more)
        })
    }

    /// The facet's search box, and the related rows whose lookup text contains the request's
    /// search (the lookup's first page; with counts, one `GROUP BY` of their rows).
    fn search(
        &self,
        conn: &mut Conn<'_>,
        field: usize,
        lookup: &Lookup,
    ) -> Result<FacetSearch, Error> {
        let name = self.field.name;
        let param = format!("{FACET_SEARCH}{name}");
        let text = self.search.unwrap_or_default();
        let mut matches = Vec::new();
        let mut more_matches = false;
        if !text.is_empty() {
            check_text_param(&self.plan.limits, &param, text)?;
            let found = lookup.search(conn, text, 1, self.per_page)?;
            more_matches = found.has_next;
            let rows: Vec<(i64, String)> = (found.rows.into_iter())
                .filter_map(|(id, label)| Some((id.as_i64()?, label)))
                .collect();
            let counts = match self.counting && !rows.is_empty() {
                true => Some(self.counts_of(conn, field, &rows)?),
                false => None,
            };
            matches = (rows.into_iter())
                .map(|(id, label)| {
                    let count = counts.as_ref().map(|c| c.get(&id).copied().unwrap_or(0));
                    self.related(Some(id), label, count)
                })
                .collect();
        }
        Ok(FacetSearch {
            id: format!("facet-q-{name}"),
            param,
            field: name.to_owned(),
            text: text.to_owned(),
            keep: self.links.kept().cloned().collect(),
            lookup: format!("{}lookup/{name}/", self.links.path),
            matches,
            more_matches,
        })
    }

    /// The rows with each of the related rows `rows` under the other filters and the search
    /// (one `GROUP BY`), by key.
    fn counts_of(
        &self,
        conn: &mut Conn<'_>,
        field: usize,
        rows: &[(i64, String)],
    ) -> Result<HashMap<i64, i64>, Error> {
        let mut select = self.conditions(&[])?;
        select.filters.push(Filter {
            path: vec![field],
            op: Op::In,
            values: rows.iter().map(|(id, _)| Param::Int(*id)).collect(),
        });
        let limit = i64::try_from(rows.len()).unwrap_or(i64::MAX);
        let (counted, _) = facet_counts(
            conn,
            self.meta,
            &select,
            FacetTerm::Value(field),
            false,
            limit,
        )?;
        Ok((counted.into_iter())
            .filter_map(|r| Some((r.value.as_i64()?, r.count)))
            .collect())
    }

    /// The year or month the request's `name__gte` and `name__lt` choose, if they are one.
    fn chosen_date(&self) -> Option<Chosen> {
        let name = self.field.name;
        let from = date_of(self.param(&format!("{name}__gte"))?)?;
        let until = date_of(self.param(&format!("{name}__lt"))?)?;
        if from.day() != 1 {
            return None;
        }
        if from.month() == 1 && NaiveDate::from_ymd_opt(from.year() + 1, 1, 1) == Some(until) {
            return Some(Chosen::Year(from.year()));
        }
        (next_month(from) == Some(until)).then(|| Chosen::Month(from.year(), from.month()))
    }

    /// The filters of a year, or of a month of it.
    fn range(&self, year: i32, month: Option<u32>) -> Vec<(String, String)> {
        let name = self.field.name;
        let from = NaiveDate::from_ymd_opt(year, month.unwrap_or(1), 1);
        let until = match month {
            Some(_) => from.and_then(next_month),
            None => NaiveDate::from_ymd_opt(year.saturating_add(1), 1, 1),
        };
        match (from, until) {
            (Some(from), Some(until)) => vec![
                (format!("{name}__gte"), from.to_string()),
                (format!("{name}__lt"), until.to_string()),
            ],
            _ => Vec::new(),
        }
    }

    /// A link that filters by a year or a month.
    fn range_link(&self, year: i32, month: Option<u32>) -> String {
        let range = self.range(year, month);
        let refs: Vec<(String, &str)> =
            range.iter().map(|(k, v)| (k.clone(), v.as_str())).collect();
        self.link(&refs)
    }

    /// A date's facet: the years (with a chosen year, that year and its months). With counts,
    /// one `GROUP BY` of the years or of the chosen year's months; without, the years between
    /// the table's least and greatest dates (one query of two aggregates, which an index on the
    /// column answers without reading the table) and the twelve months.
    fn date(&self, conn: &mut Conn<'_>, field: usize) -> Result<Facet, Error> {
        let chosen = self.chosen_date();
        if let Some(Chosen::Year(year) | Chosen::Month(year, _)) = chosen {
            let values = self.months(conn, field, year, chosen)?;
            return Ok(self.facet(values, None));
        }
        let years = if self.counting {
            self.counted_years(conn, field)?
        } else {
            self.year_span(conn, field)?
        };
        let values = (years.into_iter())
            .map(|(year, count)| match year {
                Some(year) => FacetValue {
                    label: year.to_string(),
                    link: self.range_link(year, None),
                    current: false,
                    count,
                    nested: false,
                },
                None => {
                    let (key, text) = self.filter_of(&Value::Null);
                    FacetValue {
                        label: "None".to_owned(),
                        current: self.is_current(&Value::Null),
                        link: self.link(&[(key, &text)]),
                        count,
                        nested: false,
                    }
                }
            })
            .collect();
        Ok(self.facet(values, None))
    }

    /// The values of a chosen year: the year, then its months (with counts, those that have
    /// rows, in one `GROUP BY`; without, all twelve).
    fn months(
        &self,
        conn: &mut Conn<'_>,
        field: usize,
        year: i32,
        chosen: Option<Chosen>,
    ) -> Result<Vec<FacetValue>, Error> {
        let mut values = vec![FacetValue {
            label: year.to_string(),
            link: self.range_link(year, None),
            current: chosen == Some(Chosen::Year(year)),
            count: None,
            nested: false,
        }];
        let months: Vec<(u32, Option<i64>)> = if self.counting {
            let within = self.range(year, None);
            let (rows, _) = self.counts(conn, FacetTerm::Month(field), false, 12, &within)?;
            if let Some(first) = values.first_mut() {
                first.count = Some(rows.iter().map(|r| r.count).sum());
            }
            rows.into_iter()
                .filter_map(|r| Some((u32::try_from(r.value.as_i64()?).ok()?, Some(r.count))))
                .collect()
        } else {
            (1..=12).map(|m| (m, None)).collect()
        };
        for (month, count) in months {
            let Some(day) = NaiveDate::from_ymd_opt(year, month, 1) else {
                continue;
            };
            values.push(FacetValue {
                label: day.format("%B %Y").to_string(),
                link: self.range_link(year, Some(month)),
                current: chosen == Some(Chosen::Month(year, month)),
                count,
                nested: true,
            });
        }
        Ok(values)
    }

    /// The years with rows and their counts (one `GROUP BY`): NULL last, the years ascending,
    /// at most the first [`MAX_YEARS`].
    fn counted_years(&self, conn: &mut Conn<'_>, field: usize) -> Result<Years, Error> {
        let (rows, _) = self.counts(conn, FacetTerm::Year(field), false, MAX_YEARS + 1, &[])?;
        let null = rows.iter().find(|r| r.value.is_null()).map(|r| r.count);
        let mut years: Years = rows
            .iter()
            .filter_map(|r| Some((Some(i32::try_from(r.value.as_i64()?).ok()?), Some(r.count))))
            .collect();
        years.truncate(MAX_YEARS as usize);
        years.extend(null.map(|n| (None, Some(n))));
        Ok(years)
    }

    /// The years between the table's least and greatest dates (one query of two aggregates,
    /// which an index on the column answers without reading the table), at most
    /// [`MAX_YEARS`], uncounted; then NULL where the field may be.
    fn year_span(&self, conn: &mut Conn<'_>, field: usize) -> Result<Years, Error> {
        let of_field = Operand {
            through: Vec::new(),
            field,
        };
        let span = Aggregate {
            values: vec![(Func::Min, of_field.clone()), (Func::Max, of_field)],
            limit: 1,
            ..Aggregate::default()
        };
        let rows = crate::sql::aggregate(conn, self.meta, &Select::default(), &span)?;
        let year = |v: Option<&Value>| {
            v.and_then(Value::as_str)
                .and_then(date_of)
                .map(|d| d.year())
        };
        let row = rows.first();
        let mut years = Vec::new();
        if let (Some(least), Some(greatest)) = (
            year(row.and_then(|r| r.first())),
            year(row.and_then(|r| r.get(1))),
        ) {
            let until = greatest.min(least.saturating_add(MAX_YEARS as i32 - 1));
            years.extend((least..=until).map(|y| (Some(y), None)));
        }
        if self.field.nullable {
            years.push((None, None));
        }
        Ok(years)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn months_roll_over_the_year() {
        let d = |y, m, day| NaiveDate::from_ymd_opt(y, m, day).unwrap();
        assert_eq!(next_month(d(2024, 12, 1)), Some(d(2025, 1, 1)));
        assert_eq!(next_month(d(2024, 2, 1)), Some(d(2024, 3, 1)));
        assert_eq!(date_of("2024-03-05 10:00:00"), Some(d(2024, 3, 5)));
        assert_eq!(date_of("2024"), None);
    }
}
