//! `Resource`: the options of one model's REST endpoints.

use std::sync::Arc;

use actix_web::http::Method;

use super::hooks::Hooks;
use super::nested::IntoNested;
use super::rate::RateLimit;
use super::relation::{ChildSpec, IntoChildResource};
use crate::auth::Authenticator;
use crate::listing::{list_setters, ListSpec};
use crate::model::{indexes, Field, RestModel};
use crate::permissions::ModelPermissions;
use crate::query::Count;

/// The REST options of one model. Register it with
/// [`RestApi::register`](crate::rest::RestApi::register).
pub struct Resource<M: RestModel> {
    pub(crate) name: Option<String>,
    pub(crate) list: ListSpec<M>,
    /// Private fields shown here (indexes).
    pub(crate) show: Vec<usize>,
    /// Fields written here but never shown, filtered or ordered on (indexes).
    pub(crate) write_only: Vec<usize>,
    pub(crate) filter_recursive: bool,
    /// `(foreign key index, the resource it nests)`.
    pub(crate) include: Vec<(usize, Box<dyn IntoNested>)>,
    /// `(body key, the child resource and its foreign key)`: the writable nested relations.
    pub(crate) children: Vec<(String, Box<dyn IntoChildResource>)>,
    pub(crate) writable: Option<Vec<usize>>,
    pub(crate) keyset: bool,
    /// Whether `{prefix}/{name}/aggregate/` is served.
    pub(crate) aggregates: bool,
    /// Whether writes are recorded in the history.
    pub(crate) history: bool,
    /// Whether `{prefix}/{name}/changes/` is served.
    pub(crate) changes: bool,
    /// Whether PUT, PATCH and DELETE need `If-Match`.
    pub(crate) require_if_match: bool,
    /// Whether PATCH and DELETE on the list path write the rows the filters match.
    pub(crate) filtered_writes: bool,
    /// The most rows one such write may change.
    pub(crate) max_affected: usize,
    /// Whether PUT on the list path inserts or updates by a unique field.
    pub(crate) upsert: bool,
    pub(crate) delete_recursive: bool,
    pub(crate) owner_field: Option<usize>,
    pub(crate) auth: Option<Arc<dyn Authenticator>>,
    /// Whether each verb needs its model permission.
    pub(crate) permissions: Option<ModelPermissions>,
    pub(crate) rate: Option<RateLimit>,
    pub(crate) allowed_methods: Vec<Method>,
    /// The hook sets, in the order they were added (none: the defaults, which do nothing).
    pub(crate) hooks: Vec<Arc<dyn Hooks<M>>>,
}

impl<M: RestModel> Default for Resource<M> {
    fn default() -> Self {
        Resource::new()
    }
}

impl<M: RestModel> std::fmt::Debug for Resource<M> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Resource")
            .field("model", &M::meta().name)
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

impl<M: RestModel> Resource<M> {
    /// The defaults: every field, 20 a page, recursive filters and deletes, the API's
    /// authentication, every method.
    pub fn new() -> Resource<M> {
        Resource {
            name: None,
            list: ListSpec::default(),
            show: Vec::new(),
            write_only: Vec::new(),
            filter_recursive: true,
            include: Vec::new(),
            children: Vec::new(),
            writable: None,
            keyset: false,
            aggregates: false,
            history: false,
            changes: false,
            require_if_match: false,
            filtered_writes: false,
            max_affected: 1000,
            upsert: false,
            delete_recursive: true,
            owner_field: None,
            auth: None,
            permissions: None,
            rate: None,
            allowed_methods: vec![Method::GET, Method::POST, Method::PUT, Method::DELETE],
            hooks: Vec::new(),
        }
    }

    /// The URL name (`get_api_name`; default: the lowercase model name).
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.name = Some(name.into());
        self
    }

    list_setters!();

    /// Shows these `#[rest(private)]` fields here, and only here: this resource serializes,
    /// accepts, filters and orders them as any other field it shows (narrow that with
    /// `filter_fields` or `filter_exclude`). Other resources, joins from them and this resource
    /// nested in another (`include`) still refuse them. To accept a private field without
    /// showing it, use [`write_only`](Self::write_only).
    pub fn show(mut self, fields: impl IntoIterator<Item = Field<M>>) -> Self {
        self.show = indexes(fields);
        self
    }

    /// Accepts these fields in bodies here but never shows them (DRF's `write_only=True`): a
    /// POST, PUT, PATCH, bulk create, upsert or nested create of this resource may write them
    /// (a `#[rest(private)]` field too, which no other resource accepts), while no answer
    /// serializes them (not the object a write returns, nor this resource included in
    /// another), and no client may filter, order, search, aggregate or name them in `fields=`
    /// here or through a join, whatever `filter_fields` says. The API description marks them
    /// `writeOnly` in request bodies and leaves them out of responses.
    ///
    /// Panics at registration when a field is also shown (`show`, or listed in `fields`), is
    /// the primary key or `#[rest(read_only)]`, or is left out of [`writable`](Self::writable).
    ///
    /// ```
    /// use plover::accounts::User;
    /// use plover::prelude::*;
    ///
    /// // Administrators set a user's e-mail address on POST /api/user/ and PUT; nobody reads
    /// // it, filters or orders on it (`?ordering=email` is a 400).
    /// let users = Resource::<User>::new().write_only([User::FIELDS.email]);
    /// ```
    pub fn write_only(mut self, fields: impl IntoIterator<Item = Field<M>>) -> Self {
        self.write_only = indexes(fields);
        self
    }

    /// Whether filters may join through foreign keys (default true).
    pub fn filter_recursive(mut self, recursive: bool) -> Self {
        self.filter_recursive = recursive;
        self
    }

    /// Serialize the foreign key `field` as the nested object of `resource`.
    pub fn include<N: RestModel>(mut self, field: Field<M>, resource: Resource<N>) -> Self {
        self.include.push((field.index(), Box::new(resource)));
        self
    }

    /// A writable nested relation (docs/contract.md#nested-create): a create body may carry,
    /// under `key`, an array of objects of the child model `C`, created with the object in
    /// one transaction, each with `fk` (a foreign key of `C` to this model) set to the new
    /// object's key. Each child goes through what a create of `resource` does: its writable
    /// fields, field constraints and defaults, its `check_post` and `save_object` hooks, its
    /// owner field, model rules, references, the history (kept when `resource` or this
    /// resource keeps one). Its authentication, rate limit and verbs are not consulted: the
    /// request is this resource's POST.
    ///
    /// Any error and nothing is written: 400 with every mistake of the object and of its
    /// children in one `fields`, a child's by its path (`"comments.1.body"`). A child that
    /// names `fk` itself is a 400 on it (the parent sets it); more children in one request
    /// than [`Limits::max_bulk_rows`](crate::query::Limits::max_bulk_rows) is 413. The 201 answer is the
    /// object, plus `key` holding the created children as `resource` serializes them. The
    /// relation is create-only: GETs do not show it, and a PUT or PATCH naming `key` is a
    /// 400 on it. A bulk create's objects may carry children too (their errors under the
    /// object's index). One level only: `resource` may not have nested children of its own.
    ///
    /// Panics when the relation is inconsistent (at registration, before the server starts):
    /// `fk` not a foreign key to this model, `fk` also the owner field of `resource`, `key`
    /// naming a field of this model or another relation, `resource` with relations of its own.
    ///
    /// ```
    /// # use plover::prelude::*;
    /// # diesel::table! { post (id) { id -> Integer, title -> Text } }
    /// # diesel::table! { comment (id) { id -> Integer, post_id -> Integer, body -> Text } }
    /// /// A blog post.
    /// #[derive(RestModel)]
    /// #[diesel(table_name = post)]
    /// pub struct Post {
    ///     pub id: i32,
    ///     pub title: String,
    /// }
    ///
    /// /// A comment on a post.
    /// #[derive(RestModel)]
    /// #[diesel(table_name = comment)]
    /// pub struct Comment {
    ///     pub id: i32,
    ///     #[rest(fk = Post)]
    ///     pub post_id: i32,
    ///     pub body: String,
    /// }
    ///
    /// let db = Database::from_url("sqlite://:memory:?max_connections=1").unwrap();
    /// let mut api = RestApi::new(db);
    /// // POST /api/post/ {"title": "Hello", "comments": [{"body": "First"}, {"body": "Second"}]}
    /// // answers 201 {"id": 1, "title": "Hello", "comments": [
    /// //     {"id": 1, "post_id": 1, "body": "First"}, {"id": 2, "post_id": 1, "body": "Second"}]}
    /// api.register_resource(Resource::<Post>::new().nested_children(
    ///     "comments",
    ///     Comment::FIELDS.post_id,
    ///     Resource::<Comment>::new(),
    /// ));
    /// ```
    pub fn nested_children<C: RestModel>(
        mut self,
        key: impl Into<String>,
        fk: Field<C>,
        resource: Resource<C>,
    ) -> Self {
        let spec = ChildSpec {
            fk: fk.index(),
            resource,
        };
        self.children.push((key.into(), Box::new(spec)));
        self
    }

    /// The only fields a client may write through this resource (default: every field but the
    /// primary key and `#[rest(read_only)]` fields). A body key naming another field is a 400
    /// on that key, and nothing is written: a resource that shows three fields cannot be made
    /// to write a fourth.
    pub fn writable(mut self, fields: impl IntoIterator<Item = Field<M>>) -> Self {
        self.writable = Some(indexes(fields));
        self
    }

    /// Keyset pagination: `next` links carry a `cursor` (the ordering values of the page's
    /// last row) instead of a page number, so that deep pages cost what the first one does.
    /// Applies when every ordering column is non-nullable; `page=` keeps working.
    pub fn keyset_pagination(mut self, keyset: bool) -> Self {
        self.keyset = keyset;
        self
    }

    /// Counts the rows of every list request that does not choose itself (`?count=exact`,
    /// `?count=estimated`, `?count=auto`): each page's `meta` then carries `count` and
    /// `pages`. Default: no count unless asked for. On a table that may grow large,
    /// [`Count::Auto`] keeps the count cheap: exact up to
    /// [`Limits::count_exact_up_to`](crate::query::Limits) rows (set with `limits`), the
    /// planner's estimate past it on PostgreSQL.
    pub fn count(mut self, count: Count) -> Self {
        self.list.count = Some(count);
        self
    }

    /// Serves `GET {prefix}/{name}/aggregate/` (default false): per group of rows that share
    /// the values of up to three fields (`group=status,owner`), the number of rows (`count`)
    /// and the `sum`, `avg`, `min` and `max` of fields (`sum=priority`), over the rows the
    /// list's filters and this resource's `get_query` leave, as
    /// `{"groups": [{"status": "open", "count": 12, "sum_priority": 30}]}`. Aggregates take the
    /// fields clients may filter on, joins included, under the same rules; at most 1,000 groups
    /// (more is a 400). Authentication, hooks and rate limits are the list's. Without it,
    /// `aggregate/` is a detail path like any other (a key that names no record: 404).
    pub fn aggregates(mut self, aggregates: bool) -> Self {
        self.aggregates = aggregates;
        self
    }

    /// Records every POST, PUT, PATCH and DELETE of this resource in the history (default
    /// false), as the admin records its writes: who (the authenticated user, if the
    /// authentication gives one; else anonymous), when, the object, and each field's value
    /// before and after (private and write-only values masked), in the write's transaction.
    /// The entries show on the object's History page in the admin. The table
    /// [`HistoryEntry`](crate::history::HistoryEntry) must exist: see [`crate::history`].
    pub fn history(mut self, on: bool) -> Self {
        self.history = on;
        self
    }

    /// Serves the change feed `{prefix}/{name}/changes/` (default false; docs/changes.md): the
    /// rows' creations, changes and deletions as Server-Sent Events, each object as this
    /// resource's detail `GET` shows it to the subscriber, under the list's authentication,
    /// filters and scope; and `changes=cursor` on the list. From set-up on, every write of the
    /// model in this process records its events in the outbox, whose table
    /// [`ChangeEvent`](crate::changes::ChangeEvent) must exist: see [`crate::changes`].
    pub fn changes(mut self, on: bool) -> Self {
        self.changes = on;
        self
    }

    /// Whether PUT, PATCH and DELETE need an `If-Match` header (default false): without one
    /// they are 428, so that no client overwrites a row it has not read. Whatever this says,
    /// a write that sends `If-Match` with a tag other than the row's current `ETag` (that of a
    /// GET of the object without `fields=`) is 412 and writes nothing; `If-Match: *` takes
    /// any existing row. A resource that requires `If-Match` can serve neither writes by
    /// filter nor upserts (they name no one version of a row): registering one that asks for
    /// both stops the program with a message saying so.
    pub fn require_if_match(mut self, on: bool) -> Self {
        self.require_if_match = on;
        self
    }

    /// Serves `PATCH {prefix}/{name}/?<filters>` and `DELETE {prefix}/{name}/?<filters>`
    /// (default false): one write of every row the filters match, in one transaction
    /// (docs/contract.md#writes-by-filter). At least one filter is required (a list path
    /// without one is a 400, so that no slip writes the whole table), and the request's
    /// filters, `or`/`not` groups and `q` are the list's, under the same rules; the
    /// `get_query` scope applies. Every matched row then meets the checks a single PUT or
    /// DELETE of it would: the owner field, `check_put`/`check_delete` (any refusal: 403),
    /// the model's rules (the first row that breaks one: 400 naming it); each row is saved
    /// and recorded in the history as a single write would. More rows than
    /// [`max_affected`](Self::max_affected) is a 400. Whatever fails, nothing is written.
    /// Answers `{"updated": n}` / `{"deleted": n}`. The verbs must also be among
    /// [`allowed_methods`](Self::allowed_methods) (`Method::PATCH` is not by default; listing it
    /// serves PATCH on detail paths as well).
    ///
    /// ```
    /// # use plover::prelude::*;
    /// # diesel::table! { task (id) { id -> Integer, done -> Bool } }
    /// # #[derive(RestModel)] #[diesel(table_name = task)] pub struct Task { pub id: i32, pub done: bool }
    /// use actix_web::http::Method;
    ///
    /// // PATCH /api/task/?done=false  {"done": true}  closes every open task, at most 500.
    /// let tasks = Resource::<Task>::new()
    ///     .filtered_writes(true)
    ///     .max_affected(500)
    ///     .allowed_methods([Method::GET, Method::POST, Method::PUT, Method::PATCH, Method::DELETE]);
    /// ```
    pub fn filtered_writes(mut self, on: bool) -> Self {
        self.filtered_writes = on;
        self
    }

    /// The most rows one [`filtered_writes`](Self::filtered_writes) request may change
    /// (default 1,000): a request whose filters match more is a 400 and writes nothing.
    pub fn max_affected(mut self, rows: usize) -> Self {
        self.max_affected = rows;
        self
    }

    /// Serves `PUT {prefix}/{name}/?on=<field>` (default false): an upsert
    /// (docs/contract.md#upsert). The body is one object or an array of them (at most
    /// `max_bulk_rows`), each holding a value of `on`, a unique field this resource lets
    /// clients filter on. Each object updates the row with that value, if this request can see
    /// one (the checks and rules of a PUT of it: owner, `check_put`, the model's rules), or
    /// else creates one (those of a POST: `check_post`, required fields, the owner stamped).
    /// All in one transaction: any error and nothing is written (400 with `fields`, or with
    /// `items` by index for an array). Answers 201 when any row was created, else 200, with
    /// the object or the array of objects as written. `PUT` must be among
    /// [`allowed_methods`](Self::allowed_methods) (it is by default).
    ///
    /// ```
    /// # use plover::prelude::*;
    /// # diesel::table! { product (id) { id -> Integer, sku -> Text, price -> Integer } }
    /// # #[derive(RestModel)] #[diesel(table_name = product)]
    /// # pub struct Product { pub id: i32, #[rest(unique)] pub sku: String, pub price: i32 }
    /// // PUT /api/product/?on=sku  [{"sku": "A-1", "price": 5}, {"sku": "B-2", "price": 7}]
    /// let products = Resource::<Product>::new().upsert(true);
    /// ```
    pub fn upsert(mut self, on: bool) -> Self {
        self.upsert = on;
        self
    }

    /// Whether DELETE removes dependent rows (default true) or refuses with 409.
    pub fn delete_recursive(mut self, recursive: bool) -> Self {
        self.delete_recursive = recursive;
        self
    }

    /// Makes this a `RestrictOwnerResource`: `field` (a foreign key to the user model) is
    /// stamped with the authenticated user on POST, and only that user may PUT or DELETE.
    pub fn owner_field(mut self, field: Field<M>) -> Self {
        self.owner_field = Some(field.index());
        self
    }

    /// A rate limit of this resource's own, instead of the API's ([`RestApi::rate_limit`](
    /// super::RestApi::rate_limit)): see [`RateLimit`].
    pub fn rate_limit(mut self, limit: RateLimit) -> Self {
        self.rate = Some(limit);
        self
    }

    /// The authentication of this resource (default: the API's).
    pub fn auth(mut self, auth: impl Authenticator) -> Self {
        self.auth = Some(Arc::new(auth));
        self
    }

    /// Makes each verb need its model permission (docs/permissions.md): GET `view`, POST
    /// `add`, PUT and PATCH `change`, DELETE `delete`, an upsert `add` and `change`; 401
    /// without a user, 403 without the permission. See [`ModelPermissions`].
    ///
    /// ```
    /// use actix_web::http::Method;
    /// use plover::accounts::User;
    /// use plover::permissions::ModelPermissions;
    /// use plover::prelude::*;
    ///
    /// let db = Database::from_url("sqlite://:memory:?max_connections=1").unwrap();
    /// let auth = Auth::<User>::new(db);
    /// let every_verb = vec![Method::GET, Method::POST, Method::PUT, Method::PATCH, Method::DELETE];
    /// let users = Resource::<User>::new()
    ///     .auth(UserAuthentication::with_methods(&auth, every_verb))
    ///     .permissions(ModelPermissions);
    /// ```
    pub fn permissions(mut self, permissions: ModelPermissions) -> Self {
        self.permissions = Some(permissions);
        self
    }

    /// An authentication shared with other resources.
    pub fn shared_auth(mut self, auth: Arc<dyn Authenticator>) -> Self {
        self.auth = Some(auth);
        self
    }

    /// The verbs served (default GET, POST, PUT, DELETE); others answer 405 with `Allow`.
    /// List `Method::PATCH` to serve PATCH on detail paths: the partial update PUT is (same
    /// authentication, hooks and rules), for clients that send it.
    pub fn allowed_methods(mut self, methods: impl IntoIterator<Item = Method>) -> Self {
        self.allowed_methods = methods.into_iter().collect();
        self
    }

    /// Adds a set of [`Hooks`]: each call adds one, after those added before, and every set
    /// runs (docs/reference.md#hooks says how each hook composes: conditions of `get_query`
    /// all apply, `prepare_data` and `save_object` run in order, each seeing what the previous
    /// one left, a `check_*` refuses when any set refuses, and the ownership pair is the first
    /// set's).
    ///
    /// ```
    /// use plover::accounts::User;
    /// use plover::prelude::*;
    /// use plover::rest::{Context, Data, HashPassword, Hooks};
    ///
    /// /// Adds `"initial"` to every user object.
    /// struct Initial;
    ///
    /// impl Hooks<User> for Initial {
    ///     fn prepare_data(&self, _cx: &Context<'_>, user: &User, data: &mut Data<'_>) {
    ///         data.insert("initial", user.username.chars().next().map(String::from));
    ///     }
    ///     fn reads_hidden_fields(&self) -> bool {
    ///         false
    ///     }
    /// }
    ///
    /// let db = Database::from_url("sqlite://:memory:?max_connections=1").unwrap();
    /// let auth = Auth::<User>::new(db.clone());
    /// let users = Resource::<User>::new()
    ///     .hooks(HashPassword::new(&auth)) // hashes an incoming password
    ///     .hooks(Initial); // and adds a key to each object
    /// ```
    pub fn hooks(mut self, hooks: impl Hooks<M>) -> Self {
        self.hooks.push(Arc::new(hooks));
        self
    }
}
