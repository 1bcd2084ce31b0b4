//! The history (docs/admin.md#history): every add, change, delete and bulk delete made in the
//! admin is recorded with who, when and what changed, private and write-only values masked, in
//! the write's transaction; REST resources that opt in record their writes too; each object
//! has a History page, and the dashboard lists the latest changes.

use actix_web::http::Method;
use plover::history::{FieldChange, HistoryEntry, MASK};
use plover::views::Query;
use plover::RestModel;
use plover_tests::{basic, json_request, unescape_html, AModel, BModel, TestApp, CHAINS};
use serde_json::{json, Value};

use super::admin::{admin, post, see_other};

/// Every history entry, oldest first.
fn entries(app: &TestApp) -> Vec<HistoryEntry> {
    let oldest_first = Query::<HistoryEntry>::new().order_by(HistoryEntry::FIELDS.id);
    app.db
        .run_blocking(|c| oldest_first.all(c))
        .expect("the history")
}

/// The change of `field` in `entry`.
#[track_caller]
fn change(entry: &HistoryEntry, field: &str) -> FieldChange {
    (entry.field_changes().into_iter())
        .find(|c| c.field == field)
        .unwrap_or_else(|| panic!("no change of {field}: {}", entry.changes))
}

/// The fields `entry` records, in order.
fn fields(entry: &HistoryEntry) -> Vec<String> {
    entry.field_changes().into_iter().map(|c| c.field).collect()
}

/// The rows of the History page's table (its `<tbody>`), as HTML.
fn history_rows(html: &str) -> Vec<&str> {
    let Some(start) = html.find("<tbody>") else {
        return Vec::new();
    };
    let body = &html[start..html.find("</tbody>").expect("the table's end")];
    body.split("<tr>").skip(1).collect()
}

#[actix_web::test]
async fn admin_adds_changes_and_deletes_are_recorded_with_who_when_and_what() {
    let app = TestApp::new().await;
    let root = admin(&app).await;
    let long = "x".repeat(1500);
    let resp = post(
        &root,
        "/admin/ticket/add/",
        &[
            ("title", "Printer <b>jam</b>"),
            ("body", &long),
            ("secret_note", "call 555-0199"),
        ],
    )
    .await;
    assert_eq!(see_other(&resp), "/admin/ticket/");
    let id = app.query_i64("SELECT id FROM ticket");
    let all = entries(&app);
    assert_eq!(all.len(), 1);
    let added = &all[0];
    assert_eq!(added.action, "add");
    assert_eq!(
        (added.user_id, added.username.as_deref()),
        (Some(1), Some("root"))
    );
    assert_eq!(added.source, "admin");
    assert_eq!(
        (added.object_table.as_str(), added.object_id),
        ("ticket", id)
    );
    assert_eq!(added.object_text, "Printer <b>jam</b>");
    let age = chrono::Utc::now().naive_utc() - added.created;
    assert!(age.num_seconds().abs() < 300, "UTC: {}", added.created);
    // Every field with a value, not the key nor the empty parent; the new values only.
    assert_eq!(
        fields(added),
        [
            "title",
            "priority",
            "status",
            "body",
            "secret_note",
            "opened"
        ]
    );
    let title = change(added, "title");
    assert_eq!(
        (title.old, title.new),
        (None, Some(json!("Printer <b>jam</b>")))
    );
    assert_eq!(change(added, "status").new, Some(json!("open")));
    assert_eq!(change(added, "secret_note").new, Some(json!(MASK)));
    // A long value is cut, and says how long it was.
    let body = change(added, "body").new.expect("the body");
    assert_eq!(
        body.as_str(),
        Some(format!("{}… (1500 characters)", "x".repeat(1000)).as_str())
    );
    // The private value is stored nowhere in the history.
    let stored = app.query_i64("SELECT COUNT(*) FROM plover_history WHERE changes LIKE '%555%'");
    assert_eq!(stored, 0);

    // The edit page links to the History page.
    let edit = format!("/admin/ticket/{id}/");
    let html = root.get(&edit).await.expect(200).text();
    let history = format!("/admin/ticket/{id}/history/");
    assert!(html.contains(&format!("href=\"{history}\"")), "{html}");

    // A change: the fields that changed, from what to what.
    let resp = post(
        &root,
        &edit,
        &[
            ("title", "Printer fixed"),
            ("status", "closed"),
            ("secret_note", "call 555-0100"),
            ("priority", "3"),
        ],
    )
    .await;
    see_other(&resp);
    let all = entries(&app);
    assert_eq!(all.len(), 2);
    let changed = &all[1];
    assert_eq!(changed.action, "change");
    assert_eq!(fields(changed), ["title", "status", "secret_note"]);
    let title = change(changed, "title");
    assert_eq!(
        (title.old, title.new),
        (
            Some(json!("Printer <b>jam</b>")),
            Some(json!("Printer fixed"))
        )
    );
    let status = change(changed, "status");
    assert_eq!(
        (status.old, status.new),
        (Some(json!("open")), Some(json!("closed")))
    );
    let note = change(changed, "secret_note");
    assert_eq!((note.old, note.new), (Some(json!(MASK)), Some(json!(MASK))));
    assert_eq!(changed.object_text, "Printer fixed");

    // A save that changes nothing records nothing.
    see_other(&post(&root, &edit, &[("title", "Printer fixed")]).await);
    assert_eq!(entries(&app).len(), 2);

    // A delete: the values removed.
    let resp = post(&root, &format!("/admin/ticket/{id}/delete/"), &[]).await;
    assert_eq!(see_other(&resp), "/admin/ticket/");
    let all = entries(&app);
    assert_eq!(all.len(), 3);
    let deleted = &all[2];
    assert_eq!(deleted.action, "delete");
    let title = change(deleted, "title");
    assert_eq!((title.old, title.new), (Some(json!("Printer fixed")), None));
    assert_eq!(change(deleted, "secret_note").old, Some(json!(MASK)));
    assert!(all.windows(2).all(|w| w[0].created <= w[1].created));

    // The History page of the deleted row: newest first, escaped, without an edit link.
    let html = root.get(&history).await.expect(200).text();
    let rows = history_rows(&html);
    assert_eq!(rows.len(), 3, "{html}");
    assert!(rows[0].contains("Deleted") && rows[1].contains("Changed"));
    assert!(rows[2].contains("Added") && rows[2].contains("root"));
    assert!(html.contains("History of Printer fixed"), "{html}");
    assert!(html.contains("This row no longer exists."), "{html}");
    assert!(!html.contains(&format!("href=\"{edit}\"")), "{html}");
    assert!(!html.contains("<b>jam"), "escaped: {html}");
    assert!(
        unescape_html(rows[1]).contains("Printer <b>jam</b>"),
        "{html}"
    );
    assert!(rows[1].contains(MASK) && !html.contains("555"), "{html}");

    // The dashboard's latest changes link to it, newest first.
    let html = root.get("/admin/").await.expect(200).text();
    let recent = &html[html.find("Recent changes").expect("the latest changes")..];
    assert_eq!(recent.matches(&format!("href=\"{history}\"")).count(), 3);
    let first = &recent[recent.find("<li>").expect("an entry")..];
    assert!(
        first[..first.find("</li>").unwrap()].contains("deleted"),
        "{recent}"
    );
}

#[actix_web::test]
async fn a_new_password_is_recorded_as_changed_never_with_its_hash() {
    let app = TestApp::new().await;
    let root = admin(&app).await;
    let pleb = app.user("pleb", "pw");
    let resp = post(
        &root,
        &format!("/admin/user/{pleb}/"),
        &[
            ("username", "pleb"),
            ("active", "1"),
            ("new_password", "a new secret"),
        ],
    )
    .await;
    see_other(&resp);
    let all = entries(&app);
    assert_eq!(all.len(), 1);
    assert_eq!(fields(&all[0]), ["password"]);
    let password = change(&all[0], "password");
    assert_eq!(
        (password.old, password.new),
        (Some(json!(MASK)), Some(json!(MASK)))
    );
    let hash = app
        .query_text(&format!("SELECT password FROM \"user\" WHERE id = {pleb}"))
        .expect("a hash");
    assert!(hash.starts_with("$2"), "{hash}");
    assert!(!all[0].changes.contains("$2"), "{}", all[0].changes);
}

#[actix_web::test]
async fn a_bulk_delete_records_each_selected_row() {
    let app = TestApp::with_seed(&format!(
        "{CHAINS} INSERT INTO amodel (id, a_field) VALUES (3, 'a3'), (4, 'a4');"
    ))
    .await;
    let root = admin(&app).await;
    let resp = post(
        &root,
        "/admin/amodel/",
        &[
            ("action", "delete"),
            ("id", "1"),
            ("id", "3"),
            ("id", "99"),
            ("confirm", "yes"),
        ],
    )
    .await;
    see_other(&resp);
    assert_eq!(app.count("amodel"), 2);
    // The selected rows that existed; the dependents that went with them are not listed.
    let all = entries(&app);
    let mut deleted: Vec<(String, i64, Option<Value>)> = all
        .iter()
        .map(|e| {
            assert_eq!((e.action.as_str(), e.user_id), ("delete", Some(1)));
            (
                e.object_table.clone(),
                e.object_id,
                change(e, "a_field").old,
            )
        })
        .collect();
    deleted.sort_by_key(|d| d.1);
    assert_eq!(
        deleted,
        [
            ("amodel".to_owned(), 1, Some(json!("a1"))),
            ("amodel".to_owned(), 3, Some(json!("a3")))
        ]
    );
}

#[actix_web::test]
async fn a_failed_write_records_nothing_and_a_failed_record_writes_nothing() {
    let app = TestApp::with_seed("INSERT INTO amodel (id, a_field) VALUES (1, 'a1');").await;
    let root = admin(&app).await;
    app.user("poster", "pw");
    let creds = basic("poster", "pw");

    // Refused by a constraint, by the database's unique index: neither writes nor records.
    post(&root, "/admin/ticket/add/", &[("title", "   ")])
        .await
        .expect(400);
    let created = app
        .send(
            json_request(
                Method::POST,
                "/api/tracked/",
                &json!({"name": "once", "qty": 1}),
            )
            .insert_header(creds.clone()),
        )
        .await;
    created.expect(201);
    let again = app
        .send(
            json_request(
                Method::POST,
                "/api/tracked/",
                &json!({"name": "once", "qty": 2}),
            )
            .insert_header(creds.clone()),
        )
        .await;
    again.expect(409);
    assert_eq!(app.count("ticket"), 0);
    assert_eq!(app.count("sample"), 1);
    assert_eq!(entries(&app).len(), 1, "the first POST only");

    // Without the history table, every recorded write fails whole.
    let token = root.csrf("/admin/").await;
    app.sql("DROP TABLE plover_history");
    let writes: [(&str, &[(&str, &str)]); 4] = [
        ("/admin/amodel/add/", &[("a_field", "fresh")]),
        ("/admin/amodel/1/", &[("a_field", "changed")]),
        ("/admin/amodel/1/delete/", &[]),
        (
            "/admin/amodel/",
            &[("action", "delete"), ("id", "1"), ("confirm", "yes")],
        ),
    ];
    for (uri, fields) in writes {
        let mut form = fields.to_vec();
        form.push(("csrf_token", &token));
        root.post_form(uri, &form).await.expect(500);
    }
    assert_eq!(
        app.query_text("SELECT a_field FROM amodel").as_deref(),
        Some("a1")
    );
    assert_eq!(app.count("amodel"), 1);
    let refused = app
        .send(
            json_request(
                Method::POST,
                "/api/tracked/",
                &json!({"name": "twice", "qty": 1}),
            )
            .insert_header(creds),
        )
        .await;
    refused.expect(500);
    assert_eq!(app.count("sample"), 1);
}

#[actix_web::test]
async fn rest_writes_are_recorded_where_the_resource_opts_in() {
    let app = TestApp::new().await;
    let poster = app.user("poster", "pw");
    let creds = basic("poster", "pw");
    let send = |method: Method, uri: String, body: Value| {
        let req = json_request(method, &uri, &body).insert_header(creds.clone());
        app.send(req)
    };
    let created = send(
        Method::POST,
        "/api/tracked/".into(),
        json!({"name": "a", "qty": 1}),
    )
    .await
    .json_with(201);
    let id = created["id"].as_i64().unwrap();
    let path = format!("/api/tracked/{id}/");
    send(Method::PUT, path.clone(), json!({"qty": 2}))
        .await
        .expect(200);
    send(Method::PATCH, path.clone(), json!({"name": "b"}))
        .await
        .expect(200);
    // A PUT that changes nothing records nothing.
    send(Method::PUT, path.clone(), json!({"qty": 2}))
        .await
        .expect(200);
    send(Method::DELETE, path, json!({})).await.expect(200);

    let all = entries(&app);
    let actions: Vec<&str> = all.iter().map(|e| e.action.as_str()).collect();
    assert_eq!(actions, ["add", "change", "change", "delete"]);
    for e in &all {
        assert_eq!(e.user_id, Some(poster));
        assert_eq!(e.username.as_deref(), Some("poster"));
        assert_eq!(e.source, "api");
        assert_eq!((e.object_table.as_str(), e.object_id), ("sample", id));
    }
    assert_eq!(change(&all[0], "name").new, Some(json!("a")));
    assert_eq!(fields(&all[1]), ["qty"]);
    let qty = change(&all[1], "qty");
    assert_eq!((qty.old, qty.new), (Some(json!(1)), Some(json!(2))));
    let name = change(&all[2], "name");
    assert_eq!((name.old, name.new), (Some(json!("a")), Some(json!("b"))));
    assert_eq!(change(&all[3], "name").old, Some(json!("b")));

    // Anonymous where the authentication gives no user.
    app.post("/api/tracked_open/", json!({"name": "anon", "qty": 1}))
        .await
        .expect(201);
    let last = entries(&app).pop().unwrap();
    assert_eq!((last.user_id, last.username), (None, None));
    assert_eq!(last.action, "add");

    // A resource without the option records nothing.
    let before = entries(&app).len();
    let created = send(
        Method::POST,
        "/api/patchable/".into(),
        json!({"name": "p", "qty": 1}),
    )
    .await
    .json_with(201);
    let path = format!("/api/patchable/{}/", created["id"]);
    send(Method::PUT, path.clone(), json!({"qty": 5}))
        .await
        .expect(200);
    send(Method::DELETE, path, json!({})).await.expect(200);
    assert_eq!(entries(&app).len(), before);
}

/// An entry of `amodel` 1 made by hand, numbered `n`.
fn seeded_entry(n: usize) -> String {
    format!(
        "('2024-01-01 00:00:{:02}', 7, 'seeder', 'admin', 'amodel', 1, 'a1', 'change', \
         '[{{\"field\":\"a_field\",\"old\":\"<i>{n}</i>\",\"new\":\"v{n}\"}}]')",
        n % 60
    )
}

#[actix_web::test]
async fn the_history_page_pages_newest_first_and_hides_what_the_forms_hide() {
    let rows: Vec<String> = (1..=55).map(seeded_entry).collect();
    let app = TestApp::with_seed(&format!(
        "INSERT INTO amodel (id, a_field) VALUES (1, 'a1');
         INSERT INTO plover_history (created, user_id, username, source, object_table, \
         object_id, object_text, action, changes) VALUES {};
         INSERT INTO plover_history (created, user_id, username, source, object_table, \
         object_id, object_text, action, changes) VALUES ('2024-01-02 00:00:00', NULL, NULL, \
         'api', 'user', 1, 'root', 'change', \
         '[{{\"field\":\"password\",\"old\":\"plain\",\"new\":\"text\"}},\
         {{\"field\":\"email\",\"old\":\"a@x\",\"new\":\"b@x\"}}]');",
        rows.join(", ")
    ))
    .await;
    let root = admin(&app).await;

    let html = root
        .get("/admin/amodel/1/history/")
        .await
        .expect(200)
        .text();
    let rows = history_rows(&html);
    assert_eq!(rows.len(), 50);
    assert!(rows[0].contains("v55") && rows[49].contains("v6"), "{html}");
    assert!(!rows[0].contains("<i>"), "escaped: {}", rows[0]);
    assert!(unescape_html(rows[0]).contains("<i>55</i>"), "{}", rows[0]);
    assert!(rows[0].contains("seeder") && rows[0].contains("2024-01-01 00:00:55"));
    assert!(
        html.contains("href=\"/admin/amodel/1/history/?page=2\""),
        "{html}"
    );
    assert!(
        html.contains("href=\"/admin/amodel/1/\""),
        "the edit page: {html}"
    );
    let html = (root.get("/admin/amodel/1/history/?page=2").await)
        .expect(200)
        .text();
    let rows = history_rows(&html);
    assert_eq!(rows.len(), 5);
    assert!(rows[4].contains("v1"), "{html}");
    assert!(
        html.contains("href=\"/admin/amodel/1/history/?page=1\""),
        "{html}"
    );
    for bad in ["0", "-1", "x"] {
        let uri = format!("/admin/amodel/1/history/?page={bad}");
        root.get(&uri).await.expect(400);
    }

    // A value of a field the model admin's forms hide is not shown, even where it was stored;
    // a REST write by no one reads as anonymous, through the API.
    let html = root.get("/admin/user/1/history/").await.expect(200).text();
    let rows = history_rows(&html);
    assert_eq!(rows.len(), 1);
    assert!(
        !rows[0].contains("plain") && rows[0].contains(MASK),
        "{html}"
    );
    assert!(rows[0].contains("a@x") && rows[0].contains("b@x"), "{html}");
    assert!(rows[0].contains("anonymous") && rows[0].contains("via api"));

    // No row and no history: 404; not a key: 404; a POST: 405.
    root.get("/admin/amodel/2/history/").await.expect(404);
    root.get("/admin/amodel/x/history/").await.expect(404);
    post(&root, "/admin/amodel/1/history/", &[])
        .await
        .expect(405);

    // The dashboard lists the 10 newest changes of the admin's models.
    let html = root.get("/admin/").await.expect(200).text();
    let recent = &html[html.find("class=\"recent-list\"").expect("the list")..];
    let recent = &recent[..recent.find("</ul>").unwrap()];
    let items: Vec<&str> = recent.split("<li>").skip(1).collect();
    assert_eq!(items.len(), 10, "{recent}");
    assert!(items[0].contains("href=\"/admin/user/1/history/\"") && items[0].contains("anonymous"));
    assert!(items[1].contains("href=\"/admin/amodel/1/history/\"") && items[1].contains("seeder"));

    // Only administrators see it.
    app.user("pleb", "pw");
    let pleb = app.browser();
    pleb.login("pleb", "pw").await.expect(302);
    pleb.get("/admin/amodel/1/history/").await.expect(403);
    let anonymous = app.get("/admin/amodel/1/history/").await;
    anonymous.expect(302);
}

#[test]
fn the_history_table_is_in_the_schema_of_both_engines() {
    use plover::db::Engine;
    for engine in [Engine::Sqlite, Engine::Postgres] {
        let sql = plover::schema::script(&[HistoryEntry::meta()], engine).unwrap();
        assert!(
            sql.starts_with("CREATE TABLE IF NOT EXISTS \"plover_history\""),
            "{sql}"
        );
        assert!(
            sql.contains(
                "CREATE INDEX IF NOT EXISTS \"plover_history_object_table_object_id_id\" ON \
                 \"plover_history\" (\"object_table\", \"object_id\", \"id\")"
            ),
            "{sql}"
        );
        assert!(
            sql.contains("\"action\" IN ('add', 'change', 'delete')"),
            "{sql}"
        );
    }
}

#[actix_web::test]
async fn an_object_whose_text_is_blank_reads_as_its_model_and_key_wherever_the_admin_names_it() {
    // amodel's text is its `a_field`; entry 9 was recorded (elsewhere) with no text at all.
    let app = TestApp::with_seed(
        "INSERT INTO plover_history (created, user_id, username, source, object_table, \
         object_id, object_text, action, changes) VALUES ('2024-01-02 00:00:00', NULL, NULL, \
         'api', 'amodel', 9, ' ', 'delete', '[]');",
    )
    .await;
    let root = admin(&app).await;
    let location = see_other(&post(&root, "/admin/amodel/add/", &[("a_field", " \t ")]).await);
    assert_eq!(location, "/admin/amodel/");
    let id = app.query_i64("SELECT MAX(id) FROM amodel");
    let name = format!("amodel #{id}");
    assert_eq!(entries(&app).last().expect("the add").object_text, name);

    let dashboard = root.get("/admin/").await.expect(200).text();
    assert!(
        dashboard.contains(&format!("/history/\">{name}</a>")),
        "{dashboard}"
    );
    assert!(
        dashboard.contains("/admin/amodel/9/history/\">amodel #9</a>"),
        "{dashboard}"
    );
    assert!(!dashboard.contains("\"></a>"), "an empty link: {dashboard}");
    let pages = [
        (format!("/admin/amodel/{id}/"), format!("Edit {name}")),
        (
            format!("/admin/amodel/{id}/delete/"),
            format!("<strong>{name}</strong>"),
        ),
        (
            format!("/admin/amodel/{id}/history/"),
            format!("History of {name}"),
        ),
        (
            "/admin/amodel/9/history/".into(),
            "History of amodel #9".into(),
        ),
        ("/admin/bmodel/add/".into(), format!("{name} (#{id})")),
    ];
    for (page, text) in pages {
        let html = root.get(&page).await.expect(200).text();
        assert!(html.contains(&text), "{page}: {html}");
    }
    // A type-ahead lookup of the foreign key names it so too.
    let mut custom = plover::admin::Admin::new(&app.auth);
    custom.register(
        plover::admin::ModelAdmin::<BModel>::new()
            .foreign_key_lookup(BModel::FIELDS.a_id, AModel::FIELDS.a_field),
    );
    let service = plover_tests::TestService::new(
        actix_web::App::new()
            .wrap(app.auth.session_middleware())
            .configure(app.auth.setup())
            .configure(custom.setup()),
    )
    .await;
    let browser = service.browser();
    browser.login("root", "pw").await.expect(302);
    let found = browser
        .get("/admin/bmodel/lookup/a_id/")
        .await
        .json_with(200);
    assert_eq!(
        found["objects"],
        json!([{"id": id, "text": name}]),
        "{found}"
    );
}
