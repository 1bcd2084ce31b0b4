//! Inlines (docs/admin.md#inlines): the fixture's vault pages edit the vault's deposits
//! (`Inline::<Deposit>`: the amounts, 3 empty rows, at most 5 shown). A deposit's model rules
//! append `+<amount>` to its vault's label and refuse once that label passes 12 characters, or
//! when the vault's label starts with `closed`.

use plover::admin::{Admin, Inline, ModelAdmin};
use plover_tests::{input_value, BModel, Deposit, TestApp, Vault};

use super::{admin, post, see_other};

const VAULTS: &str =
    "INSERT INTO vault (id, label, pin) VALUES (1, 'gold', '1111'), (2, 'silver', '2222');
    INSERT INTO deposit (id, vault_id, amount) VALUES (10, 1, 5), (11, 1, 7), (12, 2, 9);";

/// `(id, amount)` of the deposits of vault `vault`, key ascending.
fn deposits(app: &TestApp, vault: i64) -> Vec<(i64, i64)> {
    let ids = app.query_i64(&format!(
        "SELECT COALESCE(MAX(id), 0) FROM deposit WHERE vault_id = {vault}"
    ));
    (1..=ids)
        .filter(|id| {
            app.query_i64(&format!(
                "SELECT COUNT(*) FROM deposit WHERE id = {id} AND vault_id = {vault}"
            )) == 1
        })
        .map(|id| {
            let amount = app.query_i64(&format!("SELECT amount FROM deposit WHERE id = {id}"));
            (id, amount)
        })
        .collect()
}

fn label(app: &TestApp, vault: i64) -> String {
    app.query_text(&format!("SELECT label FROM vault WHERE id = {vault}"))
        .expect("the vault")
}

/// Recorded writes of `table` with `action`.
fn history(app: &TestApp, table: &str, action: &str) -> i64 {
    app.query_i64(&format!(
        "SELECT COUNT(*) FROM plover_history WHERE object_table = '{table}' AND action = '{action}'"
    ))
}

/// The HTML of the table row whose inputs start with `prefix` (`deposit-2`), and of the
/// notes row after it, if any.
fn row_html<'a>(html: &'a str, prefix: &str) -> &'a str {
    let at = html
        .find(&format!("name=\"{prefix}-"))
        .unwrap_or_else(|| panic!("the row {prefix} in {html}"));
    let start = html[..at].rfind("<tr").expect("the row's start");
    let end = html[at..]
        .find("<tr class=\"inline-row")
        .or_else(|| html[at..].find("</tbody>"))
        .map_or(html.len(), |e| at + e);
    &html[start..end]
}

#[actix_web::test]
async fn the_edit_page_shows_the_children_with_labels_and_empty_rows() {
    let app = TestApp::with_seed(VAULTS).await;
    let root = admin(&app).await;
    let html = root.get("/admin/vault/1/").await.expect(200).text();
    // The stored deposits of vault 1 (not vault 2's), key ascending, then 3 empty rows.
    assert_eq!(input_value(&html, "deposit-0-_pk").as_deref(), Some("10"));
    assert_eq!(input_value(&html, "deposit-0-amount").as_deref(), Some("5"));
    assert_eq!(input_value(&html, "deposit-1-_pk").as_deref(), Some("11"));
    assert_eq!(input_value(&html, "deposit-1-amount").as_deref(), Some("7"));
    assert!(!html.contains("value=\"12\""), "{html}");
    for n in 2..=4 {
        assert_eq!(
            input_value(&html, &format!("deposit-{n}-amount")).as_deref(),
            Some("")
        );
        assert!(!html.contains(&format!("deposit-{n}-_pk")), "{html}");
    }
    assert!(!html.contains("deposit-5-"), "{html}");
    // Every input has a label; stored rows a delete checkbox; the script's template row and
    // button.
    assert!(
        html.contains(
            "<label class=\"visually-hidden\" for=\"f-deposit-0-amount\">Amount, deposit #10</label>"
        ),
        "{html}"
    );
    assert!(
        html.contains("for=\"f-deposit-1-_delete\">Delete deposit #11</label>"),
        "{html}"
    );
    assert!(!html.contains("deposit-2-_delete"), "{html}");
    assert!(html.contains("name=\"deposit-__n__-amount\""), "{html}");
    assert!(
        html.contains("data-inline-add hidden>Add another deposit"),
        "{html}"
    );
    // The add page: only the empty rows.
    let html = root.get("/admin/vault/add/").await.expect(200).text();
    assert_eq!(input_value(&html, "deposit-0-amount").as_deref(), Some(""));
    assert!(!html.contains("_pk"), "{html}");
}

#[actix_web::test]
async fn beyond_max_shown_the_inline_links_to_the_full_list() {
    let app = TestApp::with_seed(
        "INSERT INTO vault (id, label, pin) VALUES (1, 'v', '');
         INSERT INTO deposit (id, vault_id, amount) VALUES (1, 1, 1), (2, 1, 2), (3, 1, 3),
             (4, 1, 4), (5, 1, 5), (6, 1, 6);",
    )
    .await;
    let root = admin(&app).await;
    let html = root.get("/admin/vault/1/").await.expect(200).text();
    assert_eq!(input_value(&html, "deposit-4-_pk").as_deref(), Some("5"));
    assert!(
        !html.contains("value=\"6\""),
        "the sixth is not shown: {html}"
    );
    assert!(
        html.contains("Only the first 5 deposits are shown here."),
        "{html}"
    );
    assert!(html.contains("href=\"/admin/deposit/?vault=1\""), "{html}");
    // That list is the vault's deposits.
    let list = root.get("/admin/deposit/?vault=1").await.expect(200).text();
    assert!(list.contains("name=\"id\" value=\"6\""), "{list}");
}

#[actix_web::test]
async fn children_are_added_changed_and_deleted_with_the_parent_in_one_save() {
    let app = TestApp::with_seed(VAULTS).await;
    let root = admin(&app).await;
    let resp = post(
        &root,
        "/admin/vault/1/",
        &[
            ("label", "gold2"),
            ("deposit-0-_pk", "10"),
            ("deposit-0-amount", "6"),
            ("deposit-1-_pk", "11"),
            ("deposit-1-amount", "7"),
            ("deposit-1-_delete", "1"),
            ("deposit-2-amount", "3"),
            ("deposit-3-amount", ""), // an empty row: ignored
            ("deposit-4-amount", "  "),
        ],
    )
    .await;
    assert_eq!(see_other(&resp), "/admin/vault/");
    // A stored child sent as it is is not written (its rule does not run again).
    let resp = post(
        &root,
        "/admin/vault/1/",
        &[
            ("label", "gold2+6+3"),
            ("deposit-0-_pk", "10"),
            ("deposit-0-amount", "6"),
        ],
    )
    .await;
    see_other(&resp);
    let new_id = app.query_i64("SELECT MAX(id) FROM deposit");
    assert_eq!(deposits(&app, 1), [(10, 6), (new_id, 3)]);
    assert_eq!(deposits(&app, 2), [(12, 9)], "the other vault's untouched");
    // The parent, then each deposit's rule, in the form's order.
    assert_eq!(label(&app, 1), "gold2+6+3");
    // Every write is in the history, under the child's own model, by root.
    assert_eq!(history(&app, "vault", "change"), 1);
    assert_eq!(history(&app, "deposit", "change"), 1);
    assert_eq!(history(&app, "deposit", "delete"), 1);
    assert_eq!(history(&app, "deposit", "add"), 1);
    assert_eq!(
        app.query_i64(
            "SELECT COUNT(*) FROM plover_history WHERE object_table = 'deposit' \
             AND username = 'root' AND source = 'admin' AND ((object_id = 10 AND action = 'change' \
             AND changes LIKE '%\"old\":5%') OR (object_id = 11 AND action = 'delete'))"
        ),
        2
    );
    // The deposit's History page lists the change.
    let html = root
        .get("/admin/deposit/10/history/")
        .await
        .expect(200)
        .text();
    assert!(html.contains("change"), "{html}");

    // The add page: the new vault and its deposits together.
    let resp = post(
        &root,
        "/admin/vault/add/",
        &[
            ("label", "new"),
            ("deposit-0-amount", "1"),
            ("deposit-1-amount", ""),
            ("deposit-2-amount", "2"),
        ],
    )
    .await;
    see_other(&resp);
    let vault = app.query_i64("SELECT id FROM vault WHERE label LIKE 'new%'");
    assert_eq!(label(&app, vault), "new+1+2");
    let amounts: Vec<i64> = deposits(&app, vault).into_iter().map(|(_, a)| a).collect();
    assert_eq!(amounts, [1, 2]);
    assert_eq!(history(&app, "vault", "add"), 1);
    assert_eq!(history(&app, "deposit", "add"), 3);
}

#[actix_web::test]
async fn a_rule_refusing_the_third_child_writes_nothing_and_shows_each_error_beside_its_row() {
    let app = TestApp::with_seed(VAULTS).await;
    let root = admin(&app).await;
    // gold+6 (6), +10 (9), +20 (12), +30: 15 characters, refused by the third new deposit.
    let resp = post(
        &root,
        "/admin/vault/1/",
        &[
            ("label", "gold"),
            ("deposit-0-_pk", "10"),
            ("deposit-0-amount", "6"),
            ("deposit-1-_pk", "11"),
            ("deposit-1-amount", "7"),
            ("deposit-1-_delete", "1"),
            ("deposit-2-amount", "10"),
            ("deposit-3-amount", "20"),
            ("deposit-4-amount", "30"),
        ],
    )
    .await;
    let html = resp.expect(400).text();
    assert!(html.contains("Please correct the errors below."), "{html}");
    let third = row_html(&html, "deposit-4");
    assert!(third.contains("the vault is full"), "{third}");
    assert!(third.contains("id=\"e-deposit-4-amount\""), "{third}");
    assert!(third.contains("aria-invalid=\"true\""), "{third}");
    for other in ["deposit-0", "deposit-2", "deposit-3"] {
        assert!(
            !row_html(&html, other).contains("field-error"),
            "{other}: {html}"
        );
    }
    // The values typed are kept, the delete checkbox too.
    assert_eq!(
        input_value(&html, "deposit-4-amount").as_deref(),
        Some("30")
    );
    assert_eq!(
        input_value(&html, "deposit-2-amount").as_deref(),
        Some("10")
    );
    assert_eq!(input_value(&html, "deposit-0-amount").as_deref(), Some("6"));
    assert!(
        row_html(&html, "deposit-1").contains("name=\"deposit-1-_delete\" value=\"1\" checked"),
        "{html}"
    );
    // Nothing written: no deposit added, changed or deleted, the vault's label as it was, no
    // history.
    assert_eq!(deposits(&app, 1), [(10, 5), (11, 7)]);
    assert_eq!(label(&app, 1), "gold");
    assert_eq!(app.count("plover_history"), 0);

    // Errors of the parent and of several rows show at once, each in its place.
    let resp = post(
        &root,
        "/admin/vault/1/",
        &[
            ("label", "gold"),
            ("deposit-0-_pk", "10"),
            ("deposit-0-amount", "five"),
            ("deposit-1-_pk", "11"),
            ("deposit-1-amount", "7"),
            ("deposit-2-amount", "<b>x</b>"),
        ],
    )
    .await;
    let html = resp.expect(400).text();
    assert!(
        row_html(&html, "deposit-0").contains("Enter a whole number."),
        "{html}"
    );
    assert!(
        !row_html(&html, "deposit-1").contains("field-error"),
        "{html}"
    );
    let typed = row_html(&html, "deposit-2");
    assert!(typed.contains("Enter a whole number."), "{typed}");
    assert!(
        typed.contains("value=\"&#60;b&#62;x&#60;/b&#62;\"")
            || typed.contains("value=\"&lt;b&gt;x&lt;/b&gt;\""),
        "escaped: {typed}"
    );
    assert!(!html.contains("<b>x</b>"), "{html}");

    // A refusal of a field the row does not show (the foreign key, by a rule) is the row's.
    app.sql("UPDATE vault SET label = 'closed' WHERE id = 2");
    let resp = post(
        &root,
        "/admin/vault/2/",
        &[("label", "closed"), ("deposit-0-amount", "1")],
    )
    .await;
    let html = resp.expect(400).text();
    let row = row_html(&html, "deposit-0");
    assert!(row.contains("this vault is closed"), "{row}");
    assert!(row.contains("class=\"row-errors\""), "{row}");
    assert_eq!(deposits(&app, 2), [(12, 9)]);
    assert_eq!(app.count("plover_history"), 0);
}

#[actix_web::test]
async fn a_child_of_another_parent_or_no_child_is_refused_and_nothing_is_written() {
    let app = TestApp::with_seed(VAULTS).await;
    let root = admin(&app).await;
    for (pk, delete) in [("12", false), ("12", true), ("999", false), ("x", false)] {
        let mut fields = vec![
            ("label", "changed"),
            ("deposit-0-_pk", "10"),
            ("deposit-0-amount", "1"),
            ("deposit-1-_pk", pk),
            ("deposit-1-amount", "2"),
        ];
        if delete {
            fields.push(("deposit-1-_delete", "1"));
        }
        let resp = post(&root, "/admin/vault/1/", &fields).await;
        resp.expect(400);
        assert_eq!(label(&app, 1), "gold", "{pk}");
        assert_eq!(deposits(&app, 1), [(10, 5), (11, 7)]);
        assert_eq!(deposits(&app, 2), [(12, 9)]);
    }
    // The same child twice, a stored child on the add page: 400 too.
    let resp = post(
        &root,
        "/admin/vault/1/",
        &[
            ("deposit-0-_pk", "10"),
            ("deposit-0-amount", "1"),
            ("deposit-1-_pk", "10"),
            ("deposit-1-amount", "2"),
        ],
    )
    .await;
    assert!(resp.expect(400).text().contains("sent twice"));
    let resp = post(
        &root,
        "/admin/vault/add/",
        &[
            ("label", "x"),
            ("deposit-0-_pk", "12"),
            ("deposit-0-amount", "1"),
        ],
    )
    .await;
    resp.expect(400);
    assert_eq!(app.count("vault"), 2);
    assert_eq!(deposits(&app, 2), [(12, 9)]);
    assert_eq!(app.count("plover_history"), 0);
    // Without the CSRF token: 403, nothing written.
    root.post_form(
        "/admin/vault/1/",
        &[("label", "gold"), ("deposit-0-amount", "1")],
    )
    .await
    .expect(403);
    assert_eq!(deposits(&app, 1), [(10, 5), (11, 7)]);
}

#[actix_web::test]
async fn the_rows_one_save_sends_are_bounded_by_max_bulk_rows() {
    let app = TestApp::with_seed(VAULTS).await;
    let root = admin(&app).await;
    let names: Vec<String> = (0..1001).map(|n| format!("deposit-{n}-amount")).collect();
    let mut fields: Vec<(&str, &str)> = names.iter().map(|n| (n.as_str(), "1")).collect();
    fields.push(("label", "gold"));
    let resp = post(&root, "/admin/vault/1/", &fields).await;
    let html = resp.expect(400).text();
    assert!(html.contains("more than 1000 child rows"), "{html}");
    assert_eq!(deposits(&app, 1), [(10, 5), (11, 7)]);
    // Empty rows count too: the bound is on what a request sends.
    let empty: Vec<(&str, &str)> = names.iter().map(|n| (n.as_str(), "")).collect();
    post(&root, "/admin/vault/1/", &empty).await.expect(400);
    // A row number that is not one: 400.
    post(&root, "/admin/vault/1/", &[("deposit-x-amount", "1")])
        .await
        .expect(400);
    assert_eq!(app.count("plover_history"), 0);
}

#[actix_web::test]
#[should_panic(expected = "the inline of deposit on vault: `amount` is not a foreign key")]
async fn an_inline_through_a_field_that_is_not_a_foreign_key_stops_the_setup() {
    let app = TestApp::new().await;
    let mut admin = Admin::new(&app.auth);
    admin.register(
        ModelAdmin::<Vault>::new().inline(Inline::<Deposit>::new(Deposit::FIELDS.amount)),
    );
    let _ = admin.setup();
}

#[actix_web::test]
#[should_panic(expected = "the inline of bmodel on vault: `a` refers to amodel, not to vault")]
async fn an_inline_through_a_foreign_key_to_another_model_stops_the_setup() {
    let app = TestApp::new().await;
    let mut admin = Admin::new(&app.auth);
    admin.register(ModelAdmin::<Vault>::new().inline(Inline::<BModel>::new(BModel::FIELDS.a_id)));
    let _ = admin.setup();
}

#[actix_web::test]
#[should_panic(
    expected = "the inline of ticket on ticket: `title` is required and not among the inline's fields"
)]
async fn an_inline_that_hides_a_required_field_stops_the_setup() {
    use plover_tests::Ticket;
    let app = TestApp::new().await;
    let mut admin = Admin::new(&app.auth);
    admin.register(
        ModelAdmin::<Ticket>::new().inline(
            Inline::<Ticket>::new(Ticket::FIELDS.parent_id).fields([Ticket::FIELDS.priority]),
        ),
    );
    let _ = admin.setup();
}

/// An admin of tickets whose pages edit the tickets under them (title and priority), over the
/// database and sessions of `app`.
async fn ticket_admin(app: &TestApp) -> plover_tests::TestService {
    use plover_tests::Ticket;
    let mut custom = Admin::new(&app.auth);
    custom.register(
        ModelAdmin::<Ticket>::new().inline(
            Inline::<Ticket>::new(Ticket::FIELDS.parent_id)
                .fields([Ticket::FIELDS.title, Ticket::FIELDS.priority]),
        ),
    );
    plover_tests::TestService::new(
        actix_web::App::new()
            .wrap(app.auth.session_middleware())
            .configure(app.auth.setup())
            .configure(custom.setup()),
    )
    .await
}

#[actix_web::test]
async fn an_inline_row_runs_the_constraints_and_a_refused_one_writes_nothing() {
    let app = TestApp::with_seed(
        "INSERT INTO ticket (id, title, priority, status, body, secret_note, opened)
         VALUES (1, 'parent', 3, 'open', '', '', '2024-01-01');",
    )
    .await;
    app.user_with("root", "pw", true, true);
    let service = ticket_admin(&app).await;
    let root = service.browser();
    root.login("root", "pw").await.expect(302);
    let token = root.csrf("/admin/ticket/1/").await;
    // Each refused by the title's or the priority's constraints, as the form and REST are.
    for (title, priority, field, message) in [
        ("", "2", "title", "must not be blank"),
        (" \t ", "2", "title", "must not be blank"),
        ("ok", "9", "priority", "must be between 1 and 5"),
    ] {
        let resp = root
            .post_form(
                "/admin/ticket/1/",
                &[
                    ("csrf_token", &token),
                    ("title", "parent changed"),
                    ("ticket-0-title", "first"),
                    ("ticket-0-priority", "1"),
                    ("ticket-1-title", title),
                    ("ticket-1-priority", priority),
                ],
            )
            .await;
        let html = resp.expect(400).text();
        let row = row_html(&html, "ticket-1");
        assert!(row.contains(message), "{row}");
        assert!(row.contains(&format!("id=\"e-ticket-1-{field}\"")), "{row}");
        assert!(
            !row_html(&html, "ticket-0").contains("field-error"),
            "{html}"
        );
        assert_eq!(input_value(&html, "ticket-1-title").as_deref(), Some(title));
        assert_eq!(
            input_value(&html, "ticket-0-title").as_deref(),
            Some("first")
        );
        assert_eq!(
            input_value(&html, "title").as_deref(),
            Some("parent changed")
        );
        // Nothing written: neither the parent's change nor the valid row.
        assert_eq!(app.count("ticket"), 1);
        assert_eq!(
            app.query_text("SELECT title FROM ticket").as_deref(),
            Some("parent")
        );
        assert_eq!(app.count("plover_history"), 0);
    }
}
