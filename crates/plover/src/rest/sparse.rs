//! Sparse fields (docs/contract.md#sparse-fields): `?fields=id,content,user.username` shows
//! only those keys of each object, dotted names reaching into included objects, and a list
//! selects only the columns they need.

use std::sync::Arc;

use super::prepared::Prepared;
use crate::error::Error;
use crate::listing::FIELDS;
use crate::model::RestModel;

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
    /// The request's sparse fields, if it names any (`None`: every key).
    pub(crate) fn of_request<M: RestModel>(
        resource: &Prepared<M>,
        query: &[(String, String)],
    ) -> Result<Option<Sparse>, Error> {
        let Some((_, value)) = query.iter().find(|(k, _)| k == FIELDS) else {
            return Ok(None);
        };
        let names: Vec<&str> = value.split(',').collect();
        resource.sparse(&names).map(Some).map_err(|name| {
            // The name is quoted only when it is short: it is arbitrary client text.
            let message = if name.is_empty() {
                "expected comma-separated field names".to_owned()
            } else if name.chars().count() <= 64 {
                format!("'{name}' is not a field of these objects")
            } else {
                "not a field of these objects".to_owned()
            };
            Error::param(FIELDS, message)
        })
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

impl<M: RestModel> Prepared<M> {
    /// The sparse fields of `names` (keys as the objects show them; `include.key` reaches into
    /// an included object); the error is the name that is not a key shown here.
    pub(crate) fn sparse(&self, names: &[&str]) -> Result<Sparse, String> {
        let meta = M::meta();
        let mut sparse = Sparse {
            shown: vec![false; meta.fields.len()],
            nested: Vec::new(),
        };
        // Dotted names grouped by included field; `whole`: also named alone.
        let mut dotted: Vec<(usize, Vec<&str>, bool)> = Vec::new();
        for &name in names {
            let (head, rest) = match name.split_once('.') {
                Some((head, rest)) => (head, Some(rest)),
                None => (name, None),
            };
            let idx = self
                .key_index(head)
                .filter(|&idx| rest.is_none() || self.includes[idx].is_some())
                .ok_or_else(|| name.to_owned())?;
            sparse.shown[idx] = true;
            if self.includes[idx].is_none() {
                continue;
            }
            let at = match dotted.iter().position(|(i, _, _)| *i == idx) {
                Some(at) => at,
                None => {
                    dotted.push((idx, Vec::new(), false));
                    dotted.len() - 1
                }
            };
            match rest {
                Some(rest) => dotted[at].1.push(rest),
                None => dotted[at].2 = true,
            }
        }
        for (idx, names, whole) in dotted {
            if whole {
                continue;
            }
            let include = self.includes[idx].as_ref().ok_or_else(String::new)?;
            let head = meta.fields[idx].name;
            let inner = include
                .sparse(&names)
                .map_err(|name| format!("{head}.{name}"))?;
            sparse.nested.push((idx, inner));
        }
        Ok(sparse)
    }
}
