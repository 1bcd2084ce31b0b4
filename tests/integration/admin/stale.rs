//! Two people editing one row (docs/admin.md#two-editors): the edit form carries the version
//! of the row it shows, and a save over another version is refused (409) with the typed
//! values kept and nothing written; saving again from that page overwrites.

use super::{admin, post};
use plover_tests::{input_value, TestApp, CHAINS};

#[actix_web::test]
async fn a_save_over_a_version_someone_else_changed_is_refused_and_keeps_the_values() {
    let app = TestApp::with_seed(CHAINS).await;
    let root = admin(&app).await;
    let stored = || app.query_text("SELECT a_field FROM amodel WHERE id = 1");
    // Two editors open the same row.
    let first = root.get("/admin/amodel/1/").await.expect(200).text();
    let second = first.clone();
    let version = |html: &str| input_value(html, "_version").expect("a _version field");
    assert_eq!(version(&first), version(&second));
    // The first saves; the second, from the page rendered before, is refused.
    let v = version(&first);
    let resp = post(
        &root,
        "/admin/amodel/1/",
        &[("a_field", "first"), ("_version", &v)],
    )
    .await;
    assert_eq!(resp.code(), 303, "{}", resp.text());
    let resp = post(
        &root,
        "/admin/amodel/1/",
        &[("a_field", "second"), ("_version", &v)],
    )
    .await;
    assert_eq!(resp.code(), 409);
    let page = resp.text();
    assert!(page.contains("Someone changed this amodel"), "{page}");
    assert_eq!(
        input_value(&page, "a_field").as_deref(),
        Some("second"),
        "typed values kept"
    );
    assert_eq!(stored().as_deref(), Some("first"), "nothing written");
    // The refusal's page carries the current version: saving from it overwrites.
    let resp = post(
        &root,
        "/admin/amodel/1/",
        &[("a_field", "second"), ("_version", &version(&page))],
    )
    .await;
    assert_eq!(resp.code(), 303, "{}", resp.text());
    assert_eq!(stored().as_deref(), Some("second"));
    // A form without the field (a script of its own) saves as before.
    let resp = post(&root, "/admin/amodel/1/", &[("a_field", "third")]).await;
    assert_eq!(resp.code(), 303);
    assert_eq!(stored().as_deref(), Some("third"));
}

#[actix_web::test]
async fn a_stale_save_with_inlines_writes_neither_the_parent_nor_a_child() {
    let app = TestApp::with_seed(
        "INSERT INTO vault (id, label, pin) VALUES (1, 'gold', '1111');
         INSERT INTO deposit (id, vault_id, amount) VALUES (10, 1, 5);",
    )
    .await;
    let root = admin(&app).await;
    let page = root.get("/admin/vault/1/").await.expect(200).text();
    let v = input_value(&page, "_version").expect("a _version field");
    app.sql("UPDATE vault SET pin = '9999' WHERE id = 1");
    let fields = [
        ("label", "gold"),
        ("pin", "1234"),
        ("deposit-0-_pk", "10"),
        ("deposit-0-amount", "6"),
        ("deposit-1-amount", "8"),
        ("_version", v.as_str()),
    ];
    let resp = post(&root, "/admin/vault/1/", &fields).await;
    assert_eq!(resp.code(), 409, "{}", resp.text());
    assert!(resp.text().contains("Someone changed this vault"));
    assert_eq!(
        app.query_text("SELECT pin FROM vault WHERE id = 1")
            .as_deref(),
        Some("9999")
    );
    assert_eq!(app.query_i64("SELECT amount FROM deposit WHERE id = 10"), 5);
    assert_eq!(app.query_i64("SELECT COUNT(*) FROM deposit"), 1);
}
