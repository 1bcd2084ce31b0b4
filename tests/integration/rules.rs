//! Model rules (docs/contract.md#models): validation and a before-save step that every writer runs
//! (REST POST and PUT through any resource of the model, the admin's add and edit forms),
//! inside the write's transaction, with the connection at hand.

use plover_tests::*;
use serde_json::json;

const PW: &str = "pw";

#[actix_web::test]
async fn a_model_rule_guards_every_resource_of_the_model() {
    let app = TestApp::with_seed("INSERT INTO amodel VALUES (1, 'a1');").await;
    // `amodel` and `scoped` are two resources of AModel with no hooks of their own for this.
    for resource in ["amodel", "scoped"] {
        let resp = app
            .post(
                &format!("/api/{resource}/"),
                json!({"a_field": "reject-me"}),
            )
            .await;
        let fields = assert_fields(&resp, &["a_field"]);
        assert!(fields["a_field"]
            .as_str()
            .is_some_and(|m| m.contains("reject-")));
        let resp = app
            .put(
                &format!("/api/{resource}/1/"),
                json!({"a_field": "reject-too"}),
            )
            .await;
        assert_fields(&resp, &["a_field"]);
    }
    assert_eq!(app.count("amodel"), 1);
    assert_eq!(
        app.get("/api/amodel/1/").await.json_with(200)["a_field"],
        "a1"
    );
    // A PUT that leaves the field alone passes the rule; other values are fine.
    app.put("/api/amodel/1/", json!({})).await.expect(200);
    app.post("/api/amodel/", json!({"a_field": "not-reject-"}))
        .await
        .expect(201);
}

#[actix_web::test]
async fn a_model_rule_guards_the_admin_forms_keeping_the_typed_values() {
    let app = TestApp::with_seed("INSERT INTO amodel VALUES (1, 'a1');").await;
    app.user_with("root", PW, true, true);
    let admin = app.browser();
    admin.login("root", PW).await.expect(302);
    for uri in ["/admin/amodel/add/", "/admin/amodel/1/"] {
        let token = admin.csrf(uri).await;
        let resp = admin
            .post_form(uri, &[("a_field", "reject-typed"), ("csrf_token", &token)])
            .await;
        assert_eq!(resp.code(), 400, "{uri}: {}", resp.text());
        let html = resp.text();
        assert_eq!(
            input_value(&html, "a_field").as_deref(),
            Some("reject-typed"),
            "the typed value is kept: {html}"
        );
        assert!(html.contains("reject-"), "the message is shown: {html}");
    }
    assert_eq!(app.count("amodel"), 1);
    assert_eq!(
        app.query_text("SELECT a_field FROM amodel WHERE id = 1")
            .as_deref(),
        Some("a1")
    );
}

#[actix_web::test]
async fn a_rule_reads_and_writes_other_rows_in_the_writes_transaction() {
    let app =
        TestApp::with_seed("INSERT INTO vault (id, label) VALUES (1, 'v'), (2, 'closed');").await;
    // Reads another row: a closed vault takes no deposit.
    let resp = app
        .post("/api/deposit/", json!({"vault_id": 2, "amount": 5}))
        .await;
    assert_fields(&resp, &["vault_id"]);
    // Writes another row in the same transaction: the vault's label records the deposit.
    let created = app
        .post("/api/deposit/", json!({"vault_id": 1, "amount": 5}))
        .await
        .json_with(201);
    assert_eq!(created["amount"], 5);
    assert_eq!(
        app.query_text("SELECT label FROM vault WHERE id = 1")
            .as_deref(),
        Some("v+5")
    );
    let id = created["id"].as_i64().expect("an id");
    app.put(&format!("/api/deposit/{id}/"), json!({"amount": 7}))
        .await
        .expect(200);
    assert_eq!(
        app.query_text("SELECT label FROM vault WHERE id = 1")
            .as_deref(),
        Some("v+5+7")
    );
    // Refused after it wrote the vault: the whole write is rolled back, the vault included.
    let resp = app
        .post("/api/deposit/", json!({"vault_id": 1, "amount": 123456789}))
        .await;
    assert_fields(&resp, &["amount"]);
    assert_eq!(app.count("deposit"), 1);
    assert_eq!(
        app.query_text("SELECT label FROM vault WHERE id = 1")
            .as_deref(),
        Some("v+5+7")
    );
}

// --- who may write which field ----------------------------------------------------------------

#[actix_web::test]
async fn a_read_only_field_is_shown_and_never_written_by_a_client() {
    let app = TestApp::new().await;
    let created = app
        .post("/api/job/", json!({"title": "t"}))
        .await
        .json_with(201);
    assert_eq!(created["status"], "open");
    let id = created["id"].as_i64().expect("an id");
    let resp = app
        .post("/api/job/", json!({"title": "t2", "status": "closed"}))
        .await;
    let fields = assert_fields(&resp, &["status"]);
    assert_eq!(fields["status"], "this field is read-only");
    let resp = app
        .put(
            &format!("/api/job/{id}/"),
            json!({"title": "u", "status": "closed"}),
        )
        .await;
    assert_fields(&resp, &["status"]);
    assert_eq!(app.count("job"), 1);
    assert_eq!(
        app.query_text("SELECT title || '/' || status FROM job")
            .as_deref(),
        Some("t/open"),
        "nothing of a refused body is written"
    );
}

#[actix_web::test]
async fn a_resource_narrows_its_writable_fields_against_mass_assignment() {
    let app = TestApp::new().await;
    let resp = app
        .post(
            "/api/narrow/",
            json!({"name": "n", "qty": 1, "body": "smuggled"}),
        )
        .await;
    let fields = assert_fields(&resp, &["body"]);
    assert_eq!(fields["body"], "this field cannot be written here");
    assert_eq!(app.count("sample"), 0);
    let created = app
        .post("/api/narrow/", json!({"name": "n", "qty": 1}))
        .await
        .json_with(201);
    let id = created["id"].as_i64().expect("an id");
    let resp = app
        .put(&format!("/api/narrow/{id}/"), json!({"ratio": 2.5}))
        .await;
    assert_fields(&resp, &["ratio"]);
    // The same model through a resource that does not narrow: every field is writable.
    app.put(&format!("/api/sample/{id}/"), json!({"ratio": 2.5}))
        .await
        .expect(200);
}

// --- users in the admin ---------------------------------------------------------------------

#[actix_web::test]
async fn the_admin_sets_a_users_password_through_new_password_and_never_shows_a_hash() {
    let app = TestApp::new().await;
    app.user_with("root", PW, true, true);
    let admin = app.browser();
    admin.login("root", PW).await.expect(302);
    let form = admin.get("/admin/user/add/").await.text();
    assert!(form.contains("name=\"new_password\""), "{form}");
    assert!(!form.contains("name=\"password\""), "{form}");
    let token = admin.csrf("/admin/user/add/").await;
    admin
        .post_form(
            "/admin/user/add/",
            &[
                ("username", "member"),
                ("email", "m@example.com"),
                ("new_password", "s3cret pass"),
                ("active", "1"),
                ("csrf_token", &token),
            ],
        )
        .await
        .expect(303);
    let id = app.query_i64("SELECT id FROM \"user\" WHERE username = 'member'");
    let stored = app
        .query_text("SELECT password FROM \"user\" WHERE username = 'member'")
        .expect("a row");
    assert!(
        stored.starts_with("$2"),
        "a bcrypt hash is stored: {stored}"
    );
    // The member can log in with it.
    let member = app.browser();
    member.login("member", "s3cret pass").await.expect(302);
    // Edit with an empty new_password: the password stays; the page shows no hash.
    let edit = admin.get(&format!("/admin/user/{id}/")).await.text();
    assert!(!edit.contains(&stored), "the hash is never shown");
    let token = admin.csrf(&format!("/admin/user/{id}/")).await;
    admin
        .post_form(
            &format!("/admin/user/{id}/"),
            &[
                ("username", "member"),
                ("email", "new@example.com"),
                ("new_password", ""),
                ("active", "1"),
                ("password", "$2b$04$forged"),
                ("csrf_token", &token),
            ],
        )
        .await
        .expect(303);
    assert_eq!(
        app.query_text("SELECT password FROM \"user\" WHERE username = 'member'"),
        Some(stored),
        "unchanged, and a submitted `password` is ignored"
    );
    // A password over bcrypt's 72 bytes is an error beside the input, nothing written.
    let token = admin.csrf(&format!("/admin/user/{id}/")).await;
    let long = "x".repeat(73);
    let resp = admin
        .post_form(
            &format!("/admin/user/{id}/"),
            &[
                ("username", "member"),
                ("email", "other@example.com"),
                ("new_password", &long),
                ("csrf_token", &token),
            ],
        )
        .await;
    assert_eq!(resp.code(), 400, "{}", resp.text());
    assert!(
        resp.text().contains("id=\"e-new_password\""),
        "{}",
        resp.text()
    );
    assert_eq!(
        app.query_text("SELECT email FROM \"user\" WHERE username = 'member'")
            .as_deref(),
        Some("new@example.com")
    );
}
