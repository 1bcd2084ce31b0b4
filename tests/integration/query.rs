//! `plover::views::Query::exists` and `Query::delete`: what they select (conditions, joins,
//! bound values, a limit), and what a delete does to the rows that depend on the deleted ones
//! (deleted down a chain of required foreign keys, nullable ones set to NULL), in one
//! transaction that a failure rolls back, and as a savepoint of the caller's transaction.

use plover::db::Conn;
use plover::query::Op;
use plover::views::Query;
use plover::{Error, RestModel};
use plover_tests::*;

/// The A <- B <- C <- D chains of `CHAINS` (rows 1 and 2 of each), and H rows whose nullable
/// foreign key refers to A 1, A 2, or nothing.
const SEED: &str =
    "INSERT INTO hmodel (id, a_id, h_field) VALUES (1, 1, 'h1'), (2, 2, 'h2'), (3, NULL, 'h3');";

async fn app() -> TestApp {
    TestApp::with_seed(&format!("{CHAINS}\n{SEED}")).await
}

/// Runs `f` on a connection of `app`.
fn run<R>(app: &TestApp, f: impl FnOnce(&mut Conn<'_>) -> Result<R, Error>) -> Result<R, Error> {
    app.db.run_blocking(f)
}

/// The primary keys of the rows of `M`, ascending.
fn ids<M: RestModel>(app: &TestApp) -> Vec<i64> {
    let rows = run(app, |conn| Query::<M>::new().all(conn)).expect("rows");
    rows.iter().map(RestModel::pk).collect()
}

/// The primary keys of the rows of A, B, C and D.
fn chain(app: &TestApp) -> [Vec<i64>; 4] {
    [
        ids::<AModel>(app),
        ids::<BModel>(app),
        ids::<CModel>(app),
        ids::<DModel>(app),
    ]
}

#[actix_web::test]
async fn exists_answers_whether_any_row_matches() {
    let app = app().await;
    let a = AModel::FIELDS;
    let (yes, no, joined, hostile, limited) = run(&app, |conn| {
        Ok((
            Query::<AModel>::new()
                .filter(a.a_field, Op::Eq, "a2")
                .exists(conn)?,
            Query::<AModel>::new()
                .filter(a.a_field, Op::Eq, "a3")
                .exists(conn)?,
            Query::<DModel>::new()
                .filter(
                    DModel::FIELDS.c_id.join(CModel::FIELDS.c_field),
                    Op::Eq,
                    "c2",
                )
                .exists(conn)?,
            Query::<AModel>::new()
                .filter(a.a_field, Op::Eq, "a1' OR '1'='1")
                .exists(conn)?,
            // Like `count`, `exists` ignores the ordering and the limit.
            Query::<AModel>::new()
                .order_by_desc(a.id)
                .limit(0)
                .exists(conn)?,
        ))
    })
    .expect("queries");
    assert_eq!(
        (yes, no, joined, hostile, limited),
        (true, false, true, false, true)
    );
    let empty = run(&app, |conn| Query::<EModel>::new().exists(conn));
    assert!(matches!(empty, Ok(false)), "{empty:?}");
    // A value that does not fit its field is an error when the query runs, never a panic.
    let wrong = run(&app, |conn| {
        Query::<AModel>::new()
            .filter(a.id, Op::Eq, "abc")
            .exists(conn)
    });
    assert!(matches!(wrong, Err(Error::Internal(_))), "{wrong:?}");
}

#[actix_web::test]
async fn delete_deletes_the_matching_rows_and_their_dependents() {
    let app = app().await;
    let deleted = run(&app, |conn| {
        Query::<AModel>::new()
            .filter(AModel::FIELDS.a_field, Op::Eq, "a1")
            .delete(conn)
    });
    // The count is of AModel rows only.
    assert_eq!(deleted.expect("a delete"), 1);
    assert_eq!(chain(&app), [vec![2], vec![2], vec![2], vec![2]]);
    // Nullable references to the deleted row are set to NULL; their rows stay.
    assert_eq!(ids::<HModel>(&app), vec![1, 2, 3]);
    assert_eq!(
        app.query_i64("SELECT COUNT(*) FROM hmodel WHERE a_id IS NULL"),
        2
    );
    assert_eq!(app.query_i64("SELECT a_id FROM hmodel WHERE id = 2"), 2);

    // Through a join, deleting from the middle of the chain keeps what it refers to.
    let deleted = run(&app, |conn| {
        Query::<CModel>::new()
            .filter(
                CModel::FIELDS.b_id.join(BModel::FIELDS.b_field),
                Op::Eq,
                "b2",
            )
            .delete(conn)
    });
    assert_eq!(deleted.expect("a delete"), 1);
    assert_eq!(chain(&app), [vec![2], vec![2], vec![], vec![]]);
}

#[actix_web::test]
async fn delete_deletes_exactly_the_matching_rows_with_bound_values() {
    let app = TestApp::with_seed(
        "INSERT INTO emodel (id, e_field) VALUES (1, 'x'), (2, 'y'), (3, 'x'), (4, 'z'), (5, 'x');",
    )
    .await;
    let e = EModel::FIELDS;
    let nothing = run(&app, |conn| {
        Query::<EModel>::new()
            .filter(e.e_field, Op::Eq, "x' OR '1'='1")
            .delete(conn)
    });
    assert_eq!(nothing.expect("a delete"), 0);
    assert_eq!(app.count("emodel"), 5);

    // With a limit: the first rows in the query's order, and only those.
    let newest = run(&app, |conn| {
        Query::<EModel>::new()
            .filter(e.e_field, Op::Eq, "x")
            .order_by_desc(e.id)
            .limit(2)
            .delete(conn)
    });
    assert_eq!(newest.expect("a delete"), 2);
    assert_eq!(ids::<EModel>(&app), vec![1, 2, 4]);

    let some = run(&app, |conn| {
        Query::<EModel>::new()
            .filter_any(e.id, Op::In, [1, 4, 99])
            .delete(conn)
    });
    assert_eq!(some.expect("a delete"), 2);
    assert_eq!(ids::<EModel>(&app), vec![2]);

    // A query built wrong deletes nothing: the mistake is reported when it runs.
    let wrong = run(&app, |conn| {
        Query::<EModel>::new()
            .filter(e.id, Op::Eq, "abc")
            .delete(conn)
    });
    assert!(matches!(wrong, Err(Error::Internal(_))), "{wrong:?}");
    assert_eq!(ids::<EModel>(&app), vec![2]);
}

#[actix_web::test]
async fn delete_of_thousands_of_rows_deletes_them_all() {
    // More rows than an SQLite statement takes bound values (32766), each with a dependent
    // row; then one row with as many dependents, each with a dependent of its own.
    let app = TestApp::with_seed(
        "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 40000)
             INSERT INTO amodel (id, a_field) SELECT i, 'bulk' FROM n;
         INSERT INTO bmodel (id, a_id, b_field) SELECT id, id, 'b' FROM amodel;
         INSERT INTO amodel (id, a_field) VALUES (99998, 'many'), (99999, 'kept');
         INSERT INTO bmodel (id, a_id, b_field) SELECT id + 40000, 99998, 'b' FROM amodel WHERE id <= 40000;
         INSERT INTO cmodel (id, b_id, c_field) SELECT id, id, 'c' FROM bmodel WHERE a_id = 99998;",
    )
    .await;
    let a = AModel::FIELDS;
    let deleted = run(&app, |conn| {
        Query::<AModel>::new()
            .filter(a.a_field, Op::Eq, "bulk")
            .delete(conn)
    });
    assert_eq!(deleted.expect("a delete"), 40000);
    assert_eq!(ids::<AModel>(&app), vec![99998, 99999]);
    assert_eq!(app.count("bmodel"), 40000);

    let deleted = run(&app, |conn| {
        Query::<AModel>::new()
            .filter(a.a_field, Op::Eq, "many")
            .delete(conn)
    });
    assert_eq!(deleted.expect("a delete"), 1);
    assert_eq!(ids::<AModel>(&app), vec![99999]);
    assert_eq!((app.count("bmodel"), app.count("cmodel")), (0, 0));
}

#[actix_web::test]
async fn a_delete_that_fails_deletes_nothing() {
    // A table that no model describes refers to A 1: the A row cannot go, and the B, C and D
    // rows deleted before it in the same transaction come back.
    let app = TestApp::with_seed(&format!(
        "{CHAINS}
         CREATE TABLE foreign_ref (id INTEGER PRIMARY KEY, a_id INTEGER NOT NULL REFERENCES amodel(id));
         INSERT INTO foreign_ref VALUES (1, 1);"
    ))
    .await;
    let refused = run(&app, |conn| Query::<AModel>::new().delete(conn));
    assert!(matches!(refused, Err(Error::Conflict(_))), "{refused:?}");
    assert_eq!(
        chain(&app),
        [vec![1, 2], vec![1, 2], vec![1, 2], vec![1, 2]]
    );
}

#[actix_web::test]
async fn delete_in_a_transaction_is_part_of_it() {
    let app = app().await;
    let a1 = || Query::<AModel>::new().filter(AModel::FIELDS.a_field, Op::Eq, "a1");
    // The caller's transaction fails after the delete: everything comes back.
    let failed = run(&app, |conn| {
        conn.transaction(|conn| {
            assert_eq!(a1().delete(conn)?, 1);
            assert!(!a1().exists(conn)?);
            Err::<(), _>(Error::Conflict("changed my mind".into()))
        })
    });
    assert!(matches!(failed, Err(Error::Conflict(_))), "{failed:?}");
    assert_eq!(
        chain(&app),
        [vec![1, 2], vec![1, 2], vec![1, 2], vec![1, 2]]
    );
    assert_eq!(app.query_i64("SELECT a_id FROM hmodel WHERE id = 1"), 1);

    // A delete that fails inside a transaction rolls back its own work only; the caller's
    // transaction goes on and commits.
    app.sql(
        "CREATE TABLE foreign_ref (id INTEGER PRIMARY KEY, a_id INTEGER NOT NULL REFERENCES amodel(id));
         INSERT INTO foreign_ref VALUES (1, 2);",
    );
    let a2 = || Query::<AModel>::new().filter(AModel::FIELDS.a_field, Op::Eq, "a2");
    let done = run(&app, |conn| {
        conn.transaction(|conn| {
            let refused = a2().delete(conn);
            assert!(matches!(refused, Err(Error::Conflict(_))), "{refused:?}");
            assert!(a2().exists(conn)?);
            a1().delete(conn)
        })
    });
    assert_eq!(done.expect("a transaction"), 1);
    assert_eq!(chain(&app), [vec![2], vec![2], vec![2], vec![2]]);
}
