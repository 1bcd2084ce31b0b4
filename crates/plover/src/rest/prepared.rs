//! A resource with its options checked and turned into lookup tables once, at set-up, and
//! the serialization of its objects (docs/contract.md#objects).

use std::collections::HashMap;
use std::sync::Arc;

use actix_web::http::Method;
use serde_json::{Map, Value};

use super::data::Data;
use super::hooks::{Context, Hooks, ReadChecks};
use super::joins::Joins;
use super::nested::{IntoNested, Nested, NestedObjects, Serialized};
use super::rate::RateLimit;
use super::relation::{IntoChildResource, Relation};
use super::resource::Resource;
use super::sparse::Sparse;
use crate::auth::Authenticator;
use crate::db::Conn;
use crate::error::Error;
use crate::listing::FilterPaths;
use crate::listing::ListPlan;
use crate::model::{FieldMeta, ModelMeta, RestModel};
use crate::openapi::Shape;
use crate::permissions::ModelPermissions;
use crate::query::{Count, Filter, Limits, Order, Select};

/// A resource ready to serve: its hooks, and everything else in [`Core`], whose methods are
/// compiled once for every model (the application's crate compiles `Prepared`'s once per
/// model). `Prepared` reads as its core (`Deref`).
pub(crate) struct Prepared<M: RestModel> {
    pub(crate) hooks: Arc<dyn Hooks<M>>,
    pub(crate) core: Core,
}

impl<M: RestModel> std::ops::Deref for Prepared<M> {
    type Target = Core;
    fn deref(&self) -> &Core {
        &self.core
    }
}

impl<M: RestModel> std::ops::DerefMut for Prepared<M> {
    fn deref_mut(&mut self) -> &mut Core {
        &mut self.core
    }
}

/// Everything of a resource but its hooks: what its list reads, what its objects show, who
/// may call which verb, and what its writes take.
pub(crate) struct Core {
    /// The model.
    pub(crate) meta: &'static ModelMeta,
    /// The URL name.
    pub(crate) name: String,
    /// The list's parameters, limits and counting.
    pub(crate) list: ListPlan,
    /// Whether the list pages by cursor where its ordering allows ([`Resource::keyset_pagination`]).
    pub(crate) keyset: bool,
    /// The rules of the API's resources that joins obey (filled when the API is set up).
    pub(crate) joins: Arc<Joins>,
    /// What the objects show.
    pub(crate) output: Output,
    /// Who may call which verb, how often.
    pub(crate) access: Access,
    /// What a write takes and does.
    pub(crate) writes: Writes,
}

/// Per field: the resource its object is included from, if any.
pub(crate) type Includes = Vec<Option<Arc<dyn Nested>>>;

/// What a resource's objects show (docs/contract.md#objects).
pub(crate) struct Output {
    /// Per field: whether the objects show it.
    pub(crate) exposed: Vec<bool>,
    /// The exposed fields in output order, with their JSON key text (`"user_id":`).
    keys: Vec<(usize, Vec<u8>)>,
    /// Per field: the resource its object is included from ([`Resource::include`]).
    pub(crate) includes: Includes,
    /// The fields a list loads (`Select::columns`): the shown ones and the key, unless the
    /// hooks read hidden fields or every field is shown (`None`: all).
    columns: Option<Arc<[bool]>>,
}

impl Output {
    /// The field that the objects show under `key`.
    fn key_index(&self, meta: &ModelMeta, key: &str) -> Option<usize> {
        self.keys
            .iter()
            .map(|(idx, _)| *idx)
            .find(|&idx| key_of(&meta.fields[idx], self.includes[idx].is_some()) == key)
    }

    /// Its objects as the API description shows them: the exposed fields, and the shapes of
    /// the included resources.
    fn shape(&self, meta: &'static ModelMeta) -> Shape<'_> {
        let nested = self
            .includes
            .iter()
            .enumerate()
            .filter_map(|(idx, include)| {
                let include = include.as_ref().filter(|_| self.exposed[idx])?;
                Some((idx, include.shape()))
            });
        Shape {
            meta,
            exposed: &self.exposed,
            nested: nested.collect(),
        }
    }

    /// The sparse fields of `names` (keys as the objects show them; `include.key` reaches into
    /// an included object); the error is the name that is not a key shown here.
    fn sparse(&self, meta: &ModelMeta, names: &[&str]) -> Result<Sparse, String> {
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
                .key_index(meta, head)
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

/// Who may call which verb of a resource, and how often.
pub(crate) struct Access {
    /// Its own authentication (`None`: the API's).
    pub(crate) auth: Option<Arc<dyn Authenticator>>,
    /// Whether each verb needs its model permission ([`Resource::permissions`]).
    pub(crate) permissions: Option<ModelPermissions>,
    /// Its own rate limit (`None`: the API's, if any).
    pub(crate) rate: Option<RateLimit>,
    pub(crate) allowed_methods: Vec<Method>,
    /// Whether `aggregate/` is served ([`Resource::aggregates`]).
    pub(crate) aggregates: bool,
    /// Whether PUT on the list path upserts ([`Resource::upsert`]).
    pub(crate) upsert: bool,
    /// Whether `changes/` is served ([`Resource::changes`]).
    pub(crate) changes: bool,
    /// The most rows a PATCH or DELETE by filters may change, where they are served
    /// ([`Resource::filtered_writes`]).
    pub(crate) max_affected: Option<usize>,
}

/// What a resource's writes take and do.
pub(crate) struct Writes {
    /// Per field: whether a client may write it here (not read-only, within `writable`).
    pub(crate) writable: Vec<bool>,
    /// The field that records who owns a row ([`Resource::owner_field`]).
    pub(crate) owner: Option<usize>,
    /// The writable nested relations ([`Resource::nested_children`]).
    pub(crate) children: Vec<Relation>,
    /// Whether the hooks are the user's: their `save_object` may take long (hash a password).
    pub(crate) custom_hooks: bool,
    /// Whether writes are recorded in the history ([`Resource::history`]).
    pub(crate) history: bool,
    /// Whether writes need `If-Match` ([`Resource::require_if_match`]).
    pub(crate) require_if_match: bool,
    /// Whether a DELETE takes the rows that depend on the record along
    /// ([`Resource::delete_recursive`]).
    pub(crate) delete_recursive: bool,
}

/// Per field: `base(field)`, and listed in `only` when that option is given.
fn only(meta: &ModelMeta, only: Option<&[usize]>, base: impl Fn(&FieldMeta) -> bool) -> Vec<bool> {
    (0..meta.fields.len())
        .map(|i| base(&meta.fields[i]) && only.is_none_or(|l| l.contains(&i)))
        .collect()
}

/// The key that objects show a field under: its name where it includes an object, else its
/// JSON key (`user_id`).
fn key_of(field: &FieldMeta, includes: bool) -> &'static str {
    if includes {
        field.name
    } else {
        field.json_key()
    }
}

/// The options of a resource that do not name its model's type, taken out of a
/// [`Resource`] for [`Core::new`].
struct Options {
    name: Option<String>,
    /// `fields` of the list (`None`: every field).
    fields: Option<Vec<usize>>,
    exclude: Vec<usize>,
    filter_paths: FilterPaths,
    limits: Limits,
    paginate_by: i64,
    count: Option<Count>,
    show: Vec<usize>,
    write_only: Vec<usize>,
    filter_recursive: bool,
    include: Vec<(usize, Box<dyn IntoNested>)>,
    children: Vec<(String, Box<dyn IntoChildResource>)>,
    writable: Option<Vec<usize>>,
    keyset: bool,
    aggregates: bool,
    history: bool,
    require_if_match: bool,
    filtered_writes: bool,
    max_affected: usize,
    upsert: bool,
    changes: bool,
    delete_recursive: bool,
    owner_field: Option<usize>,
    auth: Option<Arc<dyn Authenticator>>,
    permissions: Option<ModelPermissions>,
    rate: Option<RateLimit>,
    allowed_methods: Vec<Method>,
}

impl Core {
    /// Checks `options` against `meta`; a misconfiguration panics with a clear message.
    /// `custom_hooks`: whether the application gave hooks; `reads_hidden`: whether they read
    /// fields the objects do not show.
    fn new(
        meta: &'static ModelMeta,
        options: Options,
        custom_hooks: bool,
        reads_hidden: bool,
    ) -> Core {
        let n = meta.fields.len();
        check_write_only(meta, &options);
        if options.changes {
            meta.record_changes();
        }
        let hidden: Vec<usize> = (options.exclude.iter().chain(&options.write_only))
            .copied()
            .collect();
        let exposed = meta.shown(options.fields.as_deref(), &hidden, &options.show);
        let mut writable = only(meta, options.writable.as_deref(), |f| !f.read_only);
        // A private field is written only where it is shown or opened for writing.
        for (idx, field) in meta.fields.iter().enumerate() {
            writable[idx] &= !field.private || exposed[idx] || options.write_only.contains(&idx);
        }
        let mut filter_paths = options.filter_paths;
        // A write-only field is never filtered, ordered, searched or aggregated, whatever
        // `filter_fields` says: the list refuses it and every path through it.
        filter_paths
            .exclude
            .extend(options.write_only.iter().map(|&idx| vec![idx]));
        let (includes, nested_rules) = prepare_includes(meta, options.include);
        let children = prepare_children(meta, options.children, options.history);
        if let Some(idx) = options.owner_field {
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
            options.filter_recursive,
            nested_rules,
            options.limits,
            options.paginate_by,
        );
        list.count = options.count;
        let columns = (!reads_hidden && exposed.contains(&false))
            .then(|| (0..n).map(|i| exposed[i] || i == meta.pk).collect());
        let keys = output_keys(meta, &exposed, &includes);
        Core {
            meta,
            name: options.name.unwrap_or_else(|| meta.name.to_owned()),
            list,
            keyset: options.keyset,
            joins: Arc::default(),
            output: Output {
                exposed,
                keys,
                includes,
                columns,
            },
            access: Access {
                auth: options.auth,
                permissions: options.permissions,
                rate: options.rate,
                allowed_methods: options.allowed_methods,
                aggregates: options.aggregates,
                upsert: options.upsert,
                changes: options.changes,
                max_affected: options.filtered_writes.then_some(options.max_affected),
            },
            writes: Writes {
                writable,
                owner: options.owner_field,
                children,
                custom_hooks,
                history: options.history,
                require_if_match: options.require_if_match,
                delete_recursive: options.delete_recursive,
            },
        }
    }

    /// Takes the API's join rules, for itself and its nested children's resources (at
    /// registration).
    pub(crate) fn share_joins(&mut self, joins: &Arc<Joins>) {
        self.joins = joins.clone();
        for relation in &mut self.writes.children {
            if let Some(child) = Arc::get_mut(&mut relation.child) {
                child.share_joins(joins);
            }
        }
    }

    /// Its objects as the API description shows them: the exposed fields, and the shapes of
    /// the included resources.
    pub(crate) fn shape(&self) -> Shape<'_> {
        self.output.shape(self.meta)
    }

    /// The request's sparse fields, if it names any (`None`: every key).
    pub(crate) fn sparse_of(&self, query: &[(String, String)]) -> Result<Option<Sparse>, Error> {
        match Sparse::names(query) {
            None => Ok(None),
            Some(names) => self
                .sparse(&names)
                .map(Some)
                .map_err(|n| Sparse::refused(&n)),
        }
    }

    /// The sparse fields of `names` (keys as the objects show them; `include.key` reaches into
    /// an included object); the error is the name that is not a key shown here.
    pub(crate) fn sparse(&self, names: &[&str]) -> Result<Sparse, String> {
        self.output.sparse(self.meta, names)
    }
}

/// Panics (at registration) when `write_only` contradicts another option: a field it names is
/// also shown, is the key or read-only, or is left out of `writable`.
fn check_write_only(meta: &ModelMeta, options: &Options) {
    for &idx in &options.write_only {
        let field = &meta.fields[idx];
        let clash = if options.show.contains(&idx) {
            Some("`show` shows it")
        } else if options.fields.as_ref().is_some_and(|f| f.contains(&idx)) {
            Some("`fields` shows it")
        } else if idx == meta.pk || field.read_only {
            Some("it is read-only")
        } else if options.writable.as_ref().is_some_and(|w| !w.contains(&idx)) {
            Some("`writable` leaves it out")
        } else {
            None
        };
        if let Some(clash) = clash {
            panic!(
                "plover: write_only: `{}` of `{}` cannot be write-only here: {clash}",
                field.name, meta.name
            );
        }
    }
}

/// The included resources by field ([`Resource::include`]), each checked to be the resource
/// of the model its foreign key refers to, and the list rules of each (filters through it).
fn prepare_includes(
    meta: &'static ModelMeta,
    include: Vec<(usize, Box<dyn IntoNested>)>,
) -> (Includes, HashMap<usize, ListPlan>) {
    let mut includes: Includes = vec![None; meta.fields.len()];
    let mut nested_rules = HashMap::new();
    for (idx, nested) in include {
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
    (includes, nested_rules)
}

/// The writable nested relations ([`Resource::nested_children`]), each under a body key that
/// names no field nor another relation; their writes are recorded where the parent's are.
fn prepare_children(
    meta: &'static ModelMeta,
    specs: Vec<(String, Box<dyn IntoChildResource>)>,
    history: bool,
) -> Vec<Relation> {
    let mut children: Vec<Relation> = Vec::new();
    for (key, child) in specs {
        if meta.field(&key).is_some() || children.iter().any(|r| r.key == key) {
            panic!(
                "plover: nested_children: `{key}` already names a field or a relation of `{}`",
                meta.name
            );
        }
        let child = child.prepare(meta, &key, history);
        children.push(Relation { key, child });
    }
    children
}

/// The exposed fields in output order, with their JSON key text (`"user_id":`).
fn output_keys(meta: &ModelMeta, exposed: &[bool], includes: &Includes) -> Vec<(usize, Vec<u8>)> {
    (0..meta.fields.len())
        .filter(|&i| exposed[i])
        .map(|i| {
            let key = key_of(&meta.fields[i], includes[i].is_some());
            let mut text = serde_json::to_vec(key).unwrap_or_default();
            text.push(b':');
            (i, text)
        })
        .collect()
}

impl<M: RestModel> Prepared<M> {
    /// Checks the options of `resource`; a misconfiguration panics with a clear message,
    /// before the server serves anything.
    pub(crate) fn new(resource: Resource<M>) -> Self {
        let filter_paths = resource.list.filter_paths();
        let list = resource.list;
        let options = Options {
            name: resource.name,
            fields: list.fields,
            exclude: list.exclude,
            filter_paths,
            limits: list.limits,
            paginate_by: list.paginate_by,
            count: list.count,
            show: resource.show,
            write_only: resource.write_only,
            filter_recursive: resource.filter_recursive,
            include: resource.include,
            children: resource.children,
            writable: resource.writable,
            keyset: resource.keyset,
            aggregates: resource.aggregates,
            history: resource.history,
            require_if_match: resource.require_if_match,
            filtered_writes: resource.filtered_writes,
            max_affected: resource.max_affected,
            upsert: resource.upsert,
            changes: resource.changes,
            delete_recursive: resource.delete_recursive,
            owner_field: resource.owner_field,
            auth: resource.auth,
            permissions: resource.permissions,
            rate: resource.rate,
            allowed_methods: resource.allowed_methods,
        };
        let custom_hooks = !resource.hooks.is_empty();
        let hooks = super::hooks::combine(resource.hooks);
        let reads_hidden = hooks.reads_hidden_fields();
        let core = Core::new(M::meta(), options, custom_hooks, reads_hidden);
        Prepared { hooks, core }
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
        sparse: Option<&Sparse>,
        buf: Vec<u8>,
    ) -> Result<Serialized, Error> {
        self.serialize_under(&self.joins, cx, conn, rows, sparse, buf)
    }

    /// [`Prepared::serialize`], the included objects under the scopes of `joins` (the API's,
    /// which a nested resource does not hold itself).
    fn serialize_under(
        &self,
        joins: &Joins,
        cx: &Context<'_>,
        conn: &mut Conn<'_>,
        rows: &[M],
        sparse: Option<&Sparse>,
        mut buf: Vec<u8>,
    ) -> Result<Serialized, Error> {
        let shown = |idx: usize| sparse.is_none_or(|s| s.shown[idx]);
        let mut nested: Vec<(usize, NestedObjects)> = Vec::new();
        for (idx, include) in self.output.includes.iter().enumerate() {
            if let (Some(include), true) = (include, self.output.exposed[idx] && shown(idx)) {
                let mut ids: Vec<i64> = rows
                    .iter()
                    .filter_map(|r| r.field_arg(idx).as_key())
                    .collect();
                ids.sort_unstable();
                ids.dedup();
                let objects = if ids.is_empty() {
                    NestedObjects::default()
                } else {
                    let sparse = sparse.and_then(|s| s.nested(idx));
                    include.serialize_ids(cx, conn, &ids, sparse, joins)?
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
            let build = || self.map_of(row, &shown, &nested_of);
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
                    let mut first = true;
                    for (idx, key) in self.output.keys.iter().filter(|(idx, _)| shown(*idx)) {
                        if !first {
                            out.buf.push(b',');
                        }
                        first = false;
                        out.buf.extend_from_slice(key);
                        match nested_of(*idx) {
                            Some(objects) => {
                                let obj =
                                    row.field_arg(*idx).as_key().and_then(|id| objects.get(id));
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
        shown: &dyn Fn(usize) -> bool,
        nested_of: &dyn Fn(usize) -> Option<&'n NestedObjects>,
    ) -> Map<String, Value> {
        let meta = M::meta();
        let mut map = Map::new();
        for (idx, _) in self.output.keys.iter().filter(|(idx, _)| shown(*idx)) {
            let field = &meta.fields[*idx];
            match nested_of(*idx) {
                Some(objects) => {
                    let obj = row.field_arg(*idx).as_key().and_then(|id| objects.get(id));
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

    /// The columns a list of these objects loads (`Select::columns`): the ones `sparse` or
    /// the resource shows, the key, and the fields `order` names.
    pub(crate) fn list_columns(
        &self,
        sparse: Option<&Sparse>,
        order: &[Order],
    ) -> Option<Arc<[bool]>> {
        match sparse {
            Some(sparse) if !self.hooks.reads_hidden_fields() => {
                let ordered = order.iter().filter_map(Order::own_field);
                Some(sparse.columns(M::meta().pk, ordered))
            }
            _ => self.output.columns.clone(),
        }
    }

    /// The `get_query` scope of this request.
    pub(crate) fn scope(&self, cx: &Context<'_>) -> Result<Vec<Filter>, Error> {
        Ok(self.hooks.scope_of(cx))
    }

    /// Puts the `get_query` scope of this request before the conditions of `select`.
    pub(crate) fn add_scope(&self, cx: &Context<'_>, select: &mut Select) -> Result<(), Error> {
        prepend(self.scope(cx)?, select);
        Ok(())
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
        ListParser(Prepared::new(resource).core.list)
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
        self.core.shape()
    }

    fn sparse(&self, names: &[&str]) -> Result<Sparse, String> {
        self.core.sparse(names)
    }

    fn serialize_ids(
        &self,
        cx: &Context<'_>,
        conn: &mut Conn<'_>,
        ids: &[i64],
        sparse: Option<&Sparse>,
        joins: &Joins,
    ) -> Result<NestedObjects, Error> {
        // A row that this resource's `get_query`, or the registered resource's of the model,
        // hides is left out: the including object shows `null`.
        let mut select = Select {
            columns: self.list_columns(sparse, &[]),
            ..Select::ids_in(M::meta().pk, ids)
        };
        select.filters.extend(self.scope(cx)?);
        // The registered resource is often this one: its conditions are not written twice.
        for filter in joins.scope(cx, M::meta()) {
            if !select.filters.contains(&filter) {
                select.filters.push(filter);
            }
        }
        let rows = M::load(conn, &select)?;
        let objects = self.serialize_under(joins, cx, conn, &rows, sparse, Vec::new())?;
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
        // Nested in another resource, it is seen through a join: no private field shows, and
        // nothing is written through it, so its write-only fields are simply hidden.
        let mut resource = *self;
        resource.show.clear();
        let write_only = std::mem::take(&mut resource.write_only);
        resource.list.exclude.extend(write_only);
        Arc::new(Prepared::new(resource))
    }
}

/// Puts the scope `filters` before the conditions of `select`.
pub(crate) fn prepend(mut filters: Vec<Filter>, select: &mut Select) {
    filters.append(&mut select.filters);
    select.filters = filters;
}
