//! Included resources (`Resource::include`): a nested resource as the resource that includes
//! it sees it, and serialized objects.

use std::collections::HashMap;
use std::ops::Range;
use std::sync::Arc;

use super::hooks::Context;
use super::joins::Joins;
use super::sparse::Sparse;
use crate::db::Conn;
use crate::error::Error;
use crate::listing::ListPlan;
use crate::model::ModelMeta;
use crate::openapi::Shape;

/// A resource given to `Resource::include`, prepared at set-up.
pub(crate) trait IntoNested: Send + Sync {
    /// The resource, checked and prepared.
    fn prepare(self: Box<Self>) -> Arc<dyn Nested>;
}

/// An included resource, seen from the resource that nests it.
pub(crate) trait Nested: Send + Sync {
    /// The model it serializes.
    fn meta(&self) -> &'static ModelMeta;
    /// Its list plan, whose filter rules apply to joins through the including field.
    fn list(&self) -> &ListPlan;
    /// Its objects, for the API description.
    fn shape(&self) -> Shape<'_>;
    /// The keys of its objects that `names` ask for (`?fields=` names after the dot).
    fn sparse(&self, names: &[&str]) -> Result<Sparse, String>;
    /// Its serialized objects with these primary keys (one query per nesting level), with
    /// only the keys of `sparse` if given: those its own `get_query` and the one of its
    /// model's resource registered in the API (`joins`) both show.
    fn serialize_ids(
        &self,
        cx: &Context<'_>,
        conn: &mut Conn<'_>,
        ids: &[i64],
        sparse: Option<&Sparse>,
        joins: &Joins,
    ) -> Result<NestedObjects, Error>;
}

/// Serialized objects: their JSON text separated by commas, after whatever the buffer held
/// before, and where each one is.
#[derive(Debug, Default)]
pub(crate) struct Serialized {
    pub(crate) buf: Vec<u8>,
    pub(crate) spans: Vec<Range<usize>>,
}

impl Serialized {
    /// The only object (detail, create, update).
    pub(crate) fn into_single(self) -> Option<Vec<u8>> {
        match self.spans.as_slice() {
            [span] if span.start == 0 && span.end == self.buf.len() => Some(self.buf),
            _ => None,
        }
    }
}

/// The serialized objects of an included resource, by primary key.
#[derive(Debug, Default)]
pub(crate) struct NestedObjects {
    pub(crate) objects: Serialized,
    pub(crate) index: HashMap<i64, usize>,
}

impl NestedObjects {
    pub(crate) fn get(&self, pk: i64) -> Option<&[u8]> {
        let span = self.objects.spans.get(*self.index.get(&pk)?)?;
        Some(&self.objects.buf[span.clone()])
    }
}
