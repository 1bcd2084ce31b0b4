//! docs/admin.md#permissions: the admin admits superusers and the holders of a model
//! permission on one of its models, and shows each only what their permissions allow; every
//! forged request past that is 403 and writes nothing.

use plover::permissions::{self, Holder};
use plover_tests::{input_value, Browser, Resp, TestApp};

const TICKETS: &str = "INSERT INTO ticket (id, title, priority, status, body, secret_note, opened)
     VALUES (1, 't1', 1, 'open', '', 's', '2020-01-01'), (2, 't2', 2, 'open', '', 's', '2020-01-02')";

/// An app with two tickets, and a browser signed in as `staff` holding `granted`.
async fn staff_with(granted: &[&str]) -> TestApp {
    let app = TestApp::with_seed(TICKETS).await;
    let staff = app.user("staff", "pw");
    app.db
        .run_blocking(|c| {
            for name in granted {
                permissions::grant(c, Holder::User(staff), name)?;
            }
            Ok(())
        })
        .expect("grants");
    app
}

async fn signed_in<'a>(app: &'a TestApp, user: &str) -> Browser<'a> {
    let browser = app.browser();
    browser.login(user, "pw").await.expect(302);
    browser
}

/// POSTs `fields` with the session's CSRF token, read from the page at `from`.
async fn post(browser: &Browser<'_>, from: &str, uri: &str, fields: &[(&str, &str)]) -> Resp {
    let token = browser.csrf(from).await;
    let mut all = fields.to_vec();
    all.push(("csrf_token", &token));
    browser.post_form(uri, &all).await
}

/// The title of ticket 1 and the number of tickets: what a forged request must not change.
fn tickets(app: &TestApp) -> (Option<String>, i64) {
    (
        app.query_text("SELECT title FROM ticket WHERE id = 1"),
        app.count("ticket"),
    )
}

/// The edit form of ticket 1, changed to `title`.
fn edit_form<'a>(title: &'a str, version: &'a str) -> Vec<(&'a str, &'a str)> {
    vec![
        ("title", title),
        ("priority", "1"),
        ("status", "open"),
        ("body", ""),
        ("secret_note", "s"),
        ("opened", "2020-01-01"),
        ("parent", ""),
        ("_version", version),
    ]
}

/// The forged requests of a user who may not add, change or delete tickets: each 403, and
/// nothing written.
async fn forged_writes_are_refused(app: &TestApp, browser: &Browser<'_>) {
    let before = tickets(app);
    let add = [("title", "forged"), ("priority", "1"), ("status", "open")];
    let attempts: [(&str, Vec<(&str, &str)>); 4] = [
        ("/admin/ticket/add/", add.to_vec()),
        ("/admin/ticket/1/", edit_form("forged", "")),
        ("/admin/ticket/1/delete/", vec![]),
        (
            "/admin/ticket/",
            vec![("action", "delete"), ("id", "1"), ("confirm", "yes")],
        ),
    ];
    for (uri, fields) in attempts {
        let resp = post(browser, "/admin/ticket/", uri, &fields).await;
        assert_eq!(resp.code(), 403, "POST {uri}");
    }
    let csv = "title,priority,status\nforged,1,open\n";
    let import = post(
        browser,
        "/admin/ticket/",
        "/admin/ticket/import/",
        &[("file", csv)],
    )
    .await;
    assert_eq!(import.code(), 403);
    assert_eq!(tickets(app), before, "nothing written");
}

#[actix_web::test]
async fn a_user_without_a_permission_is_refused_and_a_stranger_sent_to_log_in() {
    let app = staff_with(&[]).await;
    assert_eq!(app.browser().get("/admin/").await.code(), 302);
    let staff = signed_in(&app, "staff").await;
    assert_eq!(staff.get("/admin/").await.code(), 403);
    assert_eq!(staff.get("/admin/ticket/").await.code(), 403);
    // A permission on a model the admin does not register does not let in.
    let app = staff_with(&["hmodel.view"]).await;
    let staff = signed_in(&app, "staff").await;
    assert_eq!(staff.get("/admin/").await.code(), 403);
}

#[actix_web::test]
async fn view_only_lists_and_shows_without_a_way_to_write() {
    let app = staff_with(&["ticket.view"]).await;
    let staff = signed_in(&app, "staff").await;
    let dashboard = staff.get("/admin/").await.expect(200).text();
    assert!(dashboard.contains("href=\"/admin/ticket/\""));
    assert!(!dashboard.contains("href=\"/admin/user/\""), "only ticket");
    assert!(
        !dashboard.contains("Notes"),
        "the panel names another permission"
    );
    assert_eq!(staff.get("/admin/user/").await.code(), 403);

    let index = staff.get("/admin/ticket/").await.expect(200).text();
    assert!(index.contains("t1") && index.contains("t2"));
    assert!(!index.contains("/admin/ticket/add/"), "no add button");
    assert!(!index.contains("/admin/ticket/import/"), "no import");
    assert!(!index.contains("value=\"delete\""), "no bulk delete");
    assert!(index.contains(">View</a>"));

    let detail = staff.get("/admin/ticket/1/").await.expect(200).text();
    assert!(detail.contains("View t1"));
    assert!(!detail.contains(">Save</button>"), "no save");
    assert!(
        !detail.contains("/admin/ticket/1/delete/"),
        "no delete link"
    );
    assert_eq!(input_value(&detail, "title"), None, "shown as text");
    staff.get("/admin/ticket/1/history/").await.expect(200);
    staff.get("/admin/ticket/export/").await.expect(200);
    for page in [
        "/admin/ticket/add/",
        "/admin/ticket/1/delete/",
        "/admin/ticket/import/",
    ] {
        assert_eq!(staff.get(page).await.code(), 403, "GET {page}");
    }
    forged_writes_are_refused(&app, &staff).await;
}

#[actix_web::test]
async fn change_only_edits_but_neither_adds_nor_deletes() {
    let app = staff_with(&["ticket.change"]).await;
    let staff = signed_in(&app, "staff").await;
    let index = staff.get("/admin/ticket/").await.expect(200).text();
    assert!(index.contains(">Edit</a>"));
    assert!(!index.contains("/admin/ticket/add/"));
    let page = staff.get("/admin/ticket/1/").await.expect(200).text();
    assert!(page.contains(">Save</button>"));
    let version = input_value(&page, "_version").expect("a _version field");
    let saved = post(
        &staff,
        "/admin/ticket/1/",
        "/admin/ticket/1/",
        &edit_form("renamed", &version),
    )
    .await;
    assert!([302, 303].contains(&saved.code()), "{}", saved.text());
    assert_eq!(tickets(&app), (Some("renamed".into()), 2));
    assert_eq!(staff.get("/admin/ticket/add/").await.code(), 403);
    assert_eq!(staff.get("/admin/ticket/1/delete/").await.code(), 403);
    let deleted = post(&staff, "/admin/ticket/", "/admin/ticket/1/delete/", &[]).await;
    assert_eq!(deleted.code(), 403);
    assert_eq!(app.count("ticket"), 2);
}

#[actix_web::test]
async fn add_only_reaches_the_add_page_and_nothing_else() {
    let app = staff_with(&["ticket.add"]).await;
    let staff = signed_in(&app, "staff").await;
    let dashboard = staff.get("/admin/").await.expect(200).text();
    assert!(dashboard.contains("href=\"/admin/ticket/add/\""));
    assert_eq!(staff.get("/admin/ticket/").await.code(), 403);
    assert_eq!(staff.get("/admin/ticket/1/").await.code(), 403);
    let form = staff.get("/admin/ticket/add/").await.expect(200).text();
    assert!(input_value(&form, "title").is_some(), "an editable form");
    let added = post(
        &staff,
        "/admin/ticket/add/",
        "/admin/ticket/add/",
        &[
            ("title", "new"),
            ("priority", "2"),
            ("status", "open"),
            ("body", ""),
            ("secret_note", ""),
            ("opened", "2020-02-02"),
            ("parent", ""),
        ],
    )
    .await;
    assert!([302, 303].contains(&added.code()), "{}", added.text());
    assert_eq!(app.count("ticket"), 3);
    // An import that would update a stored row needs `change` too.
    let csv = "id,title,priority,status\n1,forged,1,open\n";
    let import = post(
        &staff,
        "/admin/ticket/add/",
        "/admin/ticket/import/",
        &[("file", csv)],
    )
    .await;
    assert_eq!(import.code(), 403);
    assert_eq!(tickets(&app).0.as_deref(), Some("t1"));
}

#[actix_web::test]
async fn a_superuser_sees_and_does_everything() {
    let app = staff_with(&[]).await;
    app.user_with("root", "pw", true, true);
    let root = signed_in(&app, "root").await;
    let dashboard = root.get("/admin/").await.expect(200).text();
    assert!(dashboard.contains("href=\"/admin/user/\"") && dashboard.contains("Notes"));
    let index = root.get("/admin/ticket/").await.expect(200).text();
    assert!(index.contains("/admin/ticket/add/") && index.contains("value=\"delete\""));
    for page in [
        "/admin/ticket/add/",
        "/admin/ticket/1/",
        "/admin/ticket/1/delete/",
        "/admin/ticket/import/",
    ] {
        root.get(page).await.expect(200);
    }
    let deleted = post(&root, "/admin/", "/admin/ticket/2/delete/", &[]).await;
    assert!([302, 303].contains(&deleted.code()));
    assert_eq!(app.count("ticket"), 1);
}

#[actix_web::test]
async fn a_panel_is_shown_to_the_holders_of_its_permission() {
    let app = staff_with(&["note.view"]).await;
    let staff = signed_in(&app, "staff").await;
    assert!(staff
        .get("/admin/")
        .await
        .expect(200)
        .text()
        .contains("Notes"));
    let posted = post(
        &staff,
        "/admin/",
        "/admin/notes/create/",
        &[("message", "hi")],
    )
    .await;
    assert!([302, 303].contains(&posted.code()));
    assert_eq!(app.count("note"), 1);

    let app = staff_with(&["ticket.view"]).await;
    let staff = signed_in(&app, "staff").await;
    let posted = post(
        &staff,
        "/admin/ticket/",
        "/admin/notes/create/",
        &[("message", "hi")],
    )
    .await;
    assert_eq!(posted.code(), 403);
    assert_eq!(app.count("note"), 0);
}

#[actix_web::test]
async fn a_revoked_permission_is_refused_on_the_next_request_and_kept_ones_cost_no_read() {
    let app = staff_with(&["ticket.view"]).await;
    let staff = signed_in(&app, "staff").await;
    staff.get("/admin/ticket/").await.expect(200);
    // The table they are read from is away: the admin still knows them, kept under the
    // stamp read with the session's user.
    let rename = |from: &str, to: &str| {
        let sql = format!("ALTER TABLE {from} RENAME TO {to}");
        app.db
            .run_blocking(|c| c.batch_execute(&sql))
            .expect("rename");
    };
    rename("plover_user_permission", "moved");
    staff.get("/admin/ticket/").await.expect(200);
    rename("moved", "plover_user_permission");
    let staff_id = app.query_i64("SELECT user_id FROM plover_user_permission");
    app.db
        .run_blocking(|c| permissions::revoke(c, Holder::User(staff_id), "ticket.view"))
        .expect("revoke");
    assert_eq!(staff.get("/admin/ticket/").await.code(), 403);
}

#[actix_web::test]
async fn an_action_needs_the_permission_it_declares() {
    let app = TestApp::with_seed("INSERT INTO vault (id, label) VALUES (1, 'v1')").await;
    let staff = app.user("staff", "pw");
    let grant = |name: &str| {
        app.db
            .run_blocking(|c| permissions::grant(c, Holder::User(staff), name))
            .expect("grant");
    };
    grant("vault.view");
    let browser = signed_in(&app, "staff").await;
    let index = browser.get("/admin/vault/").await.expect(200).text();
    assert!(!index.contains("value=\"close\""), "not offered");
    let fields = [("action", "close"), ("id", "1"), ("confirm", "yes")];
    let forged = post(&browser, "/admin/vault/", "/admin/vault/", &fields).await;
    assert_eq!(forged.code(), 403);
    assert_eq!(
        app.query_text("SELECT label FROM vault").as_deref(),
        Some("v1")
    );
    grant("vault.change");
    let index = browser.get("/admin/vault/").await.expect(200).text();
    assert!(index.contains("value=\"close\""), "offered with change");
    let done = post(&browser, "/admin/vault/", "/admin/vault/", &fields).await;
    assert!([302, 303].contains(&done.code()), "{}", done.text());
    assert_ne!(
        app.query_text("SELECT label FROM vault").as_deref(),
        Some("v1")
    );
}
