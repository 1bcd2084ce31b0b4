//! docs/deployment.md#text-order-and-indexes and docs/contract.md#counts: on PostgreSQL, text
//! columns in code point order (`COLLATE "C"`) so that plain indexes serve Plover's orderings,
//! an ordering through a required foreign key read from the target's index, `count=auto`, and
//! the connections kept for writes while readers hold the rest.

use plover_tests::*;
use serde_json::Value;

/// 300 users (`u000` to `u299`, inserted in reverse order) and 3,000 messages, ten a user.
fn seed_many(app: &TestApp) {
    let (series, text) = if app.is_postgres() {
        (
            "generate_series(0, 299) AS g",
            "lpad(CAST(g AS TEXT), 3, '0')",
        )
    } else {
        (
            "(WITH RECURSIVE s(g) AS (SELECT 0 UNION ALL SELECT g + 1 FROM s WHERE g < 299) \
             SELECT g FROM s)",
            "substr('00' || g, -3, 3)",
        )
    };
    app.sql(&format!(
        "INSERT INTO \"user\" (id, username, password, email, join_date, active, admin) \
         SELECT 1000 - g, 'u' || {text}, '', '', '2020-01-01 00:00:00', TRUE, FALSE FROM {series};"
    ));
    let messages = if app.is_postgres() {
        "SELECT 1000 - (g % 300), 'm', '2020-01-01 00:00:00' FROM generate_series(0, 2999) AS g"
            .to_owned()
    } else {
        "WITH RECURSIVE s(g) AS (SELECT 0 UNION ALL SELECT g + 1 FROM s WHERE g < 2999) \
         SELECT 1000 - (g % 300), 'm', '2020-01-01 00:00:00' FROM s"
            .to_owned()
    };
    app.sql(&format!(
        "INSERT INTO message (user_id, content, pub_date) {messages};"
    ));
}

#[actix_web::test]
async fn text_columns_are_in_code_point_order_on_postgresql() {
    let app = TestApp::new().await;
    if !app.is_postgres() {
        return;
    }
    let collation = app.query_text(
        "SELECT collation_name FROM information_schema.columns \
         WHERE table_name = 'user' AND column_name = 'username'",
    );
    assert_eq!(collation.as_deref(), Some("C"));
    // Case-insensitive filters still fold every letter, not ASCII only.
    app.user("Élodie", "pw");
    let body = app
        .get(&url("/api/user/", &[("username__ilike", "éLODIE")]))
        .await
        .json();
    assert_eq!(body["objects"].as_array().map(Vec::len), Some(1), "{body}");
}

#[actix_web::test]
async fn an_ordering_through_a_required_foreign_key_reads_the_targets_index() {
    let app = TestApp::new().await;
    seed_many(&app);
    // The rows: by username, then by id (ten messages a user).
    let body = app
        .get("/api/message/?ordering=-user__username&limit=12")
        .await
        .json();
    let users: Vec<i64> = (body["objects"].as_array().unwrap().iter())
        .map(|m| m["user"]["id"].as_i64().unwrap())
        .collect();
    assert_eq!(users[..10], [701; 10], "{body}");
    assert_eq!(users[10..], [702; 2], "{body}");
    if !app.is_postgres() {
        return;
    }
    app.sql(
        "ANALYZE \"user\"; ANALYZE message;
         CREATE FUNCTION plan_of(query TEXT) RETURNS TEXT AS $$
         DECLARE plan JSON;
         BEGIN EXECUTE 'EXPLAIN (FORMAT JSON) ' || query INTO plan; RETURN plan; END
         $$ LANGUAGE plpgsql;",
    );
    // The statement Plover writes for `ordering=user__username` (pinned by the SQL text
    // tests of crates/plover/src/sql/tests.rs): no sort of every row, but the username's
    // unique index read in order, each user's messages by the foreign key's index.
    for direction in ["ASC", "DESC"] {
        let plan = app.query_text(&format!(
            "SELECT plan_of('SELECT \"message\".\"id\" FROM \"message\" \
             INNER JOIN \"user\" AS \"plover_o0_0\" ON \"plover_o0_0\".\"id\" = \"message\".\"user_id\" \
             ORDER BY \"plover_o0_0\".\"username\" COLLATE \"C\" {direction}, \
             \"message\".\"id\" ASC LIMIT 20 OFFSET 0')"
        ));
        let plan: Value = serde_json::from_str(&plan.unwrap()).unwrap();
        let nodes = nodes(&plan[0]["Plan"]);
        assert!(
            !nodes.iter().any(|n| n["Node Type"] == "Sort"),
            "{direction}: {plan:#}"
        );
        assert!(
            nodes.iter().any(|n| n["Relation Name"] == "user"
                && n["Index Name"]
                    .as_str()
                    .is_some_and(|i| i.contains("username"))),
            "{direction}: {plan:#}"
        );
    }
}

/// A plan node and every node below it.
fn nodes(plan: &Value) -> Vec<&Value> {
    let mut out = vec![plan];
    for child in plan["Plans"].as_array().into_iter().flatten() {
        out.extend(nodes(child));
    }
    out
}

#[actix_web::test]
async fn count_auto_counts_exactly_up_to_the_bound_and_estimates_past_it() {
    let app = TestApp::new().await;
    let alice = app.user("alice", "pw");
    let rows = |from: i64| {
        (from..from + 5)
            .map(|n| format!("({n}, {alice}, 'm{n}', '2020-01-01 00:00:00')"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    app.sql(&format!("INSERT INTO message VALUES {};", rows(1)));
    if app.is_postgres() {
        // The planner's statistics see five rows; five more go into the same page, which the
        // estimate (rows a page by the statistics, times the pages) does not see.
        app.sql("ANALYZE message;");
    }
    app.sql(&format!("INSERT INTO message VALUES {};", rows(6)));
    let count = |query: &'static str| {
        let app = &app;
        async move { app.get(query).await.json()["meta"]["count"].clone() }
    };
    // Under the bound (10,000 by default): exact.
    assert_eq!(count("/api/message/?count=auto&limit=2").await, 10);
    // The estimate past a bound of 2 on PostgreSQL; SQLite counts exactly.
    let past = count("/api/smallcount_message/?count=auto&limit=2").await;
    assert_eq!(past, if app.is_postgres() { 5 } else { 10 });
    // A resource may count so by default.
    assert_eq!(count("/api/smallcount_message/?limit=2").await, past);
    assert_eq!(
        count("/api/smallcount_message/?count=exact&limit=2").await,
        10
    );
    // The last page knows its count without asking the planner.
    assert_eq!(
        count("/api/smallcount_message/?count=auto&limit=4&page=3").await,
        10
    );
}

#[actix_web::test]
async fn readers_leave_the_connections_reserved_for_writes() {
    let app = TestApp::new().await;
    if !app.is_postgres() {
        return;
    }
    let url = format!(
        "{}?max_connections=4&reserved_for_writes=1&connection_timeout=0.3",
        app.database_url()
    );
    let db = plover::db::Database::from_url(&url).unwrap();
    let reads = |n| {
        let db = db.clone();
        std::thread::spawn(move || {
            // Three readers hold every connection readers may hold; a fourth waits in vain.
            let mut held: Vec<plover::db::LazyConn<'_>> = Vec::new();
            for _ in 0..n {
                let mut unit = plover::db::LazyConn::new(&db);
                unit.conn().expect("a reader's connection");
                held.push(unit);
            }
            let mut another = plover::db::LazyConn::new(&db);
            let refused = matches!(another.conn(), Err(plover::Error::Busy));
            // A write still finds its connection, by `writes` or by `write`.
            let mut writer = plover::db::LazyConn::new(&db);
            writer.writes();
            let wrote = writer.conn().is_ok();
            drop(writer);
            let mut writer = plover::db::LazyConn::new(&db);
            let counted = writer.write(|conn| {
                conn.batch_execute(
                    "INSERT INTO note (message, created) VALUES ('written', '2020-01-01 00:00:00')",
                )
            });
            drop(held);
            // Once the readers are done, a reader gets a connection again.
            let again = plover::db::LazyConn::new(&db).conn().is_ok();
            (refused, wrote, counted.is_ok(), again)
        })
    };
    let (refused, wrote, written, again) = reads(3).join().unwrap();
    assert!(refused, "a fourth reader gets no connection");
    assert!(wrote && written, "writes get the reserved connection");
    assert!(again);
    assert_eq!(
        app.query_i64("SELECT COUNT(*) FROM note WHERE message = 'written'"),
        1
    );
}
