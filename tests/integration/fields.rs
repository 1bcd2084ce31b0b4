//! Fields that say what they accept (docs/reference.md, "Field constraints" and "Choices"): the
//! conformance app's Ticket, on every writer, in filters, in the schema's CHECKs and in the API
//! description.

use actix_web::test::TestRequest;
use plover_tests::*;
use serde_json::json;

fn refused_by_the_database(app: &TestApp, sql: &str) -> bool {
    let sql = sql.to_owned();
    app.db.run_blocking(move |c| c.batch_execute(&sql)).is_err()
}

#[actix_web::test]
async fn a_post_gets_the_defaults_and_every_field_out_of_bounds_is_named_at_once() {
    let app = TestApp::new().await;
    let created = app
        .post("/api/ticket/", json!({"title": "Printer on fire"}))
        .await
        .json_with(201);
    assert_eq!(created["priority"], 3);
    assert_eq!(created["status"], "open");
    assert_eq!(created["body"], "");
    assert_eq!(
        created["opened"],
        plover::value::today().format("%Y-%m-%d").to_string()
    );
    let resp = app
        .post(
            "/api/ticket/",
            json!({"title": " \t ", "priority": 9, "status": "pending"}),
        )
        .await;
    let fields = assert_fields(&resp, &["priority", "status", "title"]);
    assert_eq!(fields["title"], "must not be blank");
    assert_eq!(fields["priority"], "must be between 1 and 5");
    assert_eq!(fields["status"], "must be one of: open, closed");
    let long = "x".repeat(101);
    let resp = app.post("/api/ticket/", json!({"title": long})).await;
    assert_eq!(
        assert_fields(&resp, &["title"])["title"],
        "must have at most 100 characters"
    );
    // 100 characters of four bytes each are 100 characters.
    app.post("/api/ticket/", json!({"title": "😀".repeat(100)}))
        .await
        .expect(201);
    assert_eq!(app.count("ticket"), 2);
}

#[actix_web::test]
async fn an_update_out_of_bounds_writes_nothing() {
    let app = TestApp::new().await;
    let id = app
        .post("/api/ticket/", json!({"title": "t", "priority": 5}))
        .await
        .json_with(201)["id"]
        .clone();
    let uri = format!("/api/ticket/{id}/");
    for body in [
        json!({"priority": 0}),
        json!({"priority": 6, "title": "u"}),
        json!({"status": "Closed"}),
    ] {
        let resp = app
            .send(TestRequest::patch().uri(&uri).set_json(&body))
            .await;
        assert_eq!(resp.code(), 400, "{body}");
        let resp = app.put(&uri, body.clone()).await;
        assert_eq!(resp.code(), 400, "{body}");
    }
    assert_eq!(
        app.query_text("SELECT title || '/' || priority || '/' || status FROM ticket")
            .as_deref(),
        Some("t/5/open")
    );
    app.send(
        TestRequest::patch()
            .uri(&uri)
            .set_json(json!({"status": "closed", "priority": 1})),
    )
    .await
    .expect(200);
    assert_eq!(app.get(&uri).await.json_with(200)["status"], "closed");
}

#[actix_web::test]
async fn a_choice_filter_takes_only_its_choices() {
    let app = TestApp::new().await;
    for (title, status) in [("a", "open"), ("b", "closed"), ("c", "open")] {
        app.post("/api/ticket/", json!({"title": title, "status": status}))
            .await
            .expect(201);
    }
    let titles = |body: serde_json::Value| -> Vec<String> {
        body["objects"]
            .as_array()
            .expect("objects")
            .iter()
            .map(|o| o["title"].as_str().unwrap_or_default().to_owned())
            .collect()
    };
    assert_eq!(
        titles(
            app.get("/api/ticket/?status=open&ordering=title")
                .await
                .json_with(200)
        ),
        ["a", "c"]
    );
    assert_eq!(
        titles(
            app.get("/api/ticket/?status__in=closed,open&ordering=-title")
                .await
                .json_with(200)
        ),
        ["c", "b", "a"]
    );
    for bad in ["status=pending", "status__in=open,shut", "status__ne=OPEN"] {
        let resp = app.get(&format!("/api/ticket/?{bad}")).await;
        assert_param_error(&resp, bad.split('=').next().unwrap_or_default());
    }
}

#[actix_web::test]
async fn the_schema_checks_what_the_fields_declare() {
    let app = TestApp::new().await;
    let insert = |values: &str| {
        format!(
            "INSERT INTO ticket (title, priority, status, body, secret_note, opened) \
             VALUES ({values})"
        )
    };
    assert!(!refused_by_the_database(
        &app,
        &insert("'ok', 5, 'closed', '', '', '2026-01-01'")
    ));
    for values in [
        "'ok', 0, 'open', '', '', '2026-01-01'",
        "'ok', 6, 'open', '', '', '2026-01-01'",
        "'ok', 3, 'pending', '', '', '2026-01-01'",
        "'  ', 3, 'open', '', '', '2026-01-01'",
        "'', 3, 'open', '', '', '2026-01-01'",
    ] {
        assert!(refused_by_the_database(&app, &insert(values)), "{values}");
    }
    let long = format!("'{}', 3, 'open', '', '', '2026-01-01'", "é".repeat(101));
    assert!(refused_by_the_database(&app, &insert(&long)));
    let just = format!("'{}', 3, 'open', '', '', '2026-01-01'", "é".repeat(100));
    assert!(!refused_by_the_database(&app, &insert(&just)));
    assert_eq!(app.count("ticket"), 2);
}

#[actix_web::test]
async fn the_description_carries_the_constraints() {
    let app = TestApp::new().await;
    let doc = app.get("/api/openapi.json").await.json_with(200);
    let schemas = &doc["components"]["schemas"];
    let name = schemas
        .as_object()
        .expect("schemas")
        .keys()
        .find(|k| {
            k.to_lowercase().contains("ticket")
                && schemas[k.as_str()]["properties"]["priority"]["minimum"].is_number()
        })
        .cloned()
        .expect("a ticket schema with the constraints");
    let props = &schemas[name.as_str()]["properties"];
    assert_eq!(props["priority"]["minimum"], 1);
    assert_eq!(props["priority"]["maximum"], 5);
    assert_eq!(props["title"]["maxLength"], 100);
    assert_eq!(props["status"]["enum"], json!(["open", "closed"]));
}

#[actix_web::test]
async fn a_private_field_is_never_in_the_api_also_through_joins() {
    let app = TestApp::new().await;
    let resp = app
        .post("/api/ticket/", json!({"title": "t", "secret_note": "psst"}))
        .await;
    assert_eq!(
        assert_fields(&resp, &["secret_note"])["secret_note"],
        "this field cannot be written here"
    );
    app.sql(
        "INSERT INTO ticket (id, title, priority, status, body, secret_note, opened, parent_id) \
         VALUES (1, 'parent', 3, 'open', '', 'alice@example.com', '2026-01-01', NULL), \
                (2, 'child', 3, 'open', '', '', '2026-01-01', 1)",
    );
    let object = app.get("/api/ticket/1/").await.json_with(200);
    assert!(object.get("secret_note").is_none(), "{object}");
    for bad in [
        "secret_note=alice@example.com",
        "secret_note__like=alice%",
        "parent__secret_note__like=alice%",
        "parent__parent__secret_note=x",
    ] {
        let resp = app.get(&format!("/api/ticket/?{bad}")).await;
        assert_eq!(resp.code(), 400, "{bad}");
    }
    let resp = app.get("/api/ticket/?ordering=secret_note").await;
    assert_eq!(resp.code(), 400);
    let doc = app.get("/api/openapi.json").await.json_with(200);
    let text = doc.to_string();
    assert!(!text.contains("secret_note"), "the description names it");
}

#[actix_web::test]
async fn a_resource_that_shows_a_private_field_shows_it_alone() {
    use actix_web::App;
    use plover::prelude::*;
    let (db, _store) = fresh_database("");
    db.run_blocking(|conn| plover::schema::create_tables(conn, &models()))
        .expect("schema");
    let open = || Authentication::new(vec![]);
    let t = Ticket::FIELDS;
    let mut api = RestApi::new(db.clone());
    api.register_resource(Resource::<Ticket>::new().auth(open()))
        .register_resource(
            Resource::<Ticket>::new()
                .name("staff")
                .show([t.secret_note])
                .auth(open()),
        );
    let service = TestService::new(App::new().configure(api.setup())).await;
    let post = |uri: &str, body: serde_json::Value| TestRequest::post().uri(uri).set_json(body);
    let created = service
        .send(post(
            "/api/staff/",
            json!({"title": "parent", "secret_note": "alice@example.com"}),
        ))
        .await
        .json_with(201);
    assert_eq!(created["secret_note"], "alice@example.com");
    service
        .send(post(
            "/api/staff/",
            json!({"title": "child", "parent": created["id"]}),
        ))
        .await
        .expect(201);
    let get = |uri: &str| service.send(TestRequest::get().uri(uri));
    let found = get("/api/staff/?secret_note__like=alice%")
        .await
        .json_with(200);
    assert_eq!(found["objects"].as_array().map(Vec::len), Some(1));
    get("/api/staff/?ordering=-secret_note").await.expect(200);
    // Through a join, even on the resource that shows it; and nowhere else.
    assert_eq!(get("/api/staff/?parent__secret_note=x").await.code(), 400);
    assert_eq!(get("/api/ticket/?secret_note=x").await.code(), 400);
    let plain = get(&format!("/api/ticket/{}/", created["id"]))
        .await
        .json_with(200);
    assert!(plain.get("secret_note").is_none());
}

/// A service over a fresh database (the fixture's tables) serving the resources `register`
/// registers, with no authentication.
pub(crate) async fn serve_tickets(
    register: impl FnOnce(&mut plover::prelude::RestApi),
) -> (plover::prelude::Database, TestService, Store) {
    use actix_web::App;
    let (db, store) = fresh_database("");
    db.run_blocking(|conn| plover::schema::create_tables(conn, &models()))
        .expect("schema");
    let mut api = plover::prelude::RestApi::new(db.clone())
        .default_auth(plover::prelude::Authentication::new(vec![]));
    register(&mut api);
    let service = TestService::new(App::new().configure(api.setup())).await;
    (db, service, store)
}

/// The stored private note of the ticket `id`.
fn stored_note(db: &plover::prelude::Database, id: &serde_json::Value) -> String {
    use plover::prelude::RestModel as _;
    let id = id.as_i64().expect("an id");
    let ticket = db.run_blocking(move |c| Ticket::load_pk(c, id));
    ticket.expect("a query").expect("the ticket").secret_note
}

#[actix_web::test]
async fn a_write_only_private_field_is_written_and_never_read() {
    use actix_web::http::Method;
    use plover::prelude::*;
    let t = Ticket::FIELDS;
    let every = [
        Method::GET,
        Method::POST,
        Method::PUT,
        Method::PATCH,
        Method::DELETE,
    ];
    let (db, service, _store) = serve_tickets(|api| {
        api.register_resource(
            Resource::<Ticket>::new()
                .name("intake")
                .write_only([t.secret_note])
                // The included resource hides `body`, write-only there.
                .include(t.parent_id, Resource::<Ticket>::new().write_only([t.body]))
                .nested_children(
                    "children",
                    t.parent_id,
                    Resource::<Ticket>::new().write_only([t.secret_note]),
                )
                .aggregates(true)
                .allowed_methods(every),
        )
        // `filter_fields` naming it does not open it to filters.
        .register_resource(
            Resource::<Ticket>::new()
                .name("listed")
                .write_only([t.secret_note])
                .filter_fields([t.secret_note, t.title]),
        );
    })
    .await;
    let no_note = |object: &serde_json::Value| {
        let text = object.to_string();
        assert!(!text.contains("secret_note"), "{text}");
        assert!(!text.contains("@example.com"), "{text}");
    };
    // Create: accepted and stored, not in the answer, nor in nested children's.
    let body = json!({"title": "parent", "secret_note": "alice@example.com",
        "children": [{"title": "child", "secret_note": "carol@example.com"}]});
    let req = TestRequest::post().uri("/api/intake/").set_json(body);
    let created = service.send(req).await.json_with(201);
    no_note(&created);
    assert_eq!(stored_note(&db, &created["id"]), "alice@example.com");
    assert_eq!(
        stored_note(&db, &created["children"][0]["id"]),
        "carol@example.com"
    );
    // Bulk create, PUT and PATCH: the same.
    let bulk = json!([{"title": "b1", "secret_note": "b1@example.com", "parent": created["id"]},
        {"title": "b2", "secret_note": "b2@example.com"}]);
    let req = TestRequest::post().uri("/api/intake/").set_json(bulk);
    let many = service.send(req).await.json_with(201);
    no_note(&many);
    assert_eq!(stored_note(&db, &many[0]["id"]), "b1@example.com");
    let uri = format!("/api/intake/{}/", created["id"]);
    for (method, note) in [
        (Method::PUT, "put@example.com"),
        (Method::PATCH, "patch@example.com"),
    ] {
        let req = json_request(method, &uri, &json!({"secret_note": note}));
        no_note(&service.send(req).await.json_with(200));
        assert_eq!(stored_note(&db, &created["id"]), note);
    }
    // Reads: not in objects, lists, nor the included parent.
    let get = |uri: String| service.send(TestRequest::get().uri(&uri));
    no_note(&get(uri.clone()).await.json_with(200));
    no_note(&get("/api/intake/".into()).await.json_with(200));
    let child = format!("/api/intake/{}/", many[0]["id"]);
    let parent = &get(child).await.json_with(200)["parent"];
    assert_eq!(parent["title"], "parent", "{parent}");
    assert!(parent.get("body").is_none(), "{parent}");
    let resp = get("/api/intake/?parent__body=x".into()).await;
    assert_eq!(resp.code(), 400, "{}", resp.text());
    // Never filtered, ordered, named in `fields=`, aggregated, nor reached through a join.
    for query in [
        "secret_note=patch@example.com",
        "secret_note__like=patch%25",
        "ordering=secret_note",
        "ordering=-secret_note",
        "fields=secret_note",
        "fields=id,parent.secret_note",
        "parent__secret_note=x",
        "or=(secret_note=x,id=1)",
    ] {
        let resp = get(format!("/api/intake/?{query}")).await;
        assert_eq!(resp.code(), 400, "{query}: {}", resp.text());
        let resp = get(format!("/api/listed/?{query}")).await;
        assert_eq!(resp.code(), 400, "listed {query}: {}", resp.text());
    }
    for query in [
        "group=secret_note",
        "min=secret_note",
        "max=secret_note",
        "count&secret_note=x",
    ] {
        let resp = get(format!("/api/intake/aggregate/?{query}")).await;
        assert_eq!(resp.code(), 400, "{query}: {}", resp.text());
    }
    // The description: `writeOnly` in request bodies, absent from the objects answered.
    let doc = get("/api/openapi.json".into()).await.json_with(200);
    let schemas = doc["components"]["schemas"].as_object().expect("schemas");
    let mut requests = 0;
    for (name, schema) in schemas {
        let note = &schema["properties"]["secret_note"];
        if name.ends_with(".create") || name.ends_with(".update") {
            assert_eq!(note["writeOnly"], true, "{name}: {schema}");
            requests += 1;
        } else {
            assert!(note.is_null(), "{name}: {schema}");
        }
    }
    // intake and listed, create and update, and the nested child's create.
    assert!(requests >= 5, "{requests}");
}

#[actix_web::test]
async fn a_write_only_field_is_accepted_by_an_upsert() {
    use plover::prelude::*;
    let (db, service, _store) = serve_tickets(|api| {
        api.register_resource(
            Resource::<User>::new()
                .write_only([User::FIELDS.email])
                .upsert(true),
        );
    })
    .await;
    let put = |body: serde_json::Value| {
        service.send(json_request(
            actix_web::http::Method::PUT,
            "/api/user/?on=username",
            &body,
        ))
    };
    let ann = json!({"username": "ann", "password": "", "email": "ann@example.com"});
    let created = put(ann).await.json_with(201);
    assert!(created.get("email").is_none(), "{created}");
    let updated = put(json!({"username": "ann", "email": "new@example.com"}))
        .await
        .json_with(200);
    assert!(updated.get("email").is_none(), "{updated}");
    let email = db.run_blocking(|c| {
        plover::views::Query::<User>::new()
            .filter(User::FIELDS.username, plover::query::Op::Eq, "ann")
            .first(c)
    });
    assert_eq!(
        email.expect("a query").expect("ann").email,
        "new@example.com"
    );
    // The unique field an upsert finds rows by must be one clients may filter.
    let resp = put(json!({"username": "x", "email": "ann@example.com"})).await;
    assert_eq!(resp.code(), 201, "{}", resp.text());
    let resp = service
        .send(json_request(
            actix_web::http::Method::PUT,
            "/api/user/?on=email",
            &json!({"username": "y", "email": "ann@example.com"}),
        ))
        .await;
    assert_eq!(resp.code(), 400, "{}", resp.text());
}

#[test]
#[should_panic(expected = "cannot be write-only here: `show` shows it")]
fn a_field_both_shown_and_write_only_stops_the_registration() {
    use plover::prelude::*;
    let db = Database::from_url("sqlite://:memory:?max_connections=1").expect("a database");
    let t = Ticket::FIELDS;
    RestApi::new(db).register_resource(
        Resource::<Ticket>::new()
            .show([t.secret_note])
            .write_only([t.secret_note]),
    );
}
