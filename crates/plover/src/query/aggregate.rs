//! Aggregates of the rows a selection's conditions match (`GET {prefix}/<name>/aggregate/`):
//! the number of rows and the sum, average, least and greatest value of fields, per group of
//! rows that share the values of up to three fields.

use super::Order;

/// A function of the values of one field over a group's rows (NULLs left out).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Func {
    /// `SUM`: an integer for an integer field, else a float.
    Sum,
    /// `AVG`: always a float.
    Avg,
    /// `MIN`: a value of the field's type.
    Min,
    /// `MAX`: a value of the field's type.
    Max,
}

impl Func {
    /// Every function, in the order a group's keys show them.
    pub(crate) const ALL: [Func; 4] = [Func::Sum, Func::Avg, Func::Min, Func::Max];

    /// The query parameter that asks for it, and the prefix of its keys (`sum_priority`).
    pub(crate) fn name(self) -> &'static str {
        match self {
            Func::Sum => "sum",
            Func::Avg => "avg",
            Func::Min => "min",
            Func::Max => "max",
        }
    }
}

/// A field of the model, or of a model that its foreign keys reach.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Operand {
    /// The foreign keys followed to the field's model (empty: a field of the model itself).
    pub(crate) through: Vec<usize>,
    /// The field, of the last model reached.
    pub(crate) field: usize,
}

impl Operand {
    /// The ascending ordering term on the same field (what joins to it look like).
    pub(crate) fn order(&self) -> Order {
        Order {
            through: self.through.clone(),
            field: self.field,
            desc: false,
        }
    }
}

/// What an aggregate computes over the rows of a selection: one row per group.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Aggregate {
    /// The fields whose values make a group, in order (empty: every row is one group).
    pub(crate) group: Vec<Operand>,
    /// Whether to count each group's rows (`COUNT(*)`).
    pub(crate) count: bool,
    /// The functions of fields to compute for each group, in the order of the result.
    pub(crate) values: Vec<(Func, Operand)>,
    /// The most groups to read (one more than a request may have, to know it has too many).
    pub(crate) limit: i64,
}

impl Aggregate {
    /// Every field the aggregate reads: the group's, then the functions'.
    pub(crate) fn terms(&self) -> impl Iterator<Item = &Operand> {
        self.group
            .iter()
            .chain(self.values.iter().map(|(_, term)| term))
    }

    /// Appends to `key` everything of the SQL text that depends on the aggregate (the limit
    /// is bound).
    pub(crate) fn shape(&self, key: &mut Vec<usize>) {
        let term = |term: &Operand, key: &mut Vec<usize>| {
            key.push(term.through.len());
            key.extend_from_slice(&term.through);
            key.push(term.field);
        };
        key.push(self.group.len());
        for t in &self.group {
            term(t, key);
        }
        key.push(usize::from(self.count));
        key.push(self.values.len());
        for (func, t) in &self.values {
            key.push(*func as usize);
            term(t, key);
        }
    }
}
