//! Sparse fields (docs/contract.md#sparse-fields): `?fields=id,content,user.username` shows
//! only those keys of each object, dotted names reaching into included objects, and a list
//! selects only the columns they need.

use std::sync::Arc;

use crate::error::Error;
use crate::listing::FIELDS;

/// The keys a request asks to see, resolved against a resource.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Sparse {
    /// Per field of the model: whether the objects show it.
    pub(crate) shown: Vec<bool>,
    /// Included fields named with dotted names (`user.username`): what their objects show
    /// (an included field named alone shows its objects whole).
    pub(crate) nested: Vec<(usize, Sparse)>,
}

impl Sparse {
    /// The names of the request's `fields` parameter, if it has one.
    pub(crate) fn names(query: &[(String, String)]) -> Option<Vec<&str>> {
        let (_, value) = query.iter().find(|(k, _)| k == FIELDS)?;
        Some(value.split(',').collect())
    }

    /// The error of `name`, a name the objects do not show.
    pub(crate) fn refused(name: &str) -> Error {
        // The name is quoted only when it is short: it is arbitrary client text.
        let message = if name.is_empty() {
            "expected comma-separated field names".to_owned()
        } else if name.chars().count() <= 64 {
            format!("'{name}' is not a field of these objects")
        } else {
            "not a field of these objects".to_owned()
        };
        Error::param(FIELDS, message)
    }

    /// What an included field's objects show (`None`: everything).
    pub(crate) fn nested(&self, idx: usize) -> Option<&Sparse> {
        self.nested.iter().find(|(i, _)| *i == idx).map(|(_, s)| s)
    }

    /// The columns a list loads for these keys: the ones shown, the primary key `pk`, and
    /// `more` (the ordering's, which the next page's cursor reads).
    pub(crate) fn columns(&self, pk: usize, more: impl Iterator<Item = usize>) -> Arc<[bool]> {
        let mut columns = self.shown.clone();
        for idx in std::iter::once(pk).chain(more) {
            if let Some(column) = columns.get_mut(idx) {
                *column = true;
            }
        }
        columns.into()
    }
}
