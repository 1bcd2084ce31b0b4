//! The management commands of `plover::manage`, run as a user runs them: the small
//! application of `tests/commands_app.rs` as a process, on SQLite or PostgreSQL.

use std::process::{Command, Output};

use plover::accounts::{User, UserModel};
use plover::prelude::*;
use plover_tests::*;

/// The application's program, run in `dir` (where its `migrations/` is) on `url`.
fn run(dir: &TempDir, url: &str, args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_plover-tests-commands"));
    command
        .args(args)
        .current_dir(dir.path())
        .env("DATABASE_URL", url)
        .env_remove("PLOVER_SUPERUSER_PASSWORD")
        .env_remove("SECRET_KEY");
    for (key, value) in env {
        command.env(key, value);
    }
    command.output().expect("the commands' application runs")
}

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn help_lists_every_command_and_a_wrong_one_is_a_usage_error() {
    let dir = TempDir::new();
    let out = run(&dir, "sqlite://unused.db", &["--help"], &[]);
    assert!(out.status.success());
    for command in [
        "serve",
        "check",
        "makemigrations",
        "migrate",
        "createsuperuser",
        "openapi",
        "routes",
    ] {
        assert!(
            stdout(&out).contains(command),
            "{command}: {}",
            stdout(&out)
        );
    }
    let out = run(
        &dir,
        "sqlite://unused.db",
        &["makemigrations", "--help"],
        &[],
    );
    assert!(stdout(&out).contains("--empty"), "{}", stdout(&out));
    let out = run(&dir, "sqlite://unused.db", &["serve-all"], &[]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
}

#[test]
fn createsuperuser_makes_an_administrator_who_can_log_in_once() {
    let (db, store) = fresh_database("");
    let (dir, url) = (TempDir::new(), store.url());
    let password = [("PLOVER_SUPERUSER_PASSWORD", "a long passphrase")];
    let args = ["createsuperuser", "--username", "root"];
    let out = run(&dir, &url, &args, &password);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stdout(&out).starts_with("created root (id "),
        "{}",
        stdout(&out)
    );

    let auth = Auth::<User>::new(db.clone());
    let root = db
        .run_blocking(|c| auth.find_user(c, "root"))
        .unwrap()
        .expect("the user exists");
    assert!(root.admin && root.active && root.is_admin());
    assert!(root.check_password("a long passphrase"));
    assert!(root.password.starts_with("$2"), "stored as a bcrypt hash");

    // The username rules hold here as for every writer.
    let out = run(
        &dir,
        &url,
        &["createsuperuser", "--username", "ROOT"],
        &password,
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("a user named 'root' exists"),
        "{}",
        stderr(&out)
    );
    // No password and no terminal: a clear refusal, nothing written.
    let out = run(&dir, &url, &["createsuperuser", "--username", "other"], &[]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("PLOVER_SUPERUSER_PASSWORD"),
        "{}",
        stderr(&out)
    );
    assert_eq!(
        scalar(&db, "SELECT COUNT(*) FROM users").as_deref(),
        Some("1")
    );
}

#[test]
fn routes_and_openapi_print_what_plover_mounts() {
    let (dir, url) = (TempDir::new(), "sqlite://unused.db");
    let out = run(&dir, url, &["routes"], &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    let routes = stdout(&out);
    for line in [
        "GET, POST         /api/note/                   REST list of note",
        "GET, PUT, DELETE  /api/note/{pk}/              REST detail of note",
        "/accounts/login/",
        "/admin/user/{pk}/",
    ] {
        assert!(routes.contains(line), "{line}: {routes}");
    }
    let out = run(&dir, url, &["openapi"], &[]);
    let document: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(document["openapi"], "3.1.0");
    assert!(document["paths"]["/api/note/"].is_object(), "{document}");
    let out = run(&dir, url, &["openapi", "--prefix", "/v2"], &[]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("this application has: /api"),
        "{}",
        stderr(&out)
    );
}

/// The notes table as the first release made it: no `title`.
const OLD_NOTES: &str = "CREATE TABLE cmd_note (id INTEGER PRIMARY KEY, text TEXT NOT NULL); \
     INSERT INTO cmd_note (id, text) VALUES (7, 'kept');";

#[test]
fn drift_then_makemigrations_and_migrate_then_a_clean_start_with_the_data_kept() {
    let (db, store) = fresh_database("");
    let (dir, url) = (TempDir::new(), store.url());
    db.run_blocking(|c| c.batch_execute(OLD_NOTES)).unwrap();

    // The server does not start on the old table: the report, as plain lines.
    let out = run(&dir, &url, &["serve", "--bind", "127.0.0.1:0"], &[]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let report = stderr(&out);
    assert!(report.starts_with("notes: the database does not match the models (1 difference):\n  - table \"cmd_note\": column \"title\" is missing\n"), "{report}");
    let out = run(&dir, &url, &["check"], &[]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stdout(&out).contains("ADD COLUMN \"title\" TEXT"),
        "{}",
        stdout(&out)
    );

    let out = run(&dir, &url, &["makemigrations", "add_title"], &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stdout(&out).starts_with("wrote migrations/"),
        "{}",
        stdout(&out)
    );
    assert!(stdout(&out).contains("_add_title"), "{}", stdout(&out));
    let out = run(&dir, &url, &["check"], &[]);
    assert!(
        stdout(&out).contains("_add_title is not applied: run `migrate`"),
        "{}",
        stdout(&out)
    );

    let out = run(&dir, &url, &["migrate"], &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stdout(&out).starts_with("applied "), "{}", stdout(&out));
    assert!(
        stdout(&out).trim_end().ends_with("_add_title"),
        "{}",
        stdout(&out)
    );
    let out = run(&dir, &url, &["migrate"], &[]);
    assert_eq!(stdout(&out), "no migrations to apply\n");
    let out = run(&dir, &url, &["check"], &[]);
    assert!(out.status.success(), "{}{}", stdout(&out), stderr(&out));
    let out = run(&dir, &url, &["makemigrations", "again"], &[]);
    assert_eq!(
        stdout(&out),
        "no changes: the database matches the models\n"
    );

    // The start goes through now (it stops at the address it cannot bind), the row kept.
    let out = run(&dir, &url, &["serve", "--bind", "256.0.0.1:1"], &[]);
    assert!(!stderr(&out).contains("does not match"), "{}", stderr(&out));
    let kept = scalar(&db, "SELECT text FROM cmd_note WHERE id = 7");
    assert_eq!(kept.as_deref(), Some("kept"));
    // The admin's history table is there, though the application lists only its own models.
    let history = scalar(&db, "SELECT COUNT(*) FROM plover_history");
    assert_eq!(history.as_deref(), Some("0"));
}
