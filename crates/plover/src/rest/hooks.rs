//! What a resource's hooks see and may change: the request's context, the scope of its
//! queries, and the `Hooks` trait.

use std::marker::PhantomData;
use std::sync::Arc;

use actix_web::http::Method;
use serde_json::{Map, Value};

use super::data::Data;
use crate::accounts::{Auth, UserModel};
use crate::auth::AuthUser;
use crate::error::Error;
use crate::model::{Field, RestModel};
use crate::query::{Filter, Op, Param};
use crate::sql::Arg;

/// What hooks know about the request being served.
#[derive(Debug, Clone, Copy)]
pub struct Context<'a> {
    /// The HTTP method.
    pub method: &'a Method,
    /// The authenticated user, when the authentication produced one.
    pub user: Option<&'a AuthUser>,
}

/// Extra conditions that scope every query of a resource (the `get_query` hook), on fields
/// of its model `M`.
#[derive(Debug)]
pub struct Scope<M> {
    pub(crate) filters: Vec<Filter>,
    _model: PhantomData<fn() -> M>,
}

impl<M> Default for Scope<M> {
    fn default() -> Self {
        Scope {
            filters: Vec::new(),
            _model: PhantomData,
        }
    }
}

impl<M: RestModel> Scope<M> {
    /// Only rows whose field `field` compares with `value` by `op`.
    pub fn filter(&mut self, field: Field<M>, op: Op, value: impl Into<Param>) -> &mut Scope<M> {
        self.filters.push(Filter {
            path: vec![field.index()],
            op,
            values: vec![value.into()],
        });
        self
    }

    /// Only rows whose field `field` equals `value`.
    pub fn eq(&mut self, field: Field<M>, value: impl Into<Param>) -> &mut Scope<M> {
        self.filter(field, Op::Eq, value)
    }
}

/// The overridable behaviour of a resource (flask-peewee's `RestResource` methods). Every
/// method has a default; implement the ones you need.
///
/// ```
/// # use plover::prelude::*;
/// # use plover::rest::{Context, Hooks};
/// # diesel::table! { hmodel (id) { id -> Integer, h_field -> Text } }
/// # #[derive(RestModel)] #[diesel(table_name = hmodel)] pub struct HModel { pub id: i32, pub h_field: String }
/// struct Guarded;
///
/// impl Hooks<HModel> for Guarded {
///     fn check_get(&self, _cx: &Context<'_>, obj: Option<&HModel>) -> bool {
///         obj.is_none_or(|h| h.h_field != "private")
///     }
/// }
/// let resource = Resource::<HModel>::new().hooks(Guarded);
/// ```
pub trait Hooks<M: RestModel>: Send + Sync + 'static {
    /// Restricts every query of the resource, list and detail alike (a hidden row is 404).
    fn get_query(&self, _cx: &Context<'_>, _scope: &mut Scope<M>) {}

    /// Adjusts the serialized object (add, change or remove keys through `data`).
    fn prepare_data(&self, _cx: &Context<'_>, _obj: &M, _data: &mut Data<'_>) {}

    /// Whether `prepare_data` reads fields that the resource does not show (default: `true`,
    /// as it may). A list whose hooks answer `false` loads only the columns it shows (and the
    /// key), so that the objects `prepare_data` gets on a list carry their type's default
    /// value (`""`, `0`, `None`...) in the other fields. A resource without hooks of its own
    /// does so. Details and writes always load every field.
    fn reads_hidden_fields(&self) -> bool {
        true
    }

    /// Adjusts the parsed changes before a POST or PUT is saved; `raw` is the body as sent.
    /// An error answers the request (e.g. `Error::field("password", "...")`).
    fn save_object(
        &self,
        _cx: &Context<'_>,
        _changes: &mut M::Changes,
        _raw: &Map<String, Value>,
    ) -> Result<(), Error> {
        Ok(())
    }

    /// Whether the object may be read (`None`: the list).
    fn check_get(&self, _cx: &Context<'_>, _obj: Option<&M>) -> bool {
        true
    }

    /// Whether a new object may be created.
    fn check_post(&self, _cx: &Context<'_>) -> bool {
        true
    }

    /// Whether the stored object may be edited.
    fn check_put(&self, _cx: &Context<'_>, _obj: &M) -> bool {
        true
    }

    /// Whether the stored object may be deleted.
    fn check_delete(&self, _cx: &Context<'_>, _obj: &M) -> bool {
        true
    }

    /// With an owner field: whether `user` owns `obj` (default: the owner field holds the
    /// user's primary key).
    fn validate_owner(&self, user: &AuthUser, obj: &M, owner_field: usize) -> bool {
        obj.field_arg(owner_field).as_key() == Some(user.id)
    }

    /// With an owner field: stamps `user` as the owner of a new object.
    fn set_owner(
        &self,
        changes: &mut M::Changes,
        user: &AuthUser,
        owner_field: usize,
    ) -> Result<(), Error> {
        set_key::<M>(changes, owner_field, user.id)
    }
}

/// What the steps compiled once for every model ask of a resource's hooks: the questions that
/// do not name the model's type.
pub(crate) trait ReadChecks {
    /// Whether `check_get` lets the request read the list (no object).
    fn reads_list(&self, cx: &Context<'_>) -> bool;
    /// The request's `get_query` scope.
    fn scope_of(&self, cx: &Context<'_>) -> Vec<Filter>;

    /// 403 unless `check_get` lets the request read the list (its pages, aggregates, feed).
    fn check_list_read(&self, cx: &Context<'_>) -> Result<(), Error> {
        if self.reads_list(cx) {
            Ok(())
        } else {
            Err(Error::Forbidden)
        }
    }
}

impl<M: RestModel> ReadChecks for Arc<dyn Hooks<M>> {
    fn reads_list(&self, cx: &Context<'_>) -> bool {
        self.check_get(cx, None)
    }

    fn scope_of(&self, cx: &Context<'_>) -> Vec<Filter> {
        let mut scope = Scope::default();
        self.get_query(cx, &mut scope);
        scope.filters
    }
}

/// Sets the foreign key `field` of `changes` to the primary key `key` (an owner, a nested
/// child's parent), typed as the column is: no JSON between.
pub(crate) fn set_key<M: RestModel>(
    changes: &mut M::Changes,
    field: usize,
    key: i64,
) -> Result<(), Error> {
    let arg = M::meta()
        .fields
        .get(field)
        .and_then(|f| Arg::key(f.sql_type, key))
        .ok_or_else(|| Error::Internal(format!("key {key} does not fit field {field}")))?;
    M::set_arg(changes, field, arg).map_err(Error::Internal)
}

/// The hooks of a user model's resource that let clients set passwords, ready to use:
/// `HashPassword<U>` implements [`Hooks<U>`] for any user model `U` (the one of the
/// [`Auth<U>`] it is made from). An incoming password (POST, PUT, PATCH, bulk, upsert) is
/// hashed with `auth`'s cost before it is stored, as flask-peewee's `UserResource` does; `""`
/// stays `""` (no usable password). Its only other hook says that it reads no hidden field
/// (`reads_hidden_fields` is `false`): a list of users loads only the columns it shows (no
/// hashes).
///
/// ```
/// use plover::accounts::User;
/// use plover::prelude::*;
/// use plover::rest::HashPassword;
///
/// let db = Database::from_url("sqlite://:memory:?max_connections=1").unwrap();
/// let auth = Auth::<User>::new(db.clone());
/// let mut api = RestApi::new(db);
/// api.register_resource(
///     Resource::<User>::new()
///         .hooks(HashPassword::new(&auth))          // POST {"username": .., "password": ..}
///         .auth(AdminAuthentication::new(&auth)),   // only administrators create users
/// );
/// ```
///
/// A resource that needs hooks of its own as well adds them with a second
/// [`Resource::hooks`](super::Resource::hooks): both sets run. A `save_object` that checks the
/// password as typed goes in a set added before this one (sets run in order, and this one
/// replaces the password by its hash).
#[derive(Debug, Clone)]
pub struct HashPassword<U: UserModel>(Auth<U>);

impl<U: UserModel> HashPassword<U> {
    /// Hashes with `auth`'s cost.
    pub fn new(auth: &Auth<U>) -> HashPassword<U> {
        HashPassword(auth.clone())
    }
}

impl<U: UserModel> Hooks<U> for HashPassword<U> {
    fn reads_hidden_fields(&self) -> bool {
        false
    }

    fn save_object(
        &self,
        _cx: &Context<'_>,
        changes: &mut U::Changes,
        _raw: &Map<String, Value>,
    ) -> Result<(), Error> {
        let Some((field, _)) = U::meta().field(U::PASSWORD_FIELD) else {
            return Ok(());
        };
        let Some(Arg::Text(raw)) = U::change(changes, field) else {
            return Ok(());
        };
        let hash = self
            .0
            .make_password(&raw)
            .map_err(|e| Error::field(U::PASSWORD_FIELD, e.to_string()))?;
        U::set_arg(changes, field, Arg::Text(hash.into())).map_err(Error::Internal)
    }
}

/// Several hook sets of one resource ([`Resource::hooks`](super::Resource::hooks) called more
/// than once), run as one: docs/reference.md#hooks says how each hook composes.
pub(crate) struct Stack<M>(pub(crate) Vec<Arc<dyn Hooks<M>>>);

impl<M: RestModel> Hooks<M> for Stack<M> {
    /// Every set adds its conditions: they all apply.
    fn get_query(&self, cx: &Context<'_>, scope: &mut Scope<M>) {
        for hooks in &self.0 {
            hooks.get_query(cx, scope);
        }
    }

    /// In order, each set seeing the object as the previous ones left it.
    fn prepare_data(&self, cx: &Context<'_>, obj: &M, data: &mut Data<'_>) {
        for hooks in &self.0 {
            hooks.prepare_data(cx, obj, data);
        }
    }

    /// Whether any set does.
    fn reads_hidden_fields(&self) -> bool {
        self.0.iter().any(|hooks| hooks.reads_hidden_fields())
    }

    /// In order, each set seeing the changes as the previous ones left them; the first error
    /// answers the request.
    fn save_object(
        &self,
        cx: &Context<'_>,
        changes: &mut M::Changes,
        raw: &Map<String, Value>,
    ) -> Result<(), Error> {
        self.0
            .iter()
            .try_for_each(|hooks| hooks.save_object(cx, changes, raw))
    }

    fn check_get(&self, cx: &Context<'_>, obj: Option<&M>) -> bool {
        self.0.iter().all(|hooks| hooks.check_get(cx, obj))
    }

    fn check_post(&self, cx: &Context<'_>) -> bool {
        self.0.iter().all(|hooks| hooks.check_post(cx))
    }

    fn check_put(&self, cx: &Context<'_>, obj: &M) -> bool {
        self.0.iter().all(|hooks| hooks.check_put(cx, obj))
    }

    fn check_delete(&self, cx: &Context<'_>, obj: &M) -> bool {
        self.0.iter().all(|hooks| hooks.check_delete(cx, obj))
    }

    /// The first set's: who owns an object is one decision, not a chain.
    fn validate_owner(&self, user: &AuthUser, obj: &M, owner_field: usize) -> bool {
        match self.0.first() {
            Some(hooks) => hooks.validate_owner(user, obj, owner_field),
            None => Hooks::<M>::validate_owner(&DefaultHooks, user, obj, owner_field),
        }
    }

    /// The first set's, as `validate_owner`.
    fn set_owner(
        &self,
        changes: &mut M::Changes,
        user: &AuthUser,
        owner_field: usize,
    ) -> Result<(), Error> {
        match self.0.first() {
            Some(hooks) => hooks.set_owner(changes, user, owner_field),
            None => Hooks::<M>::set_owner(&DefaultHooks, changes, user, owner_field),
        }
    }
}

/// The hook sets of a resource as one: the defaults without any, the set itself when there is
/// one (a resource with one set pays nothing for composition), else a [`Stack`].
pub(crate) fn combine<M: RestModel>(mut sets: Vec<Arc<dyn Hooks<M>>>) -> Arc<dyn Hooks<M>> {
    match sets.len() {
        0 => Arc::new(DefaultHooks),
        1 => sets.remove(0),
        _ => Arc::new(Stack(sets)),
    }
}

/// The hooks of a resource that overrides none.
#[derive(Debug, Clone, Copy, Default)]
pub struct DefaultHooks;

impl<M: RestModel> Hooks<M> for DefaultHooks {
    fn reads_hidden_fields(&self) -> bool {
        false
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::{combine, AuthUser, DefaultHooks, Hooks};
    use crate::auth::Token;

    /// Lets administrators own every token.
    struct AdminsOwnAll;

    impl Hooks<Token> for AdminsOwnAll {
        fn validate_owner(&self, user: &AuthUser, obj: &Token, _owner_field: usize) -> bool {
            user.admin || obj.user_id == user.id
        }
    }

    fn token_of(user_id: i64) -> Token {
        Token {
            id: 1,
            user_id,
            name: String::new(),
            digest: String::new(),
            created: chrono::NaiveDateTime::default(),
            revoked: false,
        }
    }

    #[test]
    fn the_first_set_decides_who_owns_an_object() {
        let admin = AuthUser {
            id: 1,
            username: "root".into(),
            admin: true,
        };
        let field = Token::FIELDS.user_id.index();
        let theirs = token_of(2);
        let first: Arc<dyn Hooks<Token>> = Arc::new(AdminsOwnAll);
        let plain: Arc<dyn Hooks<Token>> = Arc::new(DefaultHooks);
        let admins_first = combine(vec![first.clone(), plain.clone()]);
        assert!(admins_first.validate_owner(&admin, &theirs, field));
        let plain_first = combine(vec![plain, first]);
        assert!(!plain_first.validate_owner(&admin, &theirs, field));
        assert!(plain_first.validate_owner(&admin, &token_of(1), field));
    }

    #[test]
    fn a_stack_reads_hidden_fields_when_any_set_does() {
        struct Reads;
        impl Hooks<Token> for Reads {}
        let plain = || -> Arc<dyn Hooks<Token>> { Arc::new(DefaultHooks) };
        assert!(!combine(vec![plain(), plain()]).reads_hidden_fields());
        assert!(combine(vec![plain(), Arc::new(Reads)]).reads_hidden_fields());
        assert!(!combine::<Token>(Vec::new()).reads_hidden_fields());
    }
}
