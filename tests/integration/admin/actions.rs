//! An application's actions on the rows selected in an index (docs/admin.md#actions): the
//! fixture's `close` action of the vault admin ([`plover_tests::close_vaults`]).

use plover_tests::TestApp;

use super::{admin, post, row_ids, see_other};

const VAULTS: &str = "INSERT INTO vault (id, label, pin) VALUES
    (1, 'gold', '1111'), (2, 'silver', '2222'), (3, 'bronze', '3333'), (4, 'stuck', '4444');";

/// The labels of the vaults, key ascending.
fn labels(app: &TestApp) -> Vec<String> {
    (1..=app.query_i64("SELECT MAX(id) FROM vault"))
        .filter_map(|id| app.query_text(&format!("SELECT label FROM vault WHERE id = {id}")))
        .collect()
}

#[actix_web::test]
async fn an_action_confirms_the_selected_rows_then_runs_once_in_one_transaction() {
    let app = TestApp::with_seed(VAULTS).await;
    let root = admin(&app).await;

    // The index offers the action beside the bulk delete, with a labelled select.
    let html = root.get("/admin/vault/").await.expect(200).text();
    assert!(
        html.contains("<option value=\"close\">Close the vaults</option>"),
        "{html}"
    );
    assert!(html.contains("<label for=\"bulk-action\">"), "{html}");

    // Choosing it: the confirmation page lists the selected rows by their text; nothing yet.
    let resp = post(
        &root,
        "/admin/vault/?label__ne=none",
        &[("action", "close"), ("id", "2"), ("id", "1")],
    )
    .await;
    let html = resp.expect(200).text();
    assert!(html.contains("<h1>Close the vaults</h1>"), "{html}");
    let gold = html.find("vault #1").expect("gold's text");
    let silver = html.find("vault #2").expect("silver's text");
    assert!(gold < silver, "key ascending: {html}");
    assert!(!html.contains("vault #3"), "{html}");
    assert_eq!(row_ids(&html), [1, 2], "the confirmation carries the rows");
    assert!(html.contains("name=\"confirm\" value=\"yes\""), "{html}");
    assert!(html.contains("csrf_token"), "{html}");
    assert_eq!(labels(&app), ["gold", "silver", "bronze", "stuck"]);

    // Confirming runs it, then back to the index (its filters kept), which says what was done,
    // once.
    let resp = post(
        &root,
        "/admin/vault/?label__ne=none",
        &[
            ("action", "close"),
            ("id", "1"),
            ("id", "2"),
            ("confirm", "yes"),
        ],
    )
    .await;
    assert_eq!(see_other(&resp), "/admin/vault/?label__ne=none");
    assert_eq!(
        labels(&app),
        ["closed gold", "closed silver", "bronze", "stuck"]
    );
    // What the action changed in each row is in the history.
    assert_eq!(
        app.query_i64(
            "SELECT COUNT(*) FROM plover_history WHERE object_table = 'vault' \
             AND action = 'change' AND changes LIKE '%closed gold%'"
        ),
        1
    );
    assert_eq!(
        app.query_i64("SELECT COUNT(*) FROM plover_history WHERE object_table = 'vault'"),
        2
    );
    let html = root
        .get("/admin/vault/?label__ne=none")
        .await
        .expect(200)
        .text();
    assert!(
        html.contains("<p class=\"notice\" role=\"status\">2 vaults closed</p>"),
        "{html}"
    );
    let html = root.get("/admin/vault/").await.expect(200).text();
    assert!(!html.contains("vaults closed"), "shown once: {html}");

    // Rows deleted meanwhile are left out; none left: nothing runs.
    let resp = post(
        &root,
        "/admin/vault/",
        &[("action", "close"), ("id", "99"), ("confirm", "yes")],
    )
    .await;
    see_other(&resp);
    let html = root.get("/admin/vault/").await.expect(200).text();
    assert!(html.contains("no longer exist, nothing was done"), "{html}");
    assert_eq!(
        labels(&app),
        ["closed gold", "closed silver", "bronze", "stuck"]
    );
}

#[actix_web::test]
async fn an_action_that_fails_writes_nothing_and_shows_why() {
    let app = TestApp::with_seed(VAULTS).await;
    let root = admin(&app).await;
    // The action changes vaults 1 to 3, then refuses at vault 4: all of it is rolled back.
    let resp = post(
        &root,
        "/admin/vault/",
        &[
            ("action", "close"),
            ("id", "4"),
            ("id", "1"),
            ("id", "2"),
            ("id", "3"),
            ("confirm", "yes"),
        ],
    )
    .await;
    let html = resp.expect(409).text();
    assert!(html.contains("the vault #4 is stuck"), "{html}");
    assert!(html.contains("Nothing was changed."), "{html}");
    assert!(html.contains("role=\"alert\""), "{html}");
    assert_eq!(row_ids(&html), [1, 2, 3, 4], "the confirmation again");
    assert_eq!(labels(&app), ["gold", "silver", "bronze", "stuck"]);
}

#[actix_web::test]
async fn actions_are_bounded_checked_and_protected_like_the_bulk_delete() {
    let app = TestApp::with_seed(VAULTS).await;
    let root = admin(&app).await;
    let ids: Vec<String> = (1..=1001).map(|i| i.to_string()).collect();

    // Over the bulk-action limit: 400 naming it, nothing written, on either step.
    for confirm in [false, true] {
        let mut form: Vec<(&str, &str)> = ids.iter().map(|id| ("id", id.as_str())).collect();
        form.push(("action", "close"));
        if confirm {
            form.push(("confirm", "yes"));
        }
        let html = post(&root, "/admin/vault/", &form).await.expect(400).text();
        assert!(html.contains("select at most 1000 rows at once"), "{html}");
    }
    // At the limit (vault 4 left out): runs.
    let at_limit: Vec<String> = (1..=1001)
        .filter(|&i| i != 4)
        .map(|i| i.to_string())
        .collect();
    let mut form: Vec<(&str, &str)> = at_limit.iter().map(|id| ("id", id.as_str())).collect();
    form.extend([("action", "close"), ("confirm", "yes")]);
    see_other(&post(&root, "/admin/vault/", &form).await);
    assert_eq!(
        labels(&app),
        ["closed gold", "closed silver", "closed bronze", "stuck"]
    );

    // An unknown action, a bad key: 400; no row selected: back to the index, which says so.
    post(&root, "/admin/vault/", &[("action", "open"), ("id", "1")])
        .await
        .expect(400);
    post(&root, "/admin/vault/", &[("action", "close"), ("id", "x")])
        .await
        .expect(400);
    see_other(
        &post(
            &root,
            "/admin/vault/",
            &[("action", "close"), ("confirm", "yes")],
        )
        .await,
    );
    let html = root.get("/admin/vault/").await.expect(200).text();
    assert!(
        html.contains("no row was selected, nothing was done"),
        "{html}"
    );

    // Without the CSRF token: 403; anonymous: to the login page; nothing written.
    let resp = root
        .post_form(
            "/admin/vault/",
            &[("action", "close"), ("id", "4"), ("confirm", "yes")],
        )
        .await;
    resp.expect(403);
    let anonymous = app.browser();
    let resp = anonymous
        .post_form(
            "/admin/vault/",
            &[("action", "close"), ("id", "4"), ("confirm", "yes")],
        )
        .await;
    resp.expect(302);
    assert_eq!(
        labels(&app),
        ["closed gold", "closed silver", "closed bronze", "stuck"]
    );
}
