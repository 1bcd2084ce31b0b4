//! A resource with its options checked and turned into lookup tables once, at set-up, and
//! the serialization of its objects (docs/contract.md#objects).

use std::collections::HashMap;
use std::sync::Arc;

use actix_web::http::Method;
use serde_json::{Map, Value};

use super::data::Data;
use super::hooks::{Context, Hooks};
use super::joins::Joins;
use super::nested::{IntoNested, Nested, NestedObjects, Serialized};
use super::rate::RateLimit;
use super::resource::Resource;
use crate::auth::Authenticator;
use crate::db::Conn;
use crate::error::Error;
use crate::listing::ListPlan;
use crate::model::{FieldMeta, ModelMeta, RestModel};
use crate::openapi::Shape;
use crate::query::{Filter, Select};

/// A resource ready to serve.
pub(crate) struct Prepared<M: RestModel> {
    pub(crate) name: String,
    pub(crate) exposed: Vec<bool>,
    /// Per field: whether a client may write it here (not read-only, within `writable`).
    pub(crate) writable: Vec<bool>,
    /// The exposed fields in output order, with their JSON key text (`"user_id":`).
    keys: Vec<(usize, Vec<u8>)>,
    pub(crate) includes: Vec<Option<Arc<dyn Nested>>>,
    pub(crate) list: ListPlan,
    pub(crate) owner: Option<usize>,
    pub(crate) auth: Option<Arc<dyn Authenticator>>,
    pub(crate) rate: Option<RateLimit>,
    pub(crate) allowed_methods: Vec<Method>,
    pub(crate) hooks: Arc<dyn Hooks<M>>,
    /// Whether `hooks` are the user's: their `save_object` may take long (hash a password).
    pub(crate) custom_hooks: bool,
    pub(crate) keyset: bool,
    /// Whether `aggregate/` is served ([`Resource::aggregates`]).
    pub(crate) aggregates: bool,
    pub(crate) delete_recursive: bool,
    /// The fields a list loads (`Select::columns`): the shown ones and the key, unless the
    /// hooks read hidden fields or every field is shown (`None`: all).
    pub(crate) columns: Option<Arc<[bool]>>,
    /// The rules of the API's resources that joins obey (filled when the API is set up).
    pub(crate) joins: Arc<Joins>,
}

/// Per field: `base(field)`, and listed in `only` when that option is given.
fn only(meta: &ModelMeta, only: Option<&[usize]>, base: impl Fn(&FieldMeta) -> bool) -> Vec<bool> {
    (0..meta.fields.len())
        .map(|i| base(&meta.fields[i]) && only.is_none_or(|l| l.contains(&i)))
        .collect()
}

impl<M: RestModel> Prepared<M> {
    /// Checks the options of `resource`; a misconfiguration panics with a clear message,
    /// before the server serves anything.
    pub(crate) fn new(resource: Resource<M>) -> Self {
        let meta = M::meta();
        let n = meta.fields.len();
        let exposed = meta.shown(
            resource.list.fields.as_deref(),
            &resource.list.exclude,
            &resource.show,
        );
        let mut writable = only(meta, resource.writable.as_deref(), |f| !f.read_only);
        // A private field is written only where it is shown.
        for (idx, field) in meta.fields.iter().enumerate() {
            writable[idx] &= !field.private || exposed[idx];
        }
        let filter_paths = resource.list.filter_paths();

        let mut includes: Vec<Option<Arc<dyn Nested>>> = vec![None; n];
        let mut nested_rules = HashMap::new();
        for (idx, nested) in resource.include {
            let nested = nested.prepare();
            let field = meta.fields[idx].name;
            let target = match meta.fields[idx].fk {
                Some(target) => target(),
                None => panic!(
                    "plover: include_resources: `{field}` of `{}` is not a foreign key",
                    meta.name
                ),
            };
            if (target.type_id)() != (nested.meta().type_id)() {
                panic!(
                    "plover: include_resources: `{field}` of `{}` refers to `{}`, not `{}`",
                    meta.name,
                    target.name,
                    nested.meta().name
                );
            }
            nested_rules.insert(idx, nested.list().clone());
            includes[idx] = Some(nested);
        }
        if let Some(idx) = resource.owner_field {
            assert!(
                meta.fields[idx].fk.is_some(),
                "plover: owner_field: `{}` of `{}` is not a foreign key",
                meta.fields[idx].name,
                meta.name
            );
        }
        let mut list = ListPlan::new(
            meta,
            exposed.clone(),
            filter_paths,
            resource.filter_recursive,
            nested_rules,
            resource.list.limits,
            resource.list.paginate_by,
        );
        list.count = resource.list.count;
        let keys = (0..n)
            .filter(|&i| exposed[i])
            .map(|i| {
                let field = &meta.fields[i];
                let key = if includes[i].is_some() {
                    field.name
                } else {
                    field.json_key()
                };
                let mut text = serde_json::to_vec(key).unwrap_or_default();
                text.push(b':');
                (i, text)
            })
            .collect();
        let columns = (!resource.hooks.reads_hidden_fields() && exposed.contains(&false))
            .then(|| (0..n).map(|i| exposed[i] || i == meta.pk).collect());
        Prepared {
            name: resource.name.unwrap_or_else(|| meta.name.to_owned()),
            exposed,
            writable,
            keys,
            includes,
            list,
            owner: resource.owner_field,
            auth: resource.auth,
            rate: resource.rate,
            allowed_methods: resource.allowed_methods,
            hooks: resource.hooks,
            custom_hooks: resource.custom_hooks,
            keyset: resource.keyset,
            aggregates: resource.aggregates,
            delete_recursive: resource.delete_recursive,
            columns,
            joins: Arc::default(),
        }
    }

    /// The objects of `rows` as JSON text, nested resources included: one query per included
    /// field and nesting level, whatever the number of rows. Rows go straight to text unless
    /// `prepare_data` looks at them. The objects are appended to `buf`, separated by commas
    /// (the inside of a JSON array), so that a list page is written in one buffer.
    pub(crate) fn serialize(
        &self,
        cx: &Context<'_>,
        conn: &mut Conn<'_>,
        rows: &[M],
        mut buf: Vec<u8>,
    ) -> Result<Serialized, Error> {
        let mut nested: Vec<(usize, NestedObjects)> = Vec::new();
        for (idx, include) in self.includes.iter().enumerate() {
            if let (Some(include), true) = (include, self.exposed[idx]) {
                let mut ids: Vec<i64> = rows
                    .iter()
                    .filter_map(|r| r.field_json(idx).as_i64())
                    .collect();
                ids.sort_unstable();
                ids.dedup();
                let objects = if ids.is_empty() {
                    NestedObjects::default()
                } else {
                    include.serialize_ids(cx, conn, &ids)?
                };
                nested.push((idx, objects));
            }
        }
        let nested_of = |idx: usize| nested.iter().find(|(i, _)| *i == idx).map(|(_, o)| o);
        // About a hundred bytes an object: room for most pages without growing.
        buf.reserve(rows.len() * 128);
        let mut out = Serialized {
            buf,
            spans: Vec::with_capacity(rows.len()),
        };
        for row in rows {
            let build = || self.map_of(row, &nested_of);
            let mut data = Data::new(&build);
            self.hooks.prepare_data(cx, row, &mut data);
            if !out.spans.is_empty() {
                out.buf.push(b',');
            }
            let start = out.buf.len();
            match data.into_map() {
                Some(map) => serde_json::to_writer(&mut out.buf, &map)
                    .map_err(|e| Error::Internal(e.to_string()))?,
                None => {
                    out.buf.push(b'{');
                    for (n, (idx, key)) in self.keys.iter().enumerate() {
                        if n > 0 {
                            out.buf.push(b',');
                        }
                        out.buf.extend_from_slice(key);
                        match nested_of(*idx) {
                            Some(objects) => {
                                let obj =
                                    row.field_json(*idx).as_i64().and_then(|id| objects.get(id));
                                out.buf.extend_from_slice(obj.unwrap_or(b"null"));
                            }
                            None => row.write_field(*idx, &mut out.buf),
                        }
                    }
                    out.buf.push(b'}');
                }
            }
            out.spans.push(start..out.buf.len());
        }
        Ok(out)
    }

    /// One row as a map (for `prepare_data`).
    fn map_of<'n>(
        &self,
        row: &M,
        nested_of: &dyn Fn(usize) -> Option<&'n NestedObjects>,
    ) -> Map<String, Value> {
        let meta = M::meta();
        let mut map = Map::new();
        for (idx, _) in &self.keys {
            let field = &meta.fields[*idx];
            match nested_of(*idx) {
                Some(objects) => {
                    let obj = row.field_json(*idx).as_i64().and_then(|id| objects.get(id));
                    let value = obj.and_then(|text| serde_json::from_slice(text).ok());
                    map.insert(field.name.to_owned(), value.unwrap_or(Value::Null));
                }
                None => {
                    map.insert(field.json_key().to_owned(), row.field_json(*idx));
                }
            }
        }
        map
    }

    /// Its objects as the API description shows them: the exposed fields, and the shapes of
    /// the included resources.
    pub(crate) fn shape(&self) -> Shape<'_> {
        let nested = self
            .includes
            .iter()
            .enumerate()
            .filter_map(|(idx, include)| {
                let include = include.as_ref().filter(|_| self.exposed[idx])?;
                Some((idx, include.shape()))
            });
        Shape {
            meta: M::meta(),
            exposed: &self.exposed,
            nested: nested.collect(),
        }
    }

    /// The `get_query` scope of this request.
    pub(crate) fn scope(&self, cx: &Context<'_>) -> Result<Vec<Filter>, Error> {
        let mut scope = super::hooks::Scope::default();
        self.hooks.get_query(cx, &mut scope);
        Ok(scope.filters)
    }

    /// The row with primary key `pk`, if `get_query` lets this request see it.
    pub(crate) fn find(
        &self,
        cx: &Context<'_>,
        conn: &mut Conn<'_>,
        pk: i64,
    ) -> Result<Option<M>, Error> {
        let scope = self.scope(cx)?;
        if scope.is_empty() {
            return M::load_pk(conn, pk);
        }
        let mut select = Select::ids_in(M::meta().pk, &[pk]);
        select.filters.extend(scope);
        select.limit = Some(1);
        Ok(M::load(conn, &select)?.into_iter().next())
    }
}

/// A resource's list-query parser, for benchmarks: not a public API.
#[cfg(feature = "testing")]
#[doc(hidden)]
#[derive(Debug)]
pub struct ListParser(ListPlan);

#[cfg(feature = "testing")]
impl ListParser {
    /// The parser of `resource`'s list requests.
    pub fn new<M: RestModel>(resource: Resource<M>) -> ListParser {
        ListParser(Prepared::new(resource).list)
    }

    /// The selection of a list request's decoded query pairs.
    pub fn parse(&self, pairs: &[(String, String)]) -> Result<Select, Error> {
        self.0.parse(pairs, &()).map(|query| query.select)
    }
}

impl<M: RestModel> Nested for Prepared<M> {
    fn meta(&self) -> &'static ModelMeta {
        M::meta()
    }

    fn list(&self) -> &ListPlan {
        &self.list
    }

    fn shape(&self) -> Shape<'_> {
        Prepared::shape(self)
    }

    fn serialize_ids(
        &self,
        cx: &Context<'_>,
        conn: &mut Conn<'_>,
        ids: &[i64],
    ) -> Result<NestedObjects, Error> {
        // A row that `get_query` hides is left out: the including object shows `null`.
        let mut select = Select {
            columns: self.columns.clone(),
            ..Select::ids_in(M::meta().pk, ids)
        };
        select.filters.extend(self.scope(cx)?);
        let rows = M::load(conn, &select)?;
        let objects = self.serialize(cx, conn, &rows, Vec::new())?;
        let index = rows
            .iter()
            .enumerate()
            .map(|(n, row)| (row.pk(), n))
            .collect();
        Ok(NestedObjects { objects, index })
    }
}

impl<N: RestModel> IntoNested for Resource<N> {
    fn prepare(self: Box<Self>) -> Arc<dyn Nested> {
        // Nested in another resource, it is seen through a join: no private field shows.
        let mut resource = *self;
        resource.show.clear();
        Arc::new(Prepared::new(resource))
    }
}
