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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::RestModel;

    /// A model for the walks only (no table is declared to diesel).
    #[derive(Debug, crate::RestModel)]
    #[diesel(table_name = walk_note)]
    struct Note {
        id: i32,
        title: String,
    }

    /// Refers to a note.
    #[derive(Debug, crate::RestModel)]
    #[diesel(table_name = walk_remark)]
    struct Remark {
        id: i32,
        #[rest(fk = Note)]
        note_id: i32,
    }

    fn is_op(name: &str) -> bool {
        crate::query::Op::from_name(name).is_some()
    }

    #[test]
    fn a_walk_follows_foreign_keys_to_the_field_and_its_end() {
        let meta = Remark::meta();
        let (fk, _) = meta
            .field("note_id")
            .unwrap_or_else(|| panic!("no note_id"));
        let (title, _) = Note::meta()
            .field("title")
            .unwrap_or_else(|| panic!("no title"));
        let walked = walk(meta, "note_id__title__ilike", 8, is_op);
        let walked = walked.unwrap_or_else(|e| panic!("{e:?}"));
        assert_eq!(walked.path, [fk, title]);
        assert_eq!(walked.leaf().map(|f| f.name), Some("title"));
        assert_eq!(walked.end, Some("ilike"));
        let expected = format!("{}__title", meta.fields[fk].name);
        assert_eq!(names(meta, &walked.path), expected);
    }

    #[test]
    fn a_walk_says_why_a_path_names_no_field() {
        let meta = Remark::meta();
        let refused = |name, max_joins| walk(meta, name, max_joins, is_op).err();
        assert_eq!(refused("nope", 8), Some(Refused::Unknown("nope")));
        assert_eq!(refused("", 8), Some(Refused::Unknown("")));
        assert_eq!(refused("note_id__nope", 8), Some(Refused::Unknown("nope")));
        assert_eq!(refused("id__title", 8), Some(Refused::NotJoined("title")));
        assert_eq!(refused("id__lt__x", 8), Some(Refused::AfterEnd));
        assert_eq!(refused("note_id__title", 0), Some(Refused::TooManyJoins));
        assert_eq!(refused("note_id__title", 1), None);
    }
}
