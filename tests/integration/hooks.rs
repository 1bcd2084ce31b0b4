//! docs/reference.md#hooks: several hook sets on one resource (`.hooks(a).hooks(b)`) all run,
//! each kind of hook composed as documented.

use actix_web::http::Method;
use actix_web::test::TestRequest;
use plover::prelude::*;
use plover::query::Op;
use plover::rest::{Context, Data, HashPassword, Hooks, Scope};
use plover_conformance_app::models::TicketChanges;
use plover_tests::*;
use serde_json::{json, Map, Value};

use super::fields::serve_tickets;

/// The first set: only tickets of priority 2 or more; adds `"a": 1`; trims titles (and
/// refuses `"stop"`); refuses to change a closed ticket.
struct First;

impl Hooks<Ticket> for First {
    fn get_query(&self, _cx: &Context<'_>, scope: &mut Scope<Ticket>) {
        scope.filter(Ticket::FIELDS.priority, Op::Gte, 2);
    }

    fn prepare_data(&self, _cx: &Context<'_>, _obj: &Ticket, data: &mut Data<'_>) {
        data.insert("a", 1);
    }

    fn save_object(
        &self,
        _cx: &Context<'_>,
        changes: &mut TicketChanges,
        _raw: &Map<String, Value>,
    ) -> Result<(), Error> {
        if let Some(title) = changes.title.as_mut() {
            if title.trim() == "stop" {
                return Err(Error::field("title", "stopped by the first set"));
            }
            *title = title.trim().to_owned();
        }
        Ok(())
    }

    fn check_put(&self, _cx: &Context<'_>, obj: &Ticket) -> bool {
        obj.status != Status::Closed
    }
}

/// The second set: only tickets of priority 4 or less; adds `"b"`, one more than the `"a"`
/// the first set added; appends `!` to titles; refuses to delete a ticket of priority 4.
struct Second;

impl Hooks<Ticket> for Second {
    fn get_query(&self, _cx: &Context<'_>, scope: &mut Scope<Ticket>) {
        scope.filter(Ticket::FIELDS.priority, Op::Lte, 4);
    }

    fn prepare_data(&self, _cx: &Context<'_>, _obj: &Ticket, data: &mut Data<'_>) {
        let a = data.get("a").and_then(Value::as_i64).unwrap_or(-1);
        data.insert("b", a + 1);
    }

    fn save_object(
        &self,
        _cx: &Context<'_>,
        changes: &mut TicketChanges,
        _raw: &Map<String, Value>,
    ) -> Result<(), Error> {
        if let Some(title) = changes.title.as_mut() {
            title.push('!');
        }
        Ok(())
    }

    fn check_delete(&self, _cx: &Context<'_>, obj: &Ticket) -> bool {
        obj.priority != 4
    }
}

#[actix_web::test]
async fn every_hook_set_of_a_resource_runs_in_order() {
    let every = [Method::GET, Method::POST, Method::PUT, Method::DELETE];
    let (db, service, _store) = serve_tickets(|api| {
        api.register_resource(
            Resource::<Ticket>::new()
                .hooks(First)
                .hooks(Second)
                .allowed_methods(every),
        );
    })
    .await;
    let send =
        |method: Method, uri: &str, body: Value| service.send(json_request(method, uri, &body));
    // save_object: the first set, then the second on what the first left.
    let created = send(
        Method::POST,
        "/api/ticket/",
        json!({"title": "  hello ", "priority": 3}),
    )
    .await
    .json_with(201);
    assert_eq!(created["title"], "hello!");
    // prepare_data: the second set sees the key the first added.
    assert_eq!((&created["a"], &created["b"]), (&json!(1), &json!(2)));
    // The first set's error answers, and the second never runs: nothing is written.
    let resp = send(Method::POST, "/api/ticket/", json!({"title": "stop"})).await;
    assert_eq!(
        assert_fields(&resp, &["title"])["title"],
        "stopped by the first set"
    );
    db.run_blocking(|c| {
        c.batch_execute(
            "INSERT INTO ticket (title, priority, status, body, secret_note, opened) VALUES \
             ('one', 1, 'open', '', '', '2026-01-01'), ('five', 5, 'open', '', '', '2026-01-01'), \
             ('four', 4, 'closed', '', '', '2026-01-01')",
        )
    })
    .expect("rows");
    // get_query: the conditions of both sets apply.
    let list = service
        .send(TestRequest::get().uri("/api/ticket/?ordering=id"))
        .await
        .json_with(200);
    let titles: Vec<&Value> = list["objects"]
        .as_array()
        .expect("objects")
        .iter()
        .map(|o| &o["title"])
        .collect();
    assert_eq!(titles, [&json!("hello!"), &json!("four")]);
    let id_of = |title: &str| {
        let title = title.to_owned();
        let found = db.run_blocking(move |c| {
            plover::views::Query::<Ticket>::new()
                .filter(Ticket::FIELDS.title, Op::Eq, title)
                .first(c)
        });
        found.expect("a query").expect("the ticket").id
    };
    for hidden in ["one", "five"] {
        let uri = format!("/api/ticket/{}/", id_of(hidden));
        assert_eq!(service.send(TestRequest::get().uri(&uri)).await.code(), 404);
    }
    // check_*: a refusal of either set is a 403.
    let four = format!("/api/ticket/{}/", id_of("four"));
    assert_eq!(
        send(Method::PUT, &four, json!({"title": "x"})).await.code(),
        403
    );
    assert_eq!(send(Method::DELETE, &four, json!({})).await.code(), 403);
    let hello = format!("/api/ticket/{}/", created["id"]);
    let put = send(Method::PUT, &hello, json!({"title": "again"})).await;
    assert_eq!(put.json_with(200)["title"], "again!");
    send(Method::DELETE, &hello, json!({})).await.expect(200);
}

/// Adds the user's initial to each user object.
struct Initial;

impl Hooks<User> for Initial {
    fn prepare_data(&self, _cx: &Context<'_>, user: &User, data: &mut Data<'_>) {
        data.insert("initial", user.username.chars().next().map(String::from));
    }

    fn reads_hidden_fields(&self) -> bool {
        false
    }
}

#[actix_web::test]
async fn the_ready_password_hooks_take_another_set_beside_them() {
    let (db, _store) = fresh_database("");
    db.run_blocking(|conn| plover::schema::create_tables(conn, &models()))
        .expect("schema");
    let auth = Auth::<User>::new(db.clone()).cost(4);
    let mut api = RestApi::new(db.clone()).default_auth(Authentication::new(vec![]));
    api.register_resource(
        Resource::<User>::new()
            .write_only([User::FIELDS.email])
            .hooks(HashPassword::new(&auth))
            .hooks(Initial),
    );
    let service = TestService::new(actix_web::App::new().configure(api.setup())).await;
    let body = json!({"username": "zoe", "password": "a passphrase", "email": "z@example.com"});
    let created = service
        .send(json_request(Method::POST, "/api/user/", &body))
        .await
        .json_with(201);
    assert_eq!(created["initial"], "z");
    assert!(created.get("email").is_none() && created.get("password").is_none());
    let zoe = db
        .run_blocking(|c| auth.find_user(c, "zoe"))
        .expect("a query")
        .expect("zoe");
    assert!(zoe.password != "a passphrase" && zoe.check_password("a passphrase"));
    assert_eq!(zoe.email, "z@example.com");
}
