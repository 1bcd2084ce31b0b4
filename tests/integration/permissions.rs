//! docs/permissions.md: model permissions held directly or through groups, required by
//! `ModelPermissions` on the resources of `/v3` (`ticket`, `sample`), checked before the row
//! is looked up; kept by each process while the permissions stamp is unchanged.

use actix_web::http::Method;
use actix_web::test::TestRequest;
use actix_web::App;
use plover::db::Conn;
use plover::permissions::{self, Held, Holder};
use plover::prelude::*;
use plover_tests::*;
use serde_json::{json, Value};

const TICKETS: &str = "INSERT INTO ticket (id, title, priority, status, body, secret_note, opened)
     VALUES (1, 't1', 1, 'open', '', 's', '2020-01-01'), (2, 't2', 2, 'open', '', 's', '2020-01-02')";

/// A request of `user` (password `pw`) with a JSON body (none when `body` is null).
fn as_user(user: &str, method: Method, uri: &str, body: &Value) -> TestRequest {
    let req = if body.is_null() {
        TestRequest::default().method(method).uri(uri)
    } else {
        json_request(method, uri, body)
    };
    req.insert_header(basic(user, "pw"))
}

fn db<R>(app: &TestApp, work: impl FnOnce(&mut Conn<'_>) -> Result<R, Error>) -> R {
    app.db.run_blocking(work).expect("database work")
}

/// The status of each verb of `/v3/ticket/` for `user`, in the order GET list, GET detail,
/// POST, PUT, PATCH, DELETE (of ticket 2).
async fn statuses(app: &TestApp, user: &str) -> Vec<u16> {
    let change = json!({"title": "changed"});
    let requests = [
        (Method::GET, "/v3/ticket/", Value::Null),
        (Method::GET, "/v3/ticket/1/", Value::Null),
        (Method::POST, "/v3/ticket/", json!({"title": "new"})),
        (Method::PUT, "/v3/ticket/1/", change.clone()),
        (Method::PATCH, "/v3/ticket/1/", change),
        (Method::DELETE, "/v3/ticket/2/", Value::Null),
    ];
    let mut out = Vec::new();
    for (method, uri, body) in requests {
        out.push(app.send(as_user(user, method, uri, &body)).await.code());
    }
    out
}

#[actix_web::test]
async fn each_verb_needs_its_permission() {
    let cases: [(&str, &[u16]); 5] = [
        ("", &[403, 403, 403, 403, 403, 403]),
        ("ticket.view", &[200, 200, 403, 403, 403, 403]),
        ("ticket.add", &[403, 403, 201, 403, 403, 403]),
        ("ticket.change", &[200, 200, 403, 200, 200, 403]),
        ("ticket.delete", &[403, 403, 403, 403, 403, 200]),
    ];
    for (permission, expected) in cases {
        let app = TestApp::with_seed(TICKETS).await;
        let user = app.user("staff", "pw");
        if !permission.is_empty() {
            db(&app, |c| {
                permissions::grant(c, Holder::User(user), permission)
            });
        }
        assert_eq!(statuses(&app, "staff").await, expected, "{permission:?}");
    }
}

#[actix_web::test]
async fn without_credentials_401_and_every_read_and_write_checked_before_the_row() {
    let app = TestApp::with_seed(TICKETS).await;
    let staff = app.user("staff", "pw");
    let anonymous = app.get("/v3/ticket/").await;
    assert_eq!(anonymous.code(), 401);
    assert!(anonymous.header("WWW-Authenticate").is_some());
    for uri in ["/v3/ticket/1/", "/v3/ticket/999/"] {
        let resp = app
            .send(as_user("staff", Method::DELETE, uri, &Value::Null))
            .await;
        assert_eq!(resp.json_with(403)["error"], "Forbidden", "{uri}");
    }
    assert_eq!(app.count("ticket"), 2, "nothing deleted");
    let aggregate = || {
        as_user(
            "staff",
            Method::GET,
            "/v3/sample/aggregate/?count",
            &Value::Null,
        )
    };
    let feed = as_user("staff", Method::GET, "/v3/ticket/changes/", &Value::Null);
    assert_eq!(app.send(feed).await.code(), 403);
    assert_eq!(app.send(aggregate()).await.code(), 403);
    db(&app, |c| {
        permissions::grant(c, Holder::User(staff), "sample.view")
    });
    assert_eq!(app.send(aggregate()).await.code(), 200);
}

#[actix_web::test]
async fn writes_by_filter_and_upserts_need_their_verbs() {
    let app = TestApp::with_seed(TICKETS).await;
    let user = app.user("staff", "pw");
    let grant = |permission| {
        db(&app, |c| {
            permissions::grant(c, Holder::User(user), permission)
        })
    };
    let patch = || {
        as_user(
            "staff",
            Method::PATCH,
            "/v3/ticket/?priority=1",
            &json!({"priority": 4}),
        )
    };
    let delete = || as_user("staff", Method::DELETE, "/v3/ticket/?id=2", &Value::Null);
    let upsert = || {
        let row = json!({"name": "u", "qty": 1, "big": 0, "ratio": 0, "flag": false, "body": "",
                         "stamp": "2020-01-01 00:00:00"});
        as_user("staff", Method::PUT, "/v3/sample/?on=name", &row)
    };
    assert_eq!(app.send(patch()).await.code(), 403);
    assert_eq!(app.send(delete()).await.code(), 403);
    grant("ticket.change");
    assert_eq!(app.send(patch()).await.code(), 200);
    assert_eq!(app.query_i64("SELECT priority FROM ticket WHERE id = 1"), 4);
    assert_eq!(app.send(delete()).await.code(), 403);
    grant("ticket.delete");
    assert_eq!(app.send(delete()).await.code(), 200);
    assert_eq!(app.count("ticket"), 1);
    // An upsert may create or update: it needs both.
    grant("sample.add");
    assert_eq!(app.send(upsert()).await.code(), 403);
    assert_eq!(app.count("sample"), 0);
    grant("sample.change");
    assert!([200, 201].contains(&app.send(upsert()).await.code()));
    assert_eq!(app.count("sample"), 1);
}

#[actix_web::test]
async fn a_user_holds_the_permissions_of_its_groups_and_a_superuser_all() {
    let app = TestApp::with_seed(TICKETS).await;
    let staff = app.user("staff", "pw");
    app.user_with("root", "pw", true, true);
    let support = db(&app, |c| permissions::create_group(c, "support")).id;
    db(&app, |c| {
        permissions::grant(c, Holder::Group(support), "ticket.change")?;
        permissions::add_to_group(c, staff, support)
    });
    assert_eq!(
        statuses(&app, "staff").await,
        [200, 200, 403, 200, 200, 403]
    );
    let held = db(&app, |c| Held::of_user_id(c, staff));
    assert_eq!(held.names().collect::<Vec<_>>(), ["ticket.change"]);
    db(&app, |c| permissions::remove_from_group(c, staff, support));
    assert_eq!(
        statuses(&app, "staff").await,
        [403, 403, 403, 403, 403, 403]
    );
    assert_eq!(statuses(&app, "root").await, [200, 200, 201, 200, 200, 200]);
}

#[actix_web::test]
async fn a_revoked_permission_is_refused_on_the_next_request_of_every_process() {
    let app = TestApp::with_seed(TICKETS).await;
    let staff = app.user("staff", "pw");
    // Another process: its own pool of the same database, its own accounts component.
    let other_db = Database::from_url(&app.database_url()).expect("a valid URL");
    let other_auth = Auth::<User>::new(other_db.clone()).cost(4);
    let v3 = plover_conformance_app::v3(other_db.clone(), &other_auth, 1 << 20);
    let other = TestService::new(App::new().configure(v3.setup())).await;
    let get = || as_user("staff", Method::GET, "/v3/ticket/1/", &Value::Null);
    db(&app, |c| {
        permissions::grant(c, Holder::User(staff), "ticket.view")
    });
    for _ in 0..3 {
        assert_eq!(app.send(get()).await.code(), 200);
        assert_eq!(other.send(get()).await.code(), 200);
    }
    // Revoked through this process's pool: both refuse the very next request.
    db(&app, |c| {
        permissions::revoke(c, Holder::User(staff), "ticket.view")
    });
    assert_eq!(other.send(get()).await.code(), 403);
    assert_eq!(app.send(get()).await.code(), 403);
    // Granted again through the other pool, over REST of the permission resources.
    app.user_with("root", "pw", true, true);
    let grant = json!({"user": staff, "permission": "ticket.view"});
    let created = app
        .send(as_user(
            "root",
            Method::POST,
            "/api/userpermission/",
            &grant,
        ))
        .await;
    assert_eq!(created.json_with(201)["user"], staff);
    assert_eq!(other.send(get()).await.code(), 200);
}

#[actix_web::test]
async fn permissions_are_read_again_only_after_a_write_to_their_tables() {
    let app = TestApp::with_seed(TICKETS).await;
    let staff = app.user("staff", "pw");
    db(&app, |c| {
        permissions::grant(c, Holder::User(staff), "ticket.view")
    });
    let get = || as_user("staff", Method::GET, "/v3/ticket/1/", &Value::Null);
    assert_eq!(app.send(get()).await.code(), 200);
    // The table they are read from is away: a request still has them, kept by the process
    // under the stamp it reads with the user.
    let rename = |from: &str, to: &str| format!("ALTER TABLE {from} RENAME TO {to}");
    db(&app, |c| {
        c.batch_execute(&rename("plover_user_permission", "moved"))
    });
    assert_eq!(app.send(get()).await.code(), 200);
    assert_eq!(app.send(get()).await.code(), 200);
    // A write to another table of permissions raises the stamp: the next request reads them
    // again (and finds no table).
    db(&app, |c| permissions::create_group(c, "support"));
    assert_eq!(app.send(get()).await.code(), 500);
    db(&app, |c| {
        c.batch_execute(&rename("moved", "plover_user_permission"))
    });
    assert_eq!(app.send(get()).await.code(), 200);
}

#[actix_web::test]
async fn the_permission_tables_are_resources_for_administrators() {
    let app = TestApp::new().await;
    let staff = app.user("staff", "pw");
    app.user_with("root", "pw", true, true);
    let post = |uri: &str, body: Value| as_user("root", Method::POST, uri, &body);
    let group = app
        .send(post("/api/group/", json!({"name": "support"})))
        .await
        .json_with(201);
    let gid = group["id"].as_i64().expect("an id");
    let duplicate = app
        .send(post("/api/group/", json!({"name": "support"})))
        .await;
    assert_eq!(duplicate.code(), 409, "group names are unique");
    // Only the permissions of the program's models, and those declared, can be granted.
    for (name, status) in [
        ("ticket.fly", 400),
        ("nomodel.view", 400),
        ("ticket.export", 201),
    ] {
        if name == "ticket.export" {
            permissions::declare([name]);
        }
        let body = json!({"group": gid, "permission": name});
        let resp = app.send(post("/api/grouppermission/", body)).await;
        assert_eq!(resp.code(), status, "{name}: {}", resp.text());
    }
    let refused = db(&app, |c| {
        Ok(permissions::grant(c, Holder::User(staff), "ticket.fly"))
    });
    assert!(refused.is_err());
    for (uri, body) in [
        (
            "/api/grouppermission/",
            json!({"group": gid, "permission": "ticket.view"}),
        ),
        ("/api/usergroup/", json!({"user": staff, "group": gid})),
    ] {
        app.send(post(uri, body)).await.expect(201);
    }
    assert_eq!(
        app.send(as_user("staff", Method::GET, "/v3/ticket/", &Value::Null))
            .await
            .code(),
        200
    );
    // Not for other users, even to read.
    let listed = app
        .send(as_user("staff", Method::GET, "/api/group/", &Value::Null))
        .await;
    assert_eq!(listed.code(), 401);
    // Deleting the group removes its grants and memberships with it.
    app.send(as_user(
        "root",
        Method::DELETE,
        &format!("/api/group/{gid}/"),
        &Value::Null,
    ))
    .await
    .expect(200);
    assert_eq!(
        app.count("plover_group_permission"),
        0,
        "ticket.view and ticket.export"
    );
    assert_eq!(app.count("plover_user_group"), 0);
}

#[actix_web::test]
async fn the_api_description_states_401_and_403_where_permissions_apply() {
    let app = TestApp::new().await;
    let doc = app.get("/v3/openapi.json").await.json_with(200);
    for (path, verb) in [
        ("/v3/ticket/", "get"),
        ("/v3/ticket/{pk}/", "get"),
        ("/v3/ticket/", "post"),
        ("/v3/sample/", "put"),
        ("/v3/sample/aggregate/", "get"),
    ] {
        let responses = &doc["paths"][path][verb]["responses"];
        for status in ["401", "403"] {
            assert!(responses.get(status).is_some(), "{verb} {path}: {status}");
        }
    }
}

#[test]
#[should_panic(expected = "needs model permissions")]
fn permissions_behind_an_authentication_that_lets_reads_through_stop_registration() {
    let db = Database::from_url("sqlite://:memory:").expect("a valid URL");
    let auth = Auth::<User>::new(db.clone());
    // POST, PUT and DELETE only: a GET would never carry a user.
    let mut api = RestApi::new(db).default_auth(UserAuthentication::new(&auth));
    api.register_resource(
        Resource::<plover_conformance_app::models::Ticket>::new()
            .permissions(plover::permissions::ModelPermissions),
    );
}

#[test]
#[should_panic(expected = "names no model")]
fn declaring_a_permission_of_no_model_panics() {
    permissions::declare(["nomodel.export"]);
}

/// How a test deletes a user: through the REST API, the admin or `views::Query`.
#[derive(Debug, Clone, Copy)]
enum Writer {
    Rest,
    Admin,
    Query,
}

/// Deletes the user `id` as `writer` does, as the administrator `root` (password `pw`).
async fn delete_user(app: &TestApp, writer: Writer, id: i64) {
    let uri = match writer {
        Writer::Rest => format!("/api/user/{id}/"),
        Writer::Admin => format!("/admin/user/{id}/delete/"),
        Writer::Query => {
            let deleted = db(app, |c| {
                plover::views::Query::<User>::new()
                    .filter(User::FIELDS.id, plover::query::Op::Eq, id)
                    .delete(c)
            });
            assert_eq!(deleted, 1);
            return;
        }
    };
    if let Writer::Rest = writer {
        let req = as_user("root", Method::DELETE, &uri, &Value::Null);
        app.send(req).await.expect(200);
        return;
    }
    let admin = app.browser();
    admin.login("root", "pw").await.expect(302);
    let token = admin.csrf(&uri).await;
    let deleted = admin.post_form(&uri, &[("csrf_token", &token)]).await;
    assert!([302, 303].contains(&deleted.code()), "{}", deleted.text());
}

#[actix_web::test]
async fn a_deleted_users_grants_and_groups_go_with_it_and_a_new_user_inherits_nothing() {
    let app = TestApp::with_seed(TICKETS).await;
    app.user_with("root", "pw", true, true);
    let support = db(&app, |c| permissions::create_group(c, "support")).id;
    db(&app, |c| {
        permissions::grant(c, Holder::Group(support), "ticket.view")
    });
    for writer in [Writer::Rest, Writer::Admin, Writer::Query] {
        let staff = app.user("staff", "pw");
        db(&app, |c| {
            permissions::grant(c, Holder::User(staff), "ticket.change")?;
            permissions::add_to_group(c, staff, support)
        });
        assert_eq!(statuses(&app, "staff").await[..2], [200, 200], "{writer:?}");
        delete_user(&app, writer, staff).await;
        for table in ["plover_user_permission", "plover_user_group"] {
            assert_eq!(app.count(table), 0, "{writer:?}: {table}");
        }
        // A new user with the old one's key (SQLite gives the largest key again to a table
        // without AUTOINCREMENT) holds nothing.
        let again = app.user("staff", "pw");
        app.db
            .run_blocking(|c| {
                let sql = format!("UPDATE \"user\" SET id = {staff} WHERE id = {again}");
                c.batch_execute(&sql)
            })
            .expect("the old key");
        let held = db(&app, |c| Held::of_user_id(c, staff));
        assert_eq!(held.names().count(), 0, "{writer:?}");
        assert_eq!(statuses(&app, "staff").await, [403; 6], "{writer:?}");
        delete_user(&app, Writer::Query, staff).await;
    }
    // The group keeps its own grant.
    assert_eq!(app.count("plover_group_permission"), 1);
}

#[test]
fn a_user_is_deleted_in_a_database_without_the_tables_of_permissions() {
    let (db, _store) = fresh_database("");
    db.run_blocking(microblog::create_tables)
        .expect("the microblog's tables");
    let auth = Auth::<microblog::User>::new(db.clone()).cost(4);
    microblog::ensure_user(&db, &auth, "alice", "pw", false).expect("alice");
    let deleted = db.run_blocking(|c| {
        plover::views::Query::<microblog::User>::new()
            .filter(
                microblog::User::FIELDS.username,
                plover::query::Op::Eq,
                "alice",
            )
            .delete(c)
    });
    assert_eq!(deleted.expect("no table of permissions is needed"), 1);
}
