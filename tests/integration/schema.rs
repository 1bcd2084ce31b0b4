//! The schema from the models (docs/contract.md#schema): the tables that `plover::schema` creates
//! hold what the models declare (types, NOT NULL, UNIQUE, REFERENCES, indexes), in foreign-key
//! order, in one transaction. Every other test runs on these tables too: the fixture app has no
//! hand-written DDL for its models.

use plover::db::Engine;
use plover::model::ModelMeta;
use plover::prelude::*;
use plover::schema;
use plover_tests::*;

fn engine(app: &TestApp) -> Engine {
    app.db.run_blocking(|c| Ok(c.engine())).unwrap()
}

fn index_exists(app: &TestApp, name: &str) -> bool {
    let sql = match engine(app) {
        Engine::Sqlite => {
            format!("SELECT COUNT(*) FROM sqlite_master WHERE type = 'index' AND name = '{name}'")
        }
        Engine::Postgres => format!("SELECT COUNT(*) FROM pg_indexes WHERE indexname = '{name}'"),
    };
    app.query_i64(&sql) == 1
}

fn fails(app: &TestApp, sql: &str) -> bool {
    let sql = sql.to_owned();
    app.db.run_blocking(move |c| c.batch_execute(&sql)).is_err()
}

#[actix_web::test]
async fn the_tables_hold_what_the_models_declare() {
    let app = TestApp::with_seed("INSERT INTO amodel VALUES (1, 'a');").await;
    // NOT NULL where the field is not an Option; NULL accepted where it is.
    assert!(fails(
        &app,
        "INSERT INTO amodel (id, a_field) VALUES (2, NULL)"
    ));
    app.sql("INSERT INTO fmodel (id, e_id, f_field) VALUES (1, NULL, 'f')");
    // UNIQUE from #[rest(unique)].
    app.sql("INSERT INTO apikey (id, key, secret) VALUES (1, 'k', 's')");
    assert!(fails(
        &app,
        "INSERT INTO apikey (id, key, secret) VALUES (2, 'k', 't')"
    ));
    // REFERENCES from #[rest(fk = ...)].
    assert!(fails(
        &app,
        "INSERT INTO bmodel (id, a_id, b_field) VALUES (1, 99, 'b')"
    ));
    app.sql("INSERT INTO bmodel (id, a_id, b_field) VALUES (1, 1, 'b')");
    // The primary key is numbered by the database.
    app.sql("INSERT INTO emodel (e_field) VALUES ('e')");
    assert_eq!(app.query_i64("SELECT MAX(id) FROM emodel"), 1);
    // An index per foreign key, and the declared ones.
    for index in [
        "bmodel_a_id",
        "relationship_from_user_id",
        "message_user_id_pub_date_id_desc",
        "message_pub_date_id_desc",
    ] {
        assert!(index_exists(&app, index), "index {index}");
    }
    // The foreign key's own index is left out where a declared index starts with its column.
    assert!(!index_exists(&app, "message_user_id"));
}

#[actix_web::test]
async fn creation_runs_in_foreign_key_order_and_again_changes_nothing() {
    let app = TestApp::with_seed("INSERT INTO amodel VALUES (1, 'kept');").await;
    let mut models = plover_conformance_app::models::models();
    models.reverse(); // every referring table before the table it refers to
    let order = schema::fk_order(&models).unwrap();
    let at = |table: &str| order.iter().position(|m| m.table() == table).unwrap();
    assert!(at("user") < at("message") && at("amodel") < at("bmodel"));
    assert!(at("bmodel") < at("cmodel") && at("cmodel") < at("dmodel"));
    app.db
        .run_blocking(move |c| schema::create_tables(c, &models))
        .unwrap();
    assert_eq!(
        app.query_text("SELECT a_field FROM amodel").as_deref(),
        Some("kept")
    );
}

#[actix_web::test]
async fn a_creation_that_fails_midway_creates_nothing() {
    let (db, _store) = fresh_database("");
    // A view where the message table would be: its index cannot be created, after "user" and
    // "relationship" were.
    db.run_blocking(|c| c.batch_execute("CREATE VIEW message AS SELECT 1 AS id"))
        .unwrap();
    let failed = db.run_blocking(|c| schema::create_tables(c, &microblog::models()));
    assert!(failed.is_err());
    let tables = db.run_blocking(|c| {
        c.batch_execute("SELECT * FROM \"user\"")
            .and_then(|()| c.batch_execute("SELECT * FROM relationship"))
    });
    assert!(tables.is_err(), "no table of the failed creation is left");
}

mod cycle {
    use plover::prelude::*;

    diesel::table! { cyc_a (id) { id -> Integer, b_id -> Nullable<Integer>, } }
    diesel::table! { cyc_b (id) { id -> Integer, a_id -> Nullable<Integer>, } }
    diesel::table! { tree (id) { id -> Integer, parent_id -> Nullable<Integer>, } }

    /// Refers to a `B`.
    #[derive(Debug, RestModel)]
    #[diesel(table_name = cyc_a)]
    pub struct A {
        pub id: i32,
        #[rest(fk = B)]
        pub b_id: Option<i32>,
    }

    /// Refers to an `A`.
    #[derive(Debug, RestModel)]
    #[diesel(table_name = cyc_b)]
    pub struct B {
        pub id: i32,
        #[rest(fk = A)]
        pub a_id: Option<i32>,
    }

    /// Refers to itself.
    #[derive(Debug, RestModel)]
    #[diesel(table_name = tree)]
    pub struct Tree {
        pub id: i32,
        #[rest(fk = Tree)]
        pub parent_id: Option<i32>,
    }
}

#[test]
fn a_cycle_of_foreign_keys_is_an_error_and_a_model_may_refer_to_itself() {
    use cycle::{Tree, A, B};
    let models: [&'static ModelMeta; 2] = [A::meta(), B::meta()];
    let err = schema::fk_order(&models).unwrap_err().to_string();
    assert!(err.contains("cycle: cyc_a, cyc_b"), "{err}");
    let sql = schema::script(&[Tree::meta()], Engine::Sqlite).unwrap();
    assert!(
        sql.contains(r#""parent_id" INTEGER REFERENCES "tree" ("id")"#),
        "{sql}"
    );
    let (db, _store) = fresh_database("");
    db.run_blocking(|c| schema::create_tables(c, &[Tree::meta()]))
        .unwrap();
}

/// A database made by an older Ticket: no `body`, no `opened`; `priority` nullable.
const OLD_TICKET: &str = "CREATE TABLE ticket (id INTEGER PRIMARY KEY, title TEXT NOT NULL, \
     priority INTEGER, status TEXT NOT NULL DEFAULT 'open', secret_note TEXT NOT NULL DEFAULT '', \
     parent_id INTEGER REFERENCES ticket (id)); \
     INSERT INTO ticket (id, title, priority, status) VALUES (1, 'kept', 2, 'open');";

#[actix_web::test]
async fn drift_stops_the_start_with_every_difference_and_the_safe_fixes() {
    use plover_tests::Ticket;
    let (db, _store) = fresh_database("");
    db.run_blocking(|c| c.batch_execute(OLD_TICKET)).unwrap();
    let err = db
        .run_blocking(|c| schema::create_tables(c, &[Ticket::meta()]))
        .expect_err("the drift is found");
    let report = err.to_string();
    assert!(report.contains("3 differences"), "{report}");
    assert!(report.contains("column \"body\" is missing"), "{report}");
    assert!(
        report.contains("column \"opened\" is missing, and existing rows cannot take it"),
        "{report}"
    );
    assert!(
        report.contains("column \"priority\" accepts NULL"),
        "{report}"
    );
    assert!(
        report.contains(&format!(
            "ALTER TABLE \"ticket\" ADD COLUMN \"body\" {} NOT NULL DEFAULT ''",
            text_type()
        )),
        "{report}"
    );
    // Nothing was changed: the report is all.
    let columns = |db: &Database| {
        db.run_blocking(|c| schema::differences(c, Ticket::meta()))
            .unwrap()
            .len()
    };
    assert_eq!(columns(&db), 3);

    // The application's own migration fixes the rest; the start then goes through, data kept.
    let fix = match db.run_blocking(|c| Ok(c.engine())).unwrap() {
        Engine::Sqlite => {
            "ALTER TABLE ticket ADD COLUMN body TEXT NOT NULL DEFAULT ''; \
             ALTER TABLE ticket ADD COLUMN opened DATE NOT NULL DEFAULT '2026-01-01'; \
             UPDATE ticket SET priority = 3 WHERE priority IS NULL; \
             CREATE TABLE ticket2 (id INTEGER PRIMARY KEY, title TEXT NOT NULL, \
               priority INTEGER NOT NULL, status TEXT NOT NULL, body TEXT NOT NULL, \
               secret_note TEXT NOT NULL, opened DATE NOT NULL, \
               parent_id INTEGER REFERENCES ticket (id)); \
             INSERT INTO ticket2 SELECT id, title, priority, status, body, secret_note, opened, \
               parent_id FROM ticket; DROP TABLE ticket; ALTER TABLE ticket2 RENAME TO ticket;"
        }
        Engine::Postgres => {
            "ALTER TABLE ticket ADD COLUMN body TEXT NOT NULL DEFAULT ''; \
             ALTER TABLE ticket ADD COLUMN opened DATE NOT NULL DEFAULT '2026-01-01'; \
             UPDATE ticket SET priority = 3 WHERE priority IS NULL; \
             ALTER TABLE ticket ALTER COLUMN priority SET NOT NULL;"
        }
    };
    db.run_blocking(move |c| c.batch_execute(fix)).unwrap();
    db.run_blocking(|c| schema::create_tables(c, &[Ticket::meta()]))
        .expect("no drift left");
    assert_eq!(columns(&db), 0);
    let title = db
        .run_blocking(|c| <Ticket as RestModel>::load_pk(c, 1))
        .unwrap()
        .map(|t| t.title);
    assert_eq!(title.as_deref(), Some("kept"));
}

#[actix_web::test]
async fn a_column_of_another_type_is_drift_a_compatible_spelling_is_not() {
    use plover_tests::Ticket;
    let (db, _store) = fresh_database("");
    // VARCHAR holds text on both engines; a priority kept as text does not hold an i32.
    db.run_blocking(|c| {
        c.batch_execute(
            "CREATE TABLE ticket (id INTEGER PRIMARY KEY, title VARCHAR(100) NOT NULL, \
             priority TEXT NOT NULL, status TEXT NOT NULL, body TEXT NOT NULL, \
             secret_note TEXT NOT NULL, opened DATE NOT NULL, \
             parent_id INTEGER REFERENCES ticket (id))",
        )
    })
    .unwrap();
    let found = db
        .run_blocking(|c| schema::differences(c, Ticket::meta()))
        .unwrap();
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(
        found[0].what.contains("column \"priority\" is"),
        "{found:?}"
    );
    assert_eq!(found[0].fix, None);
}

/// A database made by an older Ticket that lacks two columns every row can take.
const TICKET_WITHOUT_BODY: &str = "CREATE TABLE ticket (id INTEGER PRIMARY KEY, \
     title TEXT NOT NULL, priority INTEGER NOT NULL, status TEXT NOT NULL, \
     opened DATE NOT NULL, parent_id INTEGER REFERENCES ticket (id)); \
     INSERT INTO ticket (id, title, priority, status, opened) \
     VALUES (1, 'kept', 2, 'open', '2026-01-01');";

fn make(
    db: &Database,
    dir: &std::path::Path,
    name: &str,
    empty: bool,
) -> Result<Option<std::path::PathBuf>, plover::Error> {
    let (dir, name) = (dir.to_owned(), name.to_owned());
    db.run_blocking(move |c| {
        schema::migrations::make(c, &[plover_tests::Ticket::meta()], &dir, &name, empty)
    })
}

#[actix_web::test]
async fn a_migration_written_from_the_drift_and_applied_lets_the_start_through_data_kept() {
    use plover::schema::migrations;
    use plover_tests::Ticket;
    let (db, _store) = fresh_database("");
    let dir = TempDir::new();
    db.run_blocking(|c| c.batch_execute(TICKET_WITHOUT_BODY))
        .unwrap();
    let start = || db.run_blocking(|c| schema::create_tables(c, &[Ticket::meta()]));
    let report = start().expect_err("the drift stops the start").to_string();
    assert!(report.contains("`makemigrations` command"), "{report}");

    let folder = make(&db, dir.path(), "add_body", false)
        .unwrap()
        .expect("a migration is written");
    let engine = db.run_blocking(|c| Ok(c.engine())).unwrap();
    assert_eq!(
        folder.parent(),
        Some(&*migrations::engine_dir(dir.path(), engine))
    );
    let name = folder.file_name().unwrap().to_string_lossy().into_owned();
    assert!(name.ends_with("_add_body"), "{name}");
    let up = std::fs::read_to_string(folder.join("up.sql")).unwrap();
    let down = std::fs::read_to_string(folder.join("down.sql")).unwrap();
    assert!(
        up.contains(&format!(
            "ALTER TABLE \"ticket\" ADD COLUMN \"body\" {} NOT NULL DEFAULT '';",
            text_type()
        )),
        "{up}"
    );
    assert!(up.contains("ADD COLUMN \"secret_note\""), "{up}");
    assert!(
        down.contains("ALTER TABLE \"ticket\" DROP COLUMN \"body\";"),
        "{down}"
    );

    // Written, not applied: the start still stops, and a second `make` waits for `migrate`.
    start().expect_err("not applied yet");
    let pending = db
        .run_blocking({
            let dir = dir.path().to_owned();
            move |c| migrations::pending(c, &dir)
        })
        .unwrap();
    assert_eq!(pending, std::slice::from_ref(&name));
    let err = make(&db, dir.path(), "again", false)
        .unwrap_err()
        .to_string();
    assert!(err.contains("apply them first"), "{err}");

    let applied = db
        .run_blocking({
            let dir = dir.path().to_owned();
            move |c| migrations::apply(c, &dir)
        })
        .unwrap();
    assert_eq!(applied, std::slice::from_ref(&name));
    start().expect("no drift left");
    let kept = db
        .run_blocking(|c| <Ticket as RestModel>::load_pk(c, 1))
        .unwrap()
        .expect("the row is kept");
    assert_eq!((kept.title.as_str(), kept.body.as_str()), ("kept", ""));
    // Recorded as diesel records it; nothing left to write or apply.
    db.run_blocking(|c| c.batch_execute("SELECT version FROM __diesel_schema_migrations"))
        .expect("diesel's table");
    assert_eq!(make(&db, dir.path(), "nothing", false).unwrap(), None);
}

#[actix_web::test]
async fn a_difference_without_a_safe_fix_stops_makemigrations_unless_empty_is_asked() {
    use plover_tests::Ticket;
    let (db, _store) = fresh_database("");
    let dir = TempDir::new();
    db.run_blocking(|c| c.batch_execute(OLD_TICKET)).unwrap();
    let err = make(&db, dir.path(), "fix_ticket", false)
        .unwrap_err()
        .to_string();
    assert!(err.contains("column \"opened\" is missing"), "{err}");
    assert!(err.contains("--empty"), "{err}");
    assert_eq!(
        std::fs::read_dir(dir.path()).unwrap().count(),
        0,
        "nothing written"
    );
    assert!(make(&db, dir.path(), "Bad Name", false).is_err());

    let folder = make(&db, dir.path(), "fix_ticket", true).unwrap().unwrap();
    let up = std::fs::read_to_string(folder.join("up.sql")).unwrap();
    // The safe statement, then the differences left to the hand that writes the rest.
    assert!(up.contains("ADD COLUMN \"body\""), "{up}");
    assert!(
        up.contains("-- table ticket: column \"opened\" is missing"),
        "{up}"
    );
    db.run_blocking(|c| schema::create_tables(c, &[Ticket::meta()]))
        .expect_err("still drift");
}

#[actix_web::test]
async fn a_migration_creates_the_tables_that_do_not_exist_in_foreign_key_order() {
    use plover::schema::migrations;
    let (db, _store) = fresh_database("");
    let dir = TempDir::new();
    let models = [Message::meta(), User::meta()];
    let path = dir.path().to_owned();
    let applied = db
        .run_blocking(move |c| {
            let folder = migrations::make(c, &models, &path, "initial", false)?.unwrap();
            let up = std::fs::read_to_string(folder.join("up.sql")).unwrap();
            let (user, message) = (
                up.find("\"user\" (").unwrap(),
                up.find("\"message\" (").unwrap(),
            );
            assert!(user < message, "{up}");
            let down = std::fs::read_to_string(folder.join("down.sql")).unwrap();
            assert!(
                down.find("DROP TABLE \"message\"").unwrap()
                    < down.find("DROP TABLE \"user\"").unwrap(),
                "{down}"
            );
            migrations::apply(c, &path)
        })
        .unwrap();
    assert_eq!(applied.len(), 1);
    db.run_blocking(move |c| schema::create_tables(c, &models))
        .expect("the tables match");
}

mod drifting {
    use plover::prelude::*;

    diesel::table! { dr_parent (id) { id -> Integer, } }
    diesel::table! {
        dr_child (id) { id -> Integer, code -> Text, name -> Text, short -> Text, parent_id -> Integer, }
    }

    /// Referred to.
    #[derive(Debug, RestModel)]
    #[diesel(table_name = dr_parent)]
    pub struct Parent {
        pub id: i32,
    }

    /// A unique code, a name of any length, a short name, a foreign key.
    #[derive(Debug, RestModel)]
    #[diesel(table_name = dr_child)]
    pub struct Child {
        pub id: i32,
        #[rest(unique)]
        pub code: String,
        pub name: String,
        #[rest(max_len = 5)]
        pub short: String,
        #[rest(fk = Parent)]
        pub parent_id: i32,
    }
}

/// The differences of `Child`'s table, made by Plover's own statements edited by `edit`.
fn drift_of(edit: impl Fn(String) -> String) -> (Database, Vec<schema::Difference>, Store) {
    use drifting::{Child, Parent};
    let (db, store) = fresh_database("");
    let engine = db.run_blocking(|c| Ok(c.engine())).unwrap();
    let sql = edit(schema::script(&[Parent::meta(), Child::meta()], engine).unwrap());
    db.run_blocking(|c| c.batch_execute(&sql)).unwrap();
    let found = db
        .run_blocking(|c| schema::differences(c, Child::meta()))
        .unwrap();
    (db, found, store)
}

#[test]
fn a_shorter_column_a_dropped_unique_and_a_dropped_foreign_key_are_drift() {
    use drifting::{Child, Parent};
    // The statements as Plover writes them: no drift.
    assert_eq!(drift_of(|sql| sql).1, []);

    // A column narrowed to varchar(5): PostgreSQL would refuse a longer name with a 500.
    // Text columns in the database's collation, as tables made before `COLLATE "C"`: no drift.
    let narrowed = |sql: String| {
        without_collation(sql)
            .replace(r#""name" TEXT"#, r#""name" VARCHAR(5)"#)
            .replace(r#""short" TEXT"#, r#""short" VARCHAR(5)"#)
    };
    let (db, found, _store) = drift_of(narrowed);
    if on_postgres() {
        assert_eq!(found.len(), 1, "{found:?}");
        assert!(
            found[0].what.contains(
                "column \"name\" holds at most 5 characters, the model's `name` accepts any length"
            ),
            "{found:?}"
        );
        apply_fixes(&db, &found);
    } else {
        assert_eq!(found, [], "SQLite stores any length whatever the type says");
    }

    // No UNIQUE on the code.
    let (db, found, _store) = drift_of(|sql| {
        without_collation(sql).replace(r#""code" TEXT NOT NULL UNIQUE"#, r#""code" TEXT NOT NULL"#)
    });
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(
        found[0].what.contains("column \"code\" is not UNIQUE"),
        "{found:?}"
    );
    apply_fixes(&db, &found);

    // No foreign key on parent_id.
    let (db, found, _store) = drift_of(|sql| sql.replace(r#" REFERENCES "dr_parent" ("id")"#, ""));
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(
        found[0]
            .what
            .contains("column \"parent_id\" has no foreign key to \"dr_parent\""),
        "{found:?}"
    );
    if on_postgres() {
        apply_fixes(&db, &found);
    } else {
        assert_eq!(
            found[0].fix, None,
            "SQLite cannot add a foreign key to a table"
        );
    }
    // The start stops on each.
    let err = db
        .run_blocking(|c| schema::create_tables(c, &[Parent::meta(), Child::meta()]))
        .err();
    assert_eq!(err.is_some(), !on_postgres(), "{err:?}");
}

/// Runs the fixes of `found`; then the table matches its model, and holds what it refused.
fn apply_fixes(db: &Database, found: &[schema::Difference]) {
    use drifting::{Child, Parent};
    let fixes: Vec<String> = found
        .iter()
        .map(|d| d.fix.clone().expect("a fix"))
        .collect();
    let sql = fixes.join(";\n");
    db.run_blocking(|c| c.batch_execute(&sql)).unwrap();
    let left = db
        .run_blocking(|c| schema::differences(c, Child::meta()))
        .unwrap();
    assert_eq!(left, [], "{sql}");
    db.run_blocking(|c| schema::create_tables(c, &[Parent::meta(), Child::meta()]))
        .expect("no drift left");
    // The fixed table takes a long name, and refuses a second code and an unknown parent.
    db.run_blocking(|c| {
        c.batch_execute(
            "INSERT INTO dr_parent (id) VALUES (1); INSERT INTO dr_child (code, name, short, \
             parent_id) VALUES ('a', 'a name of sixteen', 'ab', 1)",
        )
    })
    .unwrap();
    for refused in [
        "INSERT INTO dr_child (code, name, short, parent_id) VALUES ('a', 'n', 's', 1)",
        "INSERT INTO dr_child (code, name, short, parent_id) VALUES ('b', 'n', 's', 9)",
    ] {
        assert!(
            db.run_blocking(|c| c.batch_execute(refused)).is_err(),
            "{refused}"
        );
    }
}

mod evolving {
    use plover::prelude::*;

    diesel::table! {
        ev_item (id) { id -> Integer, name -> Text, label -> Nullable<Text>, size -> Integer, }
    }

    /// An item whose `old_label` became `label`, which gained a required `size` and lost
    /// `gone`; the model of `ev_retired` was removed.
    #[derive(Debug, RestModel)]
    #[diesel(table_name = ev_item)]
    pub struct Item {
        pub id: i32,
        pub name: String,
        pub label: Option<String>,
        pub size: i32,
    }
}

/// The database of the previous release, with rows.
const PREVIOUS_RELEASE: &str = "CREATE TABLE ev_item (id INTEGER PRIMARY KEY, \
     name TEXT NOT NULL, old_label TEXT, gone TEXT NOT NULL DEFAULT 'x'); \
     CREATE TABLE ev_retired (id INTEGER PRIMARY KEY, what TEXT); \
     INSERT INTO ev_item (id, name, old_label) VALUES (1, 'one', 'first'), (2, 'two', NULL); \
     INSERT INTO ev_retired (id, what) VALUES (1, 'old');";

#[test]
fn removed_renamed_and_required_fields_make_a_migration_that_keeps_the_rows() {
    use evolving::Item;
    use schema::migrations::{self, Options};
    let (db, _store) = fresh_database("");
    let dir = TempDir::new();
    db.run_blocking(|c| c.batch_execute(PREVIOUS_RELEASE))
        .unwrap();
    let models = [Item::meta()];
    let make = |options: Options| {
        let path = dir.path().to_owned();
        db.run_blocking(move |c| migrations::make_with(c, &models, &path, &options))
    };
    // `check` sees the removed column and table (the start goes on past them: inserts may
    // leave `gone` out; it stops on the required `size`).
    let mut found = db
        .run_blocking(|c| schema::differences(c, Item::meta()))
        .unwrap();
    found.extend(
        db.run_blocking(|c| schema::leftover_tables(c, &models))
            .unwrap(),
    );
    let report = schema::report(&found);
    for expected in [
        "column \"old_label\" is in the table, not in the model",
        "column \"gone\" is in the table, not in the model",
        "table \"ev_retired\" has no model",
        "column \"size\" is missing",
        "--default",
    ] {
        assert!(report.contains(expected), "{expected}: {report}");
    }
    let start = db
        .run_blocking(|c| schema::create_tables(c, &models))
        .unwrap_err()
        .to_string();
    assert!(
        start.contains("\"size\"") && !start.contains("\"gone\""),
        "{start}"
    );

    // Dropping needs to be asked for; a required column needs a value; nothing is written.
    let err = make(Options::default()).unwrap_err().to_string();
    assert!(
        err.contains("--allow-drop") && err.contains("ev_retired"),
        "{err}"
    );
    let dropping = || Options {
        allow_drop: true,
        renames: vec![("old_label".into(), "label".into())],
        ..Options::default()
    };
    let err = make(dropping()).unwrap_err().to_string();
    assert!(err.contains("--default"), "{err}");
    assert!(!dir.path().join("sqlite").exists() && !dir.path().join("postgres").exists());
    let err = make(Options {
        defaults: vec![("ev_item.size".into(), "seven".into())],
        ..dropping()
    })
    .unwrap_err()
    .to_string();
    assert!(err.contains("a whole number"), "{err}");

    // With a one-off value and the rename: a migration with a name of its own.
    let folder = make(Options {
        defaults: vec![("ev_item.size".into(), "7".into())],
        ..dropping()
    })
    .unwrap()
    .expect("a migration");
    let name = folder.file_name().unwrap().to_string_lossy().into_owned();
    assert!(name.ends_with("_rename_ev_item_label_and_more"), "{name}");
    let path = dir.path().to_owned();
    db.run_blocking(move |c| migrations::apply(c, &path))
        .unwrap();
    db.run_blocking(|c| schema::create_tables(c, &models))
        .expect("the tables match the models");
    let left = db
        .run_blocking(|c| schema::differences(c, Item::meta()))
        .unwrap();
    assert_eq!(left, []);
    assert_eq!(
        db.run_blocking(|c| schema::leftover_tables(c, &models))
            .unwrap(),
        []
    );
    // The rows are kept, the renamed column with its data, the new one filled in.
    for (id, label) in [(1, "first"), (2, "-")] {
        let row = scalar(
            &db,
            &format!("SELECT name || '/' || COALESCE(label, '-') || '/' || size FROM ev_item WHERE id = {id}"),
        );
        let name = if id == 1 { "one" } else { "two" };
        assert_eq!(row.as_deref(), Some(format!("{name}/{label}/7").as_str()));
    }
    assert!(db
        .run_blocking(|c| c.batch_execute("SELECT gone FROM ev_item"))
        .is_err());
    assert!(db
        .run_blocking(|c| c.batch_execute("SELECT * FROM ev_retired"))
        .is_err());
}

/// The type of a text column as Plover writes it on this run's engine.
fn text_type() -> &'static str {
    if on_postgres() {
        "TEXT COLLATE \"C\""
    } else {
        "TEXT"
    }
}

/// `sql` with its text columns in the database's collation.
fn without_collation(sql: String) -> String {
    sql.replace(" COLLATE \"C\"", "")
}
