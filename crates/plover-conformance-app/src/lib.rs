//! The conformance app of `shared/conformance/APP.md` as a library: its models, hooks and
//! registrations, built only from Plover's public API. The binary (`main.rs`) serves them; the
//! project's integration tests register the same resources, plus their own.

pub mod models;

use actix_web::http::Method;
use actix_web::{web, HttpResponse};
use microblog::{Message, Note, Relationship, User};
use models::{AModel, ApiKey, BModel, CModel, DModel, EModel, FModel, HModel, Sample, Ticket};
use plover::admin::{Admin, AdminPanel, Column, ModelAdmin, PanelData, PanelForm};
use plover::permissions::ModelPermissions;
use plover::prelude::*;
use plover::rest::HashPassword;
use plover::rest::{Context, Data, Scope};

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

/// `get_query` of `UserResource` (APP.md): active users only.
pub struct ActiveUsers;

impl Hooks<User> for ActiveUsers {
    fn get_query(&self, _cx: &Context<'_>, scope: &mut Scope<User>) {
        scope.eq(User::FIELDS.active, true);
    }

    fn reads_hidden_fields(&self) -> bool {
        false
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

/// `UserResource` of APP.md, for registration or nesting: the private e-mail address is
/// accepted but never shown or filtered (`write_only`), passwords are hashed on the way in,
/// and only active users are found.
pub fn user_resource(auth: &Auth<User>) -> Resource<User> {
    Resource::<User>::new()
        .write_only([User::FIELDS.email])
        .hooks(HashPassword::new(auth))
        .hooks(ActiveUsers)
}

/// The sample resource of APP.md (sections 4 and 8), as APIs "api" and "v3" share it:
/// aggregates, writes by filter (at most 1,000 rows), upserts, every verb and a change feed;
/// each API adds its authentication.
fn sample_resource() -> Resource<Sample> {
    use Method as M;
    Resource::<Sample>::new()
        .aggregates(true)
        .filtered_writes(true)
        .max_affected(1000)
        .upsert(true)
        .allowed_methods([M::GET, M::POST, M::PUT, M::PATCH, M::DELETE])
        .changes(true)
}

/// The registrations of API "api" (APP.md section 4), before `setup()`.
pub fn api(db: Database, auth: &Auth<User>, max_body: usize) -> RestApi {
    use Method as M;
    let open = || Authentication::new(vec![]);
    let all = || vec![M::GET, M::POST, M::PUT, M::DELETE];
    let (user, message, follow) = (User::FIELDS, Message::FIELDS, Relationship::FIELDS);
    let mut api = RestApi::new(db).max_body_bytes(max_body);
    api.register_resource(
        user_resource(auth)
            .auth(AdminAuthentication::new(auth))
            .changes(true),
    )
    .register_resource(
        Resource::<ApiKey>::new()
            .fields([ApiKey::FIELDS.id, ApiKey::FIELDS.key])
            .auth(AdminAuthentication::with_methods(auth, all()))
            .allowed_methods([M::GET, M::POST, M::DELETE]),
    )
    .register_resource(
        Resource::<Message>::new()
            .owner_field(message.user_id)
            .include(message.user_id, user_resource(auth))
            .filter_exclude([
                message.user_id.join(user.password),
                message.user_id.join(user.email),
            ])
            .search_fields([message.content.into(), message.user_id.join(user.username)])
            .auth(UserAuthentication::new(auth))
            .changes(true),
    )
    .register_resource(
        Resource::<Relationship>::new()
            .include(follow.to_user_id, user_resource(auth))
            .filter_exclude([
                follow.from_user_id.join(user.password),
                follow.from_user_id.join(user.email),
                follow.to_user_id.join(user.password),
                follow.to_user_id.join(user.email),
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
            .include(BModel::FIELDS.a_id, Resource::<AModel>::new())
            .auth(open()),
    )
    .register_resource(
        Resource::<CModel>::new()
            .include(
                CModel::FIELDS.b_id,
                Resource::<BModel>::new().include(BModel::FIELDS.a_id, Resource::<AModel>::new()),
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
            .include(FModel::FIELDS.e_id, Resource::<EModel>::new())
            .filter_recursive(false)
            .auth(open()),
    )
    .register_resource(
        Resource::<HModel>::new()
            .filter_fields({
                let h = HModel::FIELDS;
                [h.id, h.h_field, h.h_date, h.h_day]
            })
            .hooks(HModelChecks)
            .auth(open())
            .changes(true),
    )
    .register_resource(sample_resource().auth(Authentication::new(vec![M::DELETE])))
    .register_resource(
        Resource::<Ticket>::new()
            .filter_exclude([Ticket::FIELDS.body])
            .filtered_writes(true)
            .nested_children(
                "children",
                Ticket::FIELDS.parent_id,
                Resource::<Ticket>::new(),
            )
            .allowed_methods([M::GET, M::POST, M::PUT, M::PATCH, M::DELETE])
            .auth(open())
            .changes(true),
    );
    permission_resources(&mut api, auth);
    api
}

/// Plover's permission models as plain resources of API "api" (APP.md section 8), for
/// administrators only.
fn permission_resources(api: &mut RestApi, auth: &Auth<User>) {
    use plover::permissions::{Group, GroupPermission, UserGroup, UserPermission};
    let admin_all = || {
        let all = vec![Method::GET, Method::POST, Method::PUT, Method::DELETE];
        AdminAuthentication::with_methods(auth, all)
    };
    api.register_resource(Resource::<Group>::new().auth(admin_all()))
        .register_resource(Resource::<GroupPermission>::new().auth(admin_all()))
        .register_resource(Resource::<UserGroup>::new().auth(admin_all()))
        .register_resource(Resource::<UserPermission>::new().auth(admin_all()));
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
            .owner_field(Relationship::FIELDS.from_user_id)
            .filter_exclude({
                let (f, user) = (Relationship::FIELDS, User::FIELDS);
                [
                    f.from_user_id.join(user.email),
                    f.to_user_id.join(user.email),
                ]
            }),
    )
    .register_resource(
        Resource::<Note>::new()
            .hooks(NoPost)
            .allowed_methods([Method::GET, Method::POST]),
    );
    api
}

/// The registrations of API "v3" (APP.md section 8), before `setup()`: every verb needs
/// credentials and its model permission.
pub fn v3(db: Database, auth: &Auth<User>, max_body: usize) -> RestApi {
    use Method as M;
    let every = || vec![M::GET, M::POST, M::PUT, M::PATCH, M::DELETE];
    let mut api = RestApi::new(db)
        .prefix("/v3")
        .name("v3")
        .default_auth(UserAuthentication::with_methods(auth, every()))
        .max_body_bytes(max_body);
    api.register_resource(
        Resource::<Ticket>::new()
            .filter_exclude([Ticket::FIELDS.body])
            .filtered_writes(true)
            .allowed_methods(every())
            .permissions(ModelPermissions)
            .changes(true),
    )
    .register_resource(sample_resource().permissions(ModelPermissions));
    api
}

/// The number of messages of each user of an admin page: one grouped count for the page.
fn message_counts(conn: &mut plover::db::Conn<'_>, users: &[User]) -> Result<Vec<String>, Error> {
    use diesel::dsl::count_star;
    use diesel::prelude::*;
    use microblog::message;
    let ids: Vec<i32> = users.iter().map(|u| u.id).collect();
    let query = message::table
        .filter(message::user_id.eq_any(ids))
        .group_by(message::user_id)
        .select((message::user_id, count_star()));
    let counts: Vec<(i32, i64)> = match conn {
        plover::db::Conn::Sqlite(c) => query.load(*c)?,
        plover::db::Conn::Pg(c) => query.load(*c)?,
    };
    let counts: std::collections::HashMap<i32, i64> = counts.into_iter().collect();
    Ok(users
        .iter()
        .map(|u| counts.get(&u.id).copied().unwrap_or(0).to_string())
        .collect())
}

/// The "Notes" panel of APP.md section 5: the three newest notes and a form to add one.
pub struct NotesPanel;

impl AdminPanel for NotesPanel {
    fn permission(&self) -> Option<&str> {
        Some("note.view") // APP.md 8
    }

    fn data(&self, conn: &mut plover::db::Conn<'_>) -> Result<PanelData, Error> {
        let newest = plover::views::Query::<Note>::new()
            .order_by_desc(Note::FIELDS.id)
            .limit(3);
        Ok(PanelData {
            items: newest.all(conn)?.into_iter().map(|n| n.message).collect(),
            forms: vec![PanelForm {
                action: "create".into(),
                field: "message".into(),
                label: "New note".into(),
                button: "Add".into(),
            }],
        })
    }

    fn post(
        &self,
        action: &str,
        form: &[(String, String)],
        conn: &mut plover::db::Conn<'_>,
    ) -> Result<(), Error> {
        if action != "create" {
            return Err(Error::NotFound);
        }
        let message = form
            .iter()
            .find(|(k, _)| k == "message")
            .map(|(_, v)| v.trim().to_owned())
            .filter(|m| !m.is_empty())
            .ok_or_else(|| Error::field("message", "write a note first"))?;
        let mut changes = microblog::NoteChanges {
            message: Some(message),
            ..Default::default()
        };
        Note::fill_defaults(&mut changes);
        conn.transaction(|conn| Note::insert(conn, changes))
            .map(|_| ())
    }
}

/// The admin of APP.md section 5.
pub fn admin(auth: &Auth<User>) -> Admin<User> {
    let mut admin = Admin::new(auth);
    admin
        .register(
            ModelAdmin::<User>::new()
                .columns([
                    Column::field(User::FIELDS.id),
                    Column::field(User::FIELDS.username),
                    Column::field(User::FIELDS.email),
                    Column::field(User::FIELDS.active),
                    Column::field(User::FIELDS.admin),
                    Column::per_page("message_count", message_counts),
                ])
                .exclude([User::FIELDS.password])
                .list_filter([User::FIELDS.active, User::FIELDS.admin]),
        )
        .register(
            ModelAdmin::<Message>::new()
                .columns({
                    let f = Message::FIELDS;
                    [f.id, f.user_id, f.content, f.pub_date].map(Column::field)
                })
                .foreign_key_lookup(Message::FIELDS.user_id, User::FIELDS.username)
                .search_fields([
                    Message::FIELDS.content.into(),
                    Message::FIELDS.user_id.join(User::FIELDS.username),
                ])
                .list_filter([Message::FIELDS.user_id, Message::FIELDS.pub_date]),
        )
        .register(ModelAdmin::<Note>::new())
        .register(
            ModelAdmin::<AModel>::new()
                .columns([
                    Column::field(AModel::FIELDS.id),
                    Column::field(AModel::FIELDS.a_field),
                    Column::computed("shout", |a: &AModel| a.a_field.to_uppercase()),
                ])
                .delete_collect_objects(true)
                .delete_recursive(true),
        )
        .register(ModelAdmin::<BModel>::new().columns({
            let f = BModel::FIELDS;
            [f.id, f.a_id, f.b_field].map(Column::field)
        }))
        .register(ModelAdmin::<CModel>::new())
        .register(ModelAdmin::<DModel>::new())
        .register(ModelAdmin::<Ticket>::new().list_filter({
            let f = Ticket::FIELDS;
            [f.status, f.opened, f.parent_id]
        }))
        .register_panel("Notes", NotesPanel)
        .permissions(); // groups and grants (SPEC.md 19)
    admin
}
