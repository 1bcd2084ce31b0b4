//! The one walk along a path of field names (`user__username`, `user__username__ilike`) that
//! filters, orderings and aggregates name: field, then the foreign key into the next model,
//! within the bound on joins.

use super::path_parts;
use crate::model::{FieldMeta, ModelMeta};

/// The fields a path names, walked from the list's model.
#[derive(Debug)]
pub(crate) struct FieldPath<'n> {
    /// The field indexes, one per model along the joins.
    pub(crate) path: Vec<usize>,
    /// The fields, in the same order: the last is the one the path names.
    pub(crate) fields: Vec<&'static FieldMeta>,
    /// The name that ended the path after its last field (a filter's operator), if any.
    pub(crate) end: Option<&'n str>,
}

impl FieldPath<'_> {
    /// The field the path names.
    pub(crate) fn leaf(&self) -> Option<&'static FieldMeta> {
        self.fields.last().copied()
    }
}

/// Why a path names no field.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Refused<'n> {
    /// A name that is no field of the model reached (the first may be empty).
    Unknown(&'n str),
    /// A name after a field that is neither a foreign key nor an end.
    NotJoined(&'n str),
    /// A name after the end.
    AfterEnd,
    /// More foreign keys than the bound.
    TooManyJoins,
}

/// Walks the `__`-separated names of `name` from `meta`: each a field of the model reached so
/// far. After a field, a name that `ends` takes ends the path (it must be the last); any other
/// is a field of the model the field refers to (it must be a foreign key). At most `max_joins`
/// joins: the walk stops before it looks up a field beyond them.
pub(crate) fn walk<'n>(
    meta: &'static ModelMeta,
    name: &'n str,
    max_joins: usize,
    ends: impl Fn(&str) -> bool,
) -> Result<FieldPath<'n>, Refused<'n>> {
    let mut walked = FieldPath {
        path: Vec::new(),
        fields: Vec::new(),
        end: None,
    };
    let mut meta = meta;
    let mut parts = path_parts(name).peekable();
    while let Some(part) = parts.next() {
        if walked.path.len() > max_joins {
            return Err(Refused::TooManyJoins);
        }
        let (idx, field) = meta.field(part).ok_or(Refused::Unknown(part))?;
        walked.path.push(idx);
        walked.fields.push(field);
        let Some(&next) = parts.peek() else { break };
        if ends(next) {
            parts.next();
            if parts.next().is_some() {
                return Err(Refused::AfterEnd);
            }
            walked.end = Some(next);
            break;
        }
        meta = field.fk.ok_or(Refused::NotJoined(next))?();
    }
    Ok(walked)
}

/// The `__`-separated names of a path of field indexes walked from `meta` (`user__username`),
/// for the messages of set-up checks.
pub(crate) fn names(meta: &'static ModelMeta, path: &[usize]) -> String {
    let mut meta = meta;
    let mut names = Vec::with_capacity(path.len());
    for &idx in path {
        let field = &meta.fields[idx];
        names.push(field.name);
        if let Some(target) = field.fk {
            meta = target();
        }
    }
    names.join("__")
}
