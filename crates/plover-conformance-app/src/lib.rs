//! The conformance app of `shared/conformance/APP.md` as a library: its models, hooks and
//! registrations, built only from Plover's public API. The binary (`main.rs`) serves them; the
//! project's integration tests register the same resources, plus their own.

pub mod models;

use actix_web::http::Method;
use actix_web::{web, HttpResponse};
use microblog::{HashPassword, Message, Note, Relationship, User};
use models::{AModel, ApiKey, BModel, CModel, DModel, EModel, FModel, HModel, Sample};
use plover::prelude::*;
use plover::rest::{Context, Data, Scope};
use serde_json::{Map, Value};

/// HTML-escapes text for the plain pages.
fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

fn page(title: &str, body: &str) -> HttpResponse {
    HttpResponse::Ok()
        .content_type("text/html; charset=utf-8")
        .body(format!(
            "<!doctype html><meta charset=\"utf-8\"><title>{title}</title>{body}"
        ))
}

/// `GET /`, the homepage of APP.md section 3: `[user:NAME]` for the logged-in user.
pub async fn homepage(user: Option<LoggedInUser<User>>) -> HttpResponse {
    let name = user.map(|u| escape(&u.username)).unwrap_or_default();
    page(
        "Plover conformance app",
        &format!("<p>[user:{name}]</p><p><a href=\"/accounts/login/\">Log in</a></p>"),
    )
}

/// `GET /private/`, a `login_required` page: `[private:NAME]`.
pub async fn private(user: LoggedInUser<User>) -> HttpResponse {
    page(
        "Private",
        &format!("<p>[private:{}]</p>", escape(&user.username)),
    )
}

/// The plain pages of APP.md section 3.
pub fn pages(cfg: &mut web::ServiceConfig) {
    cfg.route("/", web::get().to(homepage))
        .route("/private/", web::get().to(private));
}

/// `UserResource` of APP.md: active users only, passwords hashed on the way in.
pub struct UserHooks(pub HashPassword);

impl Hooks<User> for UserHooks {
    fn get_query(&self, _cx: &Context<'_>, scope: &mut Scope) {
        scope.eq("active", true);
    }

    fn save_object(
        &self,
        cx: &Context<'_>,
        changes: &mut microblog::UserChanges,
        raw: &Map<String, Value>,
    ) -> Result<(), Error> {
        self.0.save_object(cx, changes, raw)
    }
}

/// `prepare_data` of `/api/note/`: the number of characters of the message.
pub struct NoteLength;

impl Hooks<Note> for NoteLength {
    fn prepare_data(&self, _cx: &Context<'_>, obj: &Note, data: &mut Data<'_>) {
        data.insert("message_length", obj.message.chars().count());
    }
}

/// The `check_*` hooks of `/api/hmodel/`.
pub struct HModelChecks;

impl Hooks<HModel> for HModelChecks {
    fn check_get(&self, _cx: &Context<'_>, obj: Option<&HModel>) -> bool {
        obj.is_none_or(|h| h.h_field != "private")
    }
    fn check_put(&self, _cx: &Context<'_>, obj: &HModel) -> bool {
        !obj.h_field.starts_with("locked")
    }
    fn check_delete(&self, _cx: &Context<'_>, obj: &HModel) -> bool {
        !obj.h_field.starts_with("locked")
    }
}

/// `check_post` of `/v2/note/`: never.
pub struct NoPost;

impl Hooks<Note> for NoPost {
    fn check_post(&self, _cx: &Context<'_>) -> bool {
        false
    }
}

/// `UserResource` of APP.md, for registration or nesting.
pub fn user_resource(auth: &Auth<User>) -> Resource<User> {
    Resource::<User>::new()
        .exclude(["password", "email"])
        .filter_exclude(["password", "email"])
        .hooks(UserHooks(HashPassword(auth.clone())))
}

/// The registrations of API "api" (APP.md section 4), before `setup()`.
pub fn api(db: Database, auth: &Auth<User>, max_body: usize) -> RestApi {
    use Method as M;
    let open = || Authentication::new(vec![]);
    let all = || vec![M::GET, M::POST, M::PUT, M::DELETE];
    let mut api = RestApi::new(db).max_body_bytes(max_body);
    api.register_resource(user_resource(auth).auth(AdminAuthentication::new(auth)))
        .register_resource(
            Resource::<ApiKey>::new()
                .fields(["id", "key"])
                .auth(AdminAuthentication::with_methods(auth, all()))
                .allowed_methods([M::GET, M::POST, M::DELETE]),
        )
        .register_resource(
            Resource::<Message>::new()
                .owner_field("user")
                .include("user", user_resource(auth))
                .filter_exclude(["user__password", "user__email"])
                .auth(UserAuthentication::new(auth)),
        )
        .register_resource(
            Resource::<Relationship>::new()
                .include("to_user", user_resource(auth))
                .filter_exclude([
                    "from_user__password",
                    "from_user__email",
                    "to_user__password",
                    "to_user__email",
                ]),
        )
        .register_resource(
            Resource::<Note>::new()
                .hooks(NoteLength)
                .auth(ApiKeyAuthentication::<ApiKey>::new(all())),
        )
        .register_resource(Resource::<AModel>::new().auth(open()))
        .register_resource(
            Resource::<BModel>::new()
                .include("a", Resource::<AModel>::new())
                .auth(open()),
        )
        .register_resource(
            Resource::<CModel>::new()
                .include(
                    "b",
                    Resource::<BModel>::new().include("a", Resource::<AModel>::new()),
                )
                .auth(open()),
        )
        .register_resource(Resource::<DModel>::new().auth(open()))
        .register_resource(
            Resource::<EModel>::new()
                .paginate_by(5)
                .delete_recursive(false)
                .auth(open()),
        )
        .register_resource(
            Resource::<FModel>::new()
                .include("e", Resource::<EModel>::new())
                .filter_recursive(false)
                .auth(open()),
        )
        .register_resource(
            Resource::<HModel>::new()
                .filter_fields(["id", "h_field", "h_date", "h_day"])
                .hooks(HModelChecks)
                .auth(open()),
        )
        .register_resource(Resource::<Sample>::new().auth(Authentication::new(vec![M::DELETE])));
    api
}

/// The registrations of API "v2" (APP.md section 4), before `setup()`.
pub fn v2(db: Database, auth: &Auth<User>, max_body: usize) -> RestApi {
    let mut api = RestApi::new(db)
        .prefix("/v2")
        .name("v2")
        .default_auth(UserAuthentication::new(auth))
        .max_body_bytes(max_body);
    api.register_resource(
        Resource::<Relationship>::new()
            .name("follow")
            .owner_field("from_user"),
    )
    .register_resource(
        Resource::<Note>::new()
            .hooks(NoPost)
            .allowed_methods([Method::GET, Method::POST]),
    );
    api
}
