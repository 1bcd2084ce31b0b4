//! What a resource's hooks see and may change: the request's context, the scope of its
//! queries, and the `Hooks` trait.

use std::marker::PhantomData;

use actix_web::http::Method;
use serde_json::{Map, Value};

use super::data::Data;
use crate::accounts::{Auth, UserModel};
use crate::auth::AuthUser;
use crate::error::Error;
use crate::model::{Field, RestModel};
use crate::query::{Filter, Op, Param};

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
        obj.field_json(owner_field).as_i64() == Some(user.id)
    }

    /// With an owner field: stamps `user` as the owner of a new object.
    fn set_owner(
        &self,
        changes: &mut M::Changes,
        user: &AuthUser,
        owner_field: usize,
    ) -> Result<(), Error> {
        M::set_json(changes, owner_field, &Value::from(user.id)).map_err(Error::Internal)
    }
}

/// The hooks of a user model's resource that let clients set passwords: an incoming password
/// (POST, PUT, PATCH) is hashed by the accounts component before it is stored, as
/// flask-peewee's `UserResource` does; `""` stays `""` (no usable password). A list of users
/// loads only the columns it shows (no hashes).
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
/// A resource that needs hooks of its own as well calls [`HashPassword::save_object`] from its
/// own `save_object`.
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
        let Some(Value::String(raw)) = U::changes_json(changes, field) else {
            return Ok(());
        };
        let hash = self
            .0
            .make_password(&raw)
            .map_err(|e| Error::field(U::PASSWORD_FIELD, e.to_string()))?;
        U::set_json(changes, field, &Value::String(hash)).map_err(Error::Internal)
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
