//! The import of a CSV file in the export's format (docs/admin.md#import): the preview of every
//! row with its errors, nothing written until the confirmation, then all rows in one
//! transaction or none; bounds, whole-file errors, updates by key, and the round trip from
//! the export.

use std::time::Instant;

use actix_web::http::Method;
use plover_tests::{
    input_value, multipart_request, unescape_html, upload_request, Browser, Resp, TestApp,
};
use serde_json::Value;

use super::{admin, export, post, see_other};

/// Uploads `csv` to the import page of `model`: the preview.
async fn upload(browser: &Browser<'_>, model: &str, csv: &str) -> Resp {
    let token = browser.csrf("/admin/").await;
    browser
        .send(upload_request(
            &format!("/admin/{model}/import/"),
            &[("csrf_token", &token)],
            ("file", "import.csv", csv.as_bytes()),
        ))
        .await
}

/// Confirms the import that the preview `html` offers, as its form does.
async fn confirm(browser: &Browser<'_>, model: &str, html: &str) -> Resp {
    let data = input_value(html, "data").expect("the confirmation's copy of the file");
    confirm_data(browser, model, &data).await
}

/// Posts the confirmation of an import of the file whose base64 is `data`.
async fn confirm_data(browser: &Browser<'_>, model: &str, data: &str) -> Resp {
    let token = browser.csrf("/admin/").await;
    browser
        .send(multipart_request(
            Method::POST,
            &format!("/admin/{model}/import/"),
            &[("csrf_token", &token), ("data", data), ("confirm", "yes")],
        ))
        .await
}

/// The text of the preview's row `number` (its cells and errors), tags removed, decoded.
fn preview_row(html: &str, number: usize) -> String {
    let start = html
        .find(&format!("<tr id=\"row-{number}\""))
        .unwrap_or_else(|| panic!("row {number} in {html}"));
    let end = start + html[start..].find("</tr>").expect("the row's end");
    let cells = html[start..end].replace("</td>", " ").replace("</li>", " ");
    let mut text = String::new();
    let mut in_tag = false;
    for c in cells.chars() {
        match c {
            '<' => in_tag = true,
            '>' => in_tag = false,
            c if !in_tag => text.push(c),
            _ => {}
        }
    }
    unescape_html(&text.split_whitespace().collect::<Vec<_>>().join(" "))
}

/// Whether the preview marks row `number` as having errors.
fn row_failed(html: &str, number: usize) -> bool {
    html.contains(&format!("<tr id=\"row-{number}\" class=\"invalid\""))
}

#[actix_web::test]
async fn an_import_of_1000_rows_is_previewed_then_written_in_one_transaction() {
    let app = TestApp::new().await;
    let root = admin(&app).await;
    // The index links to the import page, whose form uploads a file.
    let html = root.get("/admin/ticket/").await.expect(200).text();
    assert!(html.contains("href=\"/admin/ticket/import/\""), "{html}");
    let html = root.get("/admin/ticket/import/").await.expect(200).text();
    assert!(html.contains("enctype=\"multipart/form-data\""), "{html}");
    assert!(html.contains("<label for=\"import-file\">"), "{html}");
    assert!(input_value(&html, "csrf_token").is_some());

    let mut csv = String::from("title,priority,status\r\n");
    for i in 1..=1000 {
        let status = if i % 2 == 0 { "closed" } else { "open" };
        csv.push_str(&format!("Ticket {i},{},{status}\r\n", i % 5 + 1));
    }
    // The preview: every row, nothing written.
    let html = upload(&root, "ticket", &csv).await.expect(200).text();
    assert!(html.contains("1000 to add, 0 to update"), "{html}");
    assert!(preview_row(&html, 1000).contains("Ticket 1000 1 closed"));
    assert!(!html.contains("class=\"invalid\""));
    assert_eq!(app.count("ticket"), 0);
    // The preview's writes were rolled back, their history with them.
    assert_eq!(app.count("plover_history"), 0);

    // The confirmation writes them all.
    let started = Instant::now();
    let resp = confirm(&root, "ticket", &html).await;
    let took = started.elapsed();
    assert_eq!(see_other(&resp), "/admin/ticket/");
    eprintln!(
        "import of 1,000 rows ({}): {took:?}",
        if app.is_postgres() {
            "PostgreSQL"
        } else {
            "SQLite"
        }
    );
    assert_eq!(app.count("ticket"), 1000);
    assert_eq!(app.query_i64("SELECT SUM(priority) FROM ticket"), 3000);
    // Each imported row is in the history, as a form's add would be.
    assert_eq!(
        app.query_i64(
            "SELECT COUNT(*) FROM plover_history WHERE object_table = 'ticket' \
             AND action = 'add' AND source = 'admin'"
        ),
        1000
    );
    assert_eq!(
        app.query_i64("SELECT COUNT(*) FROM ticket WHERE status = 'closed'"),
        500
    );
    let html = root.get("/admin/ticket/").await.expect(200).text();
    assert!(
        html.contains("Imported 1000 tickets: 1000 added, 0 updated."),
        "{html}"
    );

    // One row more than the bulk-action limit: refused as a whole, nothing written.
    let mut csv = String::from("title\r\n");
    for i in 1..=1001 {
        csv.push_str(&format!("More {i}\r\n"));
    }
    let html = upload(&root, "ticket", &csv).await.expect(400).text();
    assert!(
        html.contains("The file has more than 1000 rows; import at most 1000 at once"),
        "{html}"
    );
    assert_eq!(app.count("ticket"), 1000);
}

#[actix_web::test]
async fn a_file_with_one_bad_row_writes_nothing_and_the_preview_names_its_row_and_field() {
    let app = TestApp::new().await;
    let root = admin(&app).await;
    let bad = "title,priority\r\nfirst,1\r\nsecond,9\r\nthird,3\r\n";
    let html = upload(&root, "ticket", bad).await.expect(400).text();
    assert!(
        html.contains("1 of 3 rows have errors, listed in their rows below: nothing was imported"),
        "{html}"
    );
    assert!(row_failed(&html, 2) && !row_failed(&html, 1) && !row_failed(&html, 3));
    let row = preview_row(&html, 2);
    assert!(row.contains("priority:"), "{row}");
    assert!(row.contains('5'), "the bound: {row}");
    assert!(input_value(&html, "data").is_none(), "no confirmation");
    assert_eq!(app.count("ticket"), 0);

    // Confirming that file anyway: checked again, nothing written.
    use base64::Engine as _;
    let data = base64::engine::general_purpose::STANDARD.encode(bad);
    let html = confirm_data(&root, "ticket", &data)
        .await
        .expect(400)
        .text();
    assert!(row_failed(&html, 2), "{html}");
    assert_eq!(app.count("ticket"), 0);

    // The corrected file: all three.
    let good = bad.replace("second,9", "second,5");
    let html = upload(&root, "ticket", &good).await.expect(200).text();
    see_other(&confirm(&root, "ticket", &html).await);
    assert_eq!(app.count("ticket"), 3);
    assert_eq!(
        app.query_text("SELECT title FROM ticket WHERE priority = 5")
            .as_deref(),
        Some("second")
    );
}

#[actix_web::test]
async fn the_preview_shows_the_errors_of_every_check_and_writes_nothing() {
    let app = TestApp::with_seed(
        "INSERT INTO sample (id, name, qty, big, ratio, flag, body, stamp)
             VALUES (1, 'taken', 1, 0, 0, FALSE, '', '2024-01-01 00:00:00');
         INSERT INTO vault (id, label, pin) VALUES (1, 'open', ''), (2, 'closed', '');",
    )
    .await;
    let root = admin(&app).await;

    // Types, required values, constraints, choices, dates, foreign keys.
    let long = "x".repeat(101);
    let csv = format!(
        "title,priority,status,opened,parent\r\n\
         fine,,open,2024-01-02,\r\n\
         \"  \",3,open,,\r\n\
         two,two,open,,\r\n\
         pending,3,pending,,\r\n\
         date,3,open,2024-13-45,\r\n\
         orphan,3,open,,999\r\n\
         {long},3,open,,\r\n"
    );
    let html = upload(&root, "ticket", &csv).await.expect(400).text();
    assert!(!row_failed(&html, 1), "an empty cell takes the default");
    assert!(preview_row(&html, 1).contains("fine 3 open 2024-01-02"));
    for (row, field) in [
        (2, "title"),
        (3, "priority"),
        (4, "status"),
        (5, "opened"),
        (6, "parent"),
        (7, "title"),
    ] {
        assert!(row_failed(&html, row), "row {row}");
        let text = preview_row(&html, row);
        assert!(text.contains(&format!("{field}:")), "row {row}: {text}");
    }
    assert!(preview_row(&html, 3).contains("Enter a whole number."));
    assert!(preview_row(&html, 4).contains("open"), "the choices");
    assert!(preview_row(&html, 6).contains("999"));
    assert_eq!(app.count("ticket"), 0);

    // Unique values: against the table, and against the rows before in the file.
    let csv = "name,qty\r\ntaken,1\r\nfresh,1\r\nfresh,2\r\n";
    let html = upload(&root, "sample", csv).await.expect(400).text();
    assert!(row_failed(&html, 1) && !row_failed(&html, 2) && row_failed(&html, 3));
    assert!(preview_row(&html, 3).contains("name: This value is already taken."));
    assert_eq!(app.count("sample"), 1);

    // The model's rules: a field error of its validation.
    let html = upload(&root, "amodel", "a_field\r\nfine\r\nreject-me\r\n")
        .await
        .expect(400)
        .text();
    assert!(preview_row(&html, 2).contains("a_field: must not start with \"reject-\""));
    assert_eq!(app.count("amodel"), 0);

    // Rules that read and write other rows: a deposit into a closed vault is refused; one
    // into an open vault writes to the vault too, but only once confirmed.
    let html = upload(&root, "deposit", "vault,amount\r\n2,5\r\n")
        .await
        .expect(400)
        .text();
    assert!(
        preview_row(&html, 1).contains("this vault is closed"),
        "{html}"
    );
    let html = upload(&root, "deposit", "vault,amount\r\n1,5\r\n1,7\r\n")
        .await
        .expect(200)
        .text();
    assert_eq!(app.count("deposit"), 0);
    assert_eq!(
        app.query_text("SELECT label FROM vault WHERE id = 1")
            .as_deref(),
        Some("open"),
        "the preview's writes are rolled back"
    );
    see_other(&confirm(&root, "deposit", &html).await);
    assert_eq!(app.count("deposit"), 2);
    assert_eq!(
        app.query_text("SELECT label FROM vault WHERE id = 1")
            .as_deref(),
        Some("open+5+7")
    );
    // The rule refuses the third deposit (the label grows too long): none of the file stays.
    let html = upload(&root, "deposit", "vault,amount\r\n1,10\r\n1,20\r\n")
        .await
        .expect(400)
        .text();
    assert!(!row_failed(&html, 1) && row_failed(&html, 2), "{html}");
    assert!(preview_row(&html, 2).contains("amount: the vault is full"));
    assert_eq!(
        app.query_text("SELECT label FROM vault WHERE id = 1")
            .as_deref(),
        Some("open+5+7")
    );
}

#[actix_web::test]
async fn rows_with_a_key_update_their_row_and_only_the_columns_of_the_file() {
    let app = TestApp::with_seed(
        "INSERT INTO ticket (id, title, priority, status, body, secret_note, opened)
             VALUES (1, 'one', 1, 'open', 'b1', 's1', '2024-01-01'),
                    (2, 'two', 2, 'open', 'b2', 's2', '2024-01-01');",
    )
    .await;
    let root = admin(&app).await;
    let html = upload(&root, "ticket", "id,priority\r\n2,5\r\n,4\r\n")
        .await
        .expect(400)
        .text();
    assert!(
        unescape_html(&html).contains("need the column \"title\": the file has none"),
        "a new row without its required column: {html}"
    );
    let html = upload(
        &root,
        "ticket",
        "id,priority,title\r\n2,5,deux\r\n,4,new\r\n",
    )
    .await
    .expect(200)
    .text();
    assert!(html.contains("1 to add, 1 to update"), "{html}");
    assert!(preview_row(&html, 1).contains("update #2"));
    see_other(&confirm(&root, "ticket", &html).await);
    assert_eq!(app.count("ticket"), 3);
    assert_eq!(
        app.query_text("SELECT title || ' ' || priority || ' ' || body || ' ' || secret_note FROM ticket WHERE id = 2")
            .as_deref(),
        Some("deux 5 b2 s2")
    );
    assert_eq!(
        app.query_text("SELECT title FROM ticket WHERE id = 1")
            .as_deref(),
        Some("one")
    );

    // A key that no row has, a key twice, a key that is not a number: errors on `id`.
    let html = upload(
        &root,
        "ticket",
        "id,priority\r\n99,1\r\n1,2\r\n1,3\r\nx,1\r\n",
    )
    .await
    .expect(400)
    .text();
    assert!(preview_row(&html, 1).contains("id: there is no ticket with id 99"));
    assert!(!row_failed(&html, 2));
    assert!(preview_row(&html, 3).contains("id: row 2 updates this row already"));
    assert!(preview_row(&html, 4).contains("id: Enter a whole number"));
    assert_eq!(app.query_i64("SELECT priority FROM ticket WHERE id = 1"), 1);
}

#[actix_web::test]
async fn a_file_the_import_cannot_read_is_refused_as_a_whole() {
    let app = TestApp::with_seed("INSERT INTO amodel (id, a_field) VALUES (1, 'a1');").await;
    let root = admin(&app).await;
    for (csv, message) in [
        ("", "The file is empty"),
        ("id,a_field\r\n", "The file has no rows after its header."),
        (
            "a_field,shout\r\nx,y\r\n",
            "The column \"shout\" is not one of amodel: the columns are id, a_field.",
        ),
        (
            "a_field,a_field\r\nx,y\r\n",
            "The column \"a_field\" is there twice.",
        ),
        (
            "id,a_field\r\n1,x\r\n2\r\n",
            "Row 2 (line 3) has 1 cells where the header has 2",
        ),
    ] {
        let html = upload(&root, "amodel", csv).await.expect(400).text();
        assert!(
            unescape_html(&html).contains(message),
            "{csv:?}: {message}: {html}"
        );
        assert!(html.contains("name=\"file\""), "the upload form again");
    }
    // No file at all.
    let html = post(&root, "/admin/amodel/import/", &[])
        .await
        .expect(400)
        .text();
    assert!(html.contains("Choose a CSV file to import."), "{html}");
    // A file that is not UTF-8.
    let token = root.csrf("/admin/").await;
    let resp = root
        .send(upload_request(
            "/admin/amodel/import/",
            &[("csrf_token", &token)],
            ("file", "latin1.csv", b"a_field\r\ncaf\xe9\r\n"),
        ))
        .await;
    assert!(resp.expect(400).text().contains("not UTF-8"));
    // Over the size limit (2 MiB): a clear 400; far over it, the body is refused (413).
    let big = format!("a_field\r\n{}\r\n", "x".repeat(2 * 1024 * 1024));
    let html = upload(&root, "amodel", &big).await.expect(400).text();
    assert!(
        html.contains("at most 2 MiB (2097152 bytes) can be imported at once"),
        "{html}"
    );
    let huge = format!("a_field\r\n{}\r\n", "x".repeat(4 * 1024 * 1024));
    upload(&root, "amodel", &huge).await.expect(413);
    // A damaged confirmation.
    let html = confirm_data(&root, "amodel", "not base64!")
        .await
        .expect(400)
        .text();
    assert!(html.contains("damaged"), "{html}");
    assert_eq!(app.count("amodel"), 1);
}

#[actix_web::test]
async fn a_file_whose_quoting_is_broken_is_refused_as_a_whole_naming_the_line() {
    let app = TestApp::with_seed("INSERT INTO amodel (id, a_field) VALUES (1, 'a1');").await;
    let root = admin(&app).await;
    for (csv, message) in [
        // The reader would take the rest of the file as one cell: one row, "x\r\n,y...".
        (
            "a_field\r\nok\r\n\"x\r\ny\r\nz\r\n",
            "Line 3: a quoted cell is never closed",
        ),
        (
            "id,a_field\r\n,\"two\r\nlines\"\r\n,\"open\r\n",
            "Line 4: a quoted cell is never closed",
        ),
        (
            "a_field\r\n\"a\"b\r\n",
            "Line 2: text follows the closing quote of a cell",
        ),
        (
            "id,a_field\r\n,\"a\r\nb\"\r\n,x,y\r\n",
            "Row 2 (line 4) has 3 cells where the header has 2",
        ),
    ] {
        let html = upload(&root, "amodel", csv).await.expect(400).text();
        assert!(
            unescape_html(&html).contains(message),
            "{csv:?}: {message}: {html}"
        );
        assert!(!html.contains("name=\"confirm\""), "no preview: {html}");
        // The confirmation of the same file is refused too.
        use base64::Engine as _;
        let data = base64::engine::general_purpose::STANDARD.encode(csv);
        let html = confirm_data(&root, "amodel", &data)
            .await
            .expect(400)
            .text();
        assert!(unescape_html(&html).contains(message), "{html}");
        assert_eq!(app.count("amodel"), 1);
    }
    // Quotes written as RFC 4180 writes them, and a quote inside an unquoted cell, are read.
    let html = upload(
        &root,
        "amodel",
        "a_field\r\n\"say \"\"hi\"\"\"\r\n5\" screen\r\n",
    )
    .await
    .expect(200)
    .text();
    assert!(preview_row(&html, 1).contains("say \"hi\""), "{html}");
    assert!(preview_row(&html, 2).contains("5\" screen"), "{html}");
}

#[actix_web::test]
async fn the_import_is_protected_like_every_admin_post() {
    let app = TestApp::new().await;
    let root = admin(&app).await;
    let csv = b"a_field\r\nx\r\n";
    // Without the CSRF token: 403.
    let resp = root
        .send(upload_request(
            "/admin/amodel/import/",
            &[],
            ("file", "a.csv", csv),
        ))
        .await;
    resp.expect(403);
    // Anonymous: to the login page; a user who is not an administrator: 403.
    let anonymous = app.browser();
    let resp = anonymous
        .send(upload_request(
            "/admin/amodel/import/",
            &[],
            ("file", "a.csv", csv),
        ))
        .await;
    resp.expect(302);
    app.user("plain", "pw");
    let plain = app.browser();
    plain.login("plain", "pw").await.expect(302);
    let resp = plain
        .send(upload_request(
            "/admin/amodel/import/",
            &[],
            ("file", "a.csv", csv),
        ))
        .await;
    resp.expect(403);
    assert_eq!(app.count("amodel"), 0);
}

/// The rows of `model` as its JSON export gives them (every column), key ascending.
async fn exported(browser: &Browser<'_>, model: &str, columns: &[&str]) -> Vec<Value> {
    let resp = export(browser, model, "", "json", columns).await;
    match resp.json_with(200) {
        Value::Array(rows) => rows,
        other => panic!("an array: {other}"),
    }
}

#[actix_web::test]
async fn an_exported_file_imports_back_to_the_same_values() {
    let app = TestApp::with_seed(
        r#"INSERT INTO sample (id, name, qty, big, ratio, flag, body, remark, day, stamp) VALUES
            (1, '=1+1', -3, 9007199254740993, 0.1, TRUE, '-minus', NULL, '2024-02-29', '2024-01-02 03:04:05'),
            (2, '''=quoted', 0, -1, -2.5, FALSE, '@at', '+plus', NULL, '1999-12-31 23:59:59'),
            (3, '''plain', 7, 0, 1e100, TRUE, 'a,b "q"
two lines', 'tab	in', '2000-01-01', '2000-01-01 00:00:00'),
            (4, '	tab first', 1, 1, 0, FALSE, '', 'x', NULL, '2024-06-01 12:00:00');"#,
    )
    .await;
    let root = admin(&app).await;
    let columns = [
        "id", "name", "qty", "big", "ratio", "flag", "body", "remark", "day", "stamp",
    ];
    let before = exported(&root, "sample", &columns).await;
    let csv = export(&root, "sample", "", "csv", &columns)
        .await
        .expect(200)
        .text();
    assert!(csv.contains("'=1+1"), "neutralised: {csv}");

    // The rows change; importing the file (with keys) puts every value back.
    app.sql(
        "UPDATE sample SET name = name || '!', qty = 5, big = 5, ratio = 5, flag = NOT flag,
             body = 'changed', remark = 'changed', day = '2020-01-01', stamp = '2020-01-01 00:00:00';",
    );
    let html = upload(&root, "sample", &csv).await.expect(200).text();
    assert!(html.contains("0 to add, 4 to update"), "{html}");
    assert!(
        preview_row(&html, 1).contains("=1+1"),
        "the quote is gone: {html}"
    );
    see_other(&confirm(&root, "sample", &html).await);
    assert_eq!(exported(&root, "sample", &columns).await, before);

    // Without the keys, into an empty table: new rows with the same values.
    let csv = export(&root, "sample", "", "csv", &columns[1..])
        .await
        .expect(200)
        .text();
    app.sql("DELETE FROM sample;");
    let html = upload(&root, "sample", &csv).await.expect(200).text();
    assert!(html.contains("4 to add, 0 to update"), "{html}");
    see_other(&confirm(&root, "sample", &html).await);
    let after: Vec<Value> = exported(&root, "sample", &columns)
        .await
        .into_iter()
        .zip(&before)
        .map(|(mut copy, original)| {
            copy["id"] = original["id"].clone();
            copy
        })
        .collect();
    assert_eq!(after, before);
}

#[actix_web::test]
async fn an_import_of_users_refuses_names_like_the_tables_and_the_files_own() {
    let app = TestApp::new().await;
    let root = admin(&app).await;
    app.user("alice", "pw");
    let bob = app.user("bob", "pw");
    let before = app.count("user");
    // Row 1 looks like a stored name, row 3 like row 2's, row 6 like the name row 4 gives bob;
    // row 5 takes bob's old name, free once row 4 renamed him.
    let csv = format!(
        "id,username,email\r\n,ALICE,a@x\r\n,carol,c@x\r\n,Car\u{043e}l,c2@x\r\n\
         {bob},robert,b@x\r\n,bob,b2@x\r\n,ROBERT,r@x\r\n"
    );
    let html = upload(&root, "user", &csv).await.expect(400).text();
    for (row, name) in [(1, "alice"), (3, "carol"), (6, "robert")] {
        let text = preview_row(&html, row);
        assert!(
            text.contains(&format!("a user named '{name}' exists")),
            "row {row}: {text}"
        );
    }
    for row in [2, 4, 5] {
        assert!(
            !row_failed(&html, row),
            "row {row}: {}",
            preview_row(&html, row)
        );
    }
    assert_eq!(app.count("user"), before);
    assert_eq!(
        app.query_text(&format!("SELECT username FROM \"user\" WHERE id = {bob}"))
            .as_deref(),
        Some("bob")
    );
}
