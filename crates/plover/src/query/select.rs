//! Selections: what a load reads (conditions combined with AND, groups of them, an ordering
//! and a page window), built by `listing` and `views::Query` and written as SQL by `sql`. No
//! public API: `Select` alone is reachable from outside, through `__private`, because
//! `RestModel::load` takes one.

use std::sync::Arc;

use super::{Op, Param};

/// One condition: a path of field indexes (foreign keys, then the compared field), an operator
/// and its already-typed values. Several values combine with OR (with AND for `ne`).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Filter {
    /// Field indexes, one per model along the join path.
    pub(crate) path: Vec<usize>,
    /// The operator.
    pub(crate) op: Op,
    /// The values, parsed as the field's type.
    pub(crate) values: Vec<Param>,
}

/// One term of an ordering: a field of the model, or of a model that its foreign keys reach.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Order {
    /// The foreign keys followed to the field's model, one per model along the way (empty: a
    /// field of the model itself).
    pub(crate) through: Vec<usize>,
    /// The field, of the last model reached.
    pub(crate) field: usize,
    /// Whether the order is descending.
    pub(crate) desc: bool,
}

impl Order {
    /// Ascending on the model's own field `field`.
    pub(crate) fn asc(field: usize) -> Order {
        Order {
            through: Vec::new(),
            field,
            desc: false,
        }
    }

    /// Descending on the model's own field `field`.
    pub(crate) fn desc(field: usize) -> Order {
        Order {
            desc: true,
            ..Order::asc(field)
        }
    }

    /// The field of the model itself that this term orders by (`None` through a join).
    pub(crate) fn own_field(&self) -> Option<usize> {
        self.through.is_empty().then_some(self.field)
    }
}

/// The conditions a model's rows meet wherever a join of a selection reaches that model: the
/// scope (`get_query`) of the resource registered for it, so that a filter or ordering through
/// a foreign key cannot find the rows that resource hides.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Within {
    /// The table of the model the joins reach.
    pub(crate) table: &'static str,
    /// Conditions on the model's own fields, all of which must hold.
    pub(crate) filters: Vec<Filter>,
}

/// A group of conditions that a filter alone cannot say: `or=(...)`, `not=(...)`, or one word
/// of a search (which matches when any search field contains it).
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Group {
    /// At least one of the terms holds.
    Any(Vec<Term>),
    /// Not every one of the terms holds (the negation of their AND).
    Not(Vec<Term>),
}

/// One term of a [`Group`]: a condition, or a group within the group.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Term {
    /// A condition.
    Filter(Filter),
    /// A nested group.
    Group(Group),
}

impl Group {
    /// The group's terms.
    pub(crate) fn terms(&self) -> &[Term] {
        match self {
            Group::Any(terms) | Group::Not(terms) => terms,
        }
    }

    /// Calls `each` with every condition of the group, nested groups' included.
    pub(crate) fn each_filter<'a>(&'a self, each: &mut impl FnMut(&'a Filter)) {
        for term in self.terms() {
            match term {
                Term::Filter(filter) => each(filter),
                Term::Group(group) => group.each_filter(each),
            }
        }
    }
}

/// What to load: conditions (combined with AND), ordering, and an optional page window. Not a
/// public API (applications select rows with `views::Query`): public only because
/// `RestModel::load` takes one.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Select {
    /// Conditions, all of which must hold.
    pub(crate) filters: Vec<Filter>,
    /// The ordering terms, in priority order.
    pub(crate) order: Vec<Order>,
    /// Maximum number of rows.
    pub(crate) limit: Option<i64>,
    /// Rows to skip.
    pub(crate) offset: i64,
    /// Groups of conditions, each of which must hold as well.
    pub(crate) groups: Vec<Group>,
    /// A further condition as an OR of ANDs (keyset pagination); empty: none.
    pub(crate) any_of: Vec<Vec<Filter>>,
    /// Per field: whether to load it (`None`: every field). A field not loaded comes back at
    /// its type's default value (`0`, `""`, `None`...): a list leaves out the columns it does
    /// not show.
    pub(crate) columns: Option<Arc<[bool]>>,
    /// Conditions on the models that the filters' joins reach ([`Within`]).
    pub(crate) within: Vec<Within>,
}

impl Select {
    /// The same conditions, without ordering or page window (for counting).
    pub(crate) fn conditions_only(&self) -> Select {
        Select {
            filters: self.filters.clone(),
            groups: self.groups.clone(),
            any_of: self.any_of.clone(),
            within: self.within.clone(),
            ..Select::default()
        }
    }

    /// Whether the selection has conditions of its own (filters, groups or a keyset's).
    pub(crate) fn has_conditions(&self) -> bool {
        !(self.filters.is_empty() && self.groups.is_empty() && self.any_of.is_empty())
    }

    /// `(limit, offset)` when this selects every row in the order of the primary key (field
    /// `pk`), a window of them: the shape that generated code serves with a query of fixed
    /// shape, prepared once per connection.
    pub(crate) fn pk_window(&self, pk: usize) -> Option<(i64, i64)> {
        let all = !self.has_conditions() && self.columns.is_none();
        match (all, self.order.as_slice(), self.limit) {
            (true, [only], Some(limit)) if *only == Order::asc(pk) => Some((limit, self.offset)),
            _ => None,
        }
    }

    /// Appends the shape of this selection to `key`: everything its SQL text depends on (the
    /// fields, operators, number and kind of values, ordering and whether it has a window),
    /// but not the values, which are bound. Two selections of one shape on one query of one
    /// model have the same SQL text.
    pub(crate) fn shape(&self, key: &mut Vec<usize>) {
        fn conditions(filters: &[Filter], key: &mut Vec<usize>) {
            key.push(filters.len());
            for f in filters {
                key.push(f.path.len());
                key.extend_from_slice(&f.path);
                key.push(f.op as usize);
                key.push(f.values.len());
                key.extend(f.values.iter().map(Param::tag));
            }
        }
        fn group(g: &Group, key: &mut Vec<usize>) {
            key.push(match g {
                Group::Any(_) => 0,
                Group::Not(_) => 1,
            });
            key.push(g.terms().len());
            for term in g.terms() {
                match term {
                    Term::Filter(f) => conditions(std::slice::from_ref(f), key),
                    Term::Group(inner) => {
                        key.push(usize::MAX);
                        group(inner, key);
                    }
                }
            }
        }
        conditions(&self.filters, key);
        key.push(self.groups.len());
        for g in &self.groups {
            group(g, key);
        }
        key.push(self.any_of.len());
        for conj in &self.any_of {
            conditions(conj, key);
        }
        key.push(self.order.len());
        for term in &self.order {
            key.push(term.through.len());
            key.extend_from_slice(&term.through);
            key.extend([term.field, usize::from(term.desc)]);
        }
        key.push(self.within.len());
        for within in &self.within {
            // The name's address and length: the same for every use of one model's table name
            // (a copy of the name elsewhere would only make a second shape of the same text).
            key.extend([within.table.as_ptr() as usize, within.table.len()]);
            conditions(&within.filters, key);
        }
        key.push(usize::from(self.limit.is_some()));
        key.push(usize::from(self.columns.is_some()));
        if let Some(columns) = &self.columns {
            key.extend(columns.iter().map(|&loaded| usize::from(loaded)));
        }
    }

    /// Calls `each` with every condition of the selection: its filters, its groups' and the
    /// keyset's (not the scopes of `within`).
    pub(crate) fn each_filter<'a>(&'a self, mut each: impl FnMut(&'a Filter)) {
        self.filters.iter().for_each(&mut each);
        for group in &self.groups {
            group.each_filter(&mut each);
        }
        self.any_of.iter().flatten().for_each(each);
    }

    /// Rows whose field `field` equals one of `ids` (used for primary and foreign keys).
    pub(crate) fn ids_in(field: usize, ids: &[i64]) -> Select {
        Select {
            filters: vec![Filter {
                path: vec![field],
                op: Op::In,
                values: ids.iter().map(|&i| Param::Int(i)).collect(),
            }],
            ..Select::default()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_every_row_in_key_order_is_a_key_window() {
        let page = Select {
            order: vec![Order::asc(0)],
            limit: Some(21),
            offset: 40,
            ..Select::default()
        };
        assert_eq!(page.pk_window(0), Some((21, 40)));
        assert_eq!(page.pk_window(1), None, "another field is the key");
        let descending = Select {
            order: vec![Order::desc(0)],
            ..page.clone()
        };
        assert_eq!(descending.pk_window(0), None);
        let unbounded = Select {
            limit: None,
            ..page.clone()
        };
        assert_eq!(unbounded.pk_window(0), None);
        let filtered = Select {
            filters: Select::ids_in(0, &[1]).filters,
            ..page.clone()
        };
        assert_eq!(filtered.pk_window(0), None);
        let after_cursor = Select {
            any_of: vec![Select::ids_in(0, &[1]).filters],
            ..page.clone()
        };
        assert_eq!(after_cursor.pk_window(0), None);
        let two_keys = Select {
            order: vec![Order::asc(0), Order::asc(1)],
            ..page
        };
        assert_eq!(two_keys.pk_window(0), None);
    }

    #[test]
    fn a_shape_is_everything_but_the_values() {
        let key = |s: &Select| {
            let mut key = Vec::new();
            s.shape(&mut key);
            key
        };
        let filter = |op, values| Filter {
            path: vec![1],
            op,
            values,
        };
        let base = Select {
            filters: vec![filter(Op::Lt, vec![Param::Int(5)])],
            order: vec![Order::desc(0)],
            limit: Some(21),
            ..Select::default()
        };
        let other_values = Select {
            filters: vec![filter(Op::Lt, vec![Param::Int(7)])],
            offset: 40,
            limit: Some(11),
            ..base.clone()
        };
        assert_eq!(key(&base), key(&other_values));
        let differ = [
            Select {
                filters: vec![filter(Op::Lte, vec![Param::Int(5)])],
                ..base.clone()
            },
            Select {
                filters: vec![filter(Op::Lt, vec![Param::Int(5), Param::Int(6)])],
                ..base.clone()
            },
            Select {
                filters: vec![filter(Op::Lt, vec![Param::Null])],
                ..base.clone()
            },
            Select {
                filters: vec![Filter {
                    path: vec![2],
                    ..filter(Op::Lt, vec![Param::Int(5)])
                }],
                ..base.clone()
            },
            Select {
                order: vec![Order::asc(0)],
                ..base.clone()
            },
            Select {
                limit: None,
                ..base.clone()
            },
            Select {
                any_of: vec![base.filters.clone()],
                ..base.clone()
            },
            Select {
                filters: Vec::new(),
                any_of: vec![base.filters.clone()],
                ..base.clone()
            },
        ];
        for other in &differ {
            assert_ne!(key(&base), key(other), "{other:?}");
        }
    }
}
