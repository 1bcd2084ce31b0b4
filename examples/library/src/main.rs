//! Serves the library catalogue: `cargo run -p library` (SQLite file `library.db`; set
//! `DATABASE_URL` for another database) on http://127.0.0.1:8001/. The first start creates an
//! admin member `librarian` with the password `librarian`. `library --help` lists the other
//! commands.

use std::process::ExitCode;

use library::{models, routes, Member};
use plover::manage::Commands;

fn main() -> ExitCode {
    env_logger::Builder::from_env(env_logger::Env::default().default_filter_or("info")).init();
    Commands::<Member>::new("library")
        .about("Plover's library example: a catalogue with loans, its REST API and its admin")
        .bind("127.0.0.1:8001")
        .models(models())
        .on_start(|db, auth| {
            db.run_blocking(|conn| match auth.find_user(conn, "librarian")? {
                Some(_) => Ok(()),
                None => auth
                    .create_user(conn, "librarian", "librarian", true)
                    .map(drop),
            })?;
            eprintln!("library: the admin is on /admin/ (librarian / librarian)");
            Ok(())
        })
        .run(routes)
}
