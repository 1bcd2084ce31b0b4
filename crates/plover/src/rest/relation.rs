//! A writable nested relation ([`Resource::nested_children`](super::Resource::nested_children))
//! as the parent's resource sees it, its child resource's model type erased: the children of
//! one create body, parsed then written (docs/contract.md#nested-create). The child resources
//! themselves are in `children`.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde_json::Value;

use super::hooks::Context;
use super::joins::Joins;
use super::nested::Serialized;
use crate::db::{Conn, LazyConn};
use crate::error::Error;
use crate::model::ModelMeta;
use crate::openapi::ChildDoc;

/// A relation given to `Resource::nested_children`: the child resource `R` and its foreign
/// key.
pub(crate) struct ChildSpec<R> {
    pub(crate) fk: usize,
    pub(crate) resource: R,
}

/// A [`ChildSpec`] with its model type erased, prepared at set-up.
pub(crate) trait IntoChildResource: Send + Sync {
    /// The child resource of the relation `key` of `parent`, checked and prepared; its writes
    /// are recorded in the history when `history` says so too (the parent keeps one).
    fn prepare(
        self: Box<Self>,
        parent: &'static ModelMeta,
        key: &str,
        history: bool,
    ) -> Arc<dyn ChildResource>;
}

/// The child resource of a relation, seen from the parent's resource.
pub(crate) trait ChildResource: Send + Sync {
    /// Parses the children sent under the body path `path` (`children`, or of a bulk
    /// create's object), each through the child resource's create rules and `save_object`
    /// hook, and stamped with its owner. Every mistake goes to `errors` by its path
    /// (`children.1.title`); an error that is no child's (a refusal, a 5xx) is returned.
    fn parse<'s>(
        &'s self,
        cx: &Context<'_>,
        db: &mut LazyConn<'_>,
        value: Value,
        path: &str,
        errors: &mut BTreeMap<String, String>,
    ) -> Result<Box<dyn PendingChildren + 's>, Error>;
    /// What the API description needs of it.
    fn doc(&self) -> ChildDoc<'_>;
    /// Gives the child resource the API's join rules, which the objects it includes in its
    /// answers obey (at registration).
    fn share_joins(&mut self, joins: &Arc<Joins>);
}

/// Parsed children, waiting for their parent's key.
pub(crate) trait PendingChildren {
    /// Writes them under the parent `parent`, each in a savepoint so that every child's errors
    /// are found (to `errors`, by path); answers their objects as a JSON array, or nothing
    /// when some failed.
    fn write(
        self: Box<Self>,
        cx: &Context<'_>,
        conn: &mut Conn<'_>,
        parent: i64,
        errors: &mut BTreeMap<String, String>,
    ) -> Result<Vec<u8>, Error>;
}

/// A writable nested relation of a prepared resource.
pub(crate) struct Relation {
    /// The body key.
    pub(crate) key: String,
    pub(crate) child: Arc<dyn ChildResource>,
}

/// The relations of one object's create body, parsed: each relation with its children.
pub(super) struct NewChildren<'a>(pub(super) Vec<(&'a Relation, Box<dyn PendingChildren + 'a>)>);

/// The created children of one object: `(key, JSON array)` per relation.
pub(super) struct CreatedChildren<'a>(Vec<(&'a str, Vec<u8>)>);

impl<'a> NewChildren<'a> {
    /// No children (a resource without relations).
    pub(super) fn none() -> Self {
        NewChildren(Vec::new())
    }

    /// Writes them under the parent `parent` in the caller's transaction: every child's
    /// errors by path in one 400, or their objects.
    pub(super) fn write(
        self,
        cx: &Context<'_>,
        conn: &mut Conn<'_>,
        parent: i64,
    ) -> Result<CreatedChildren<'a>, Error> {
        let mut errors = BTreeMap::new();
        let mut created = Vec::with_capacity(self.0.len());
        for (relation, pending) in self.0 {
            let objects = pending.write(cx, conn, parent, &mut errors)?;
            created.push((relation.key.as_str(), objects));
        }
        if errors.is_empty() {
            Ok(CreatedChildren(created))
        } else {
            Err(validation(errors))
        }
    }
}

impl CreatedChildren<'_> {
    /// The JSON object `object` with each relation's key holding its created children.
    pub(super) fn add_to(&self, mut object: Vec<u8>) -> Vec<u8> {
        if self.0.is_empty() || object.last() != Some(&b'}') {
            return object;
        }
        object.pop();
        for (key, objects) in &self.0 {
            if object.len() > 1 {
                object.push(b',');
            }
            // A key is text: serializing it cannot fail.
            object.extend_from_slice(&serde_json::to_vec(key).unwrap_or_default());
            object.push(b':');
            object.extend_from_slice(objects);
        }
        object.push(b'}');
        object
    }

    /// The serialized objects `objects` (after whatever their buffer held before), each with
    /// its created children, in one buffer.
    pub(super) fn add_to_each(objects: Serialized, created: Vec<CreatedChildren<'_>>) -> Vec<u8> {
        let start = objects.spans.first().map_or(objects.buf.len(), |s| s.start);
        let mut out = Vec::with_capacity(objects.buf.len() * 2);
        out.extend_from_slice(&objects.buf[..start]);
        for (n, (span, children)) in objects.spans.iter().zip(&created).enumerate() {
            if n > 0 {
                out.push(b',');
            }
            out.extend(children.add_to(objects.buf[span.clone()].to_vec()));
        }
        out
    }
}

/// A 400 with these messages by key.
pub(super) fn validation(fields: BTreeMap<String, String>) -> Error {
    Error::Validation {
        message: "Validation failed".into(),
        fields,
    }
}
