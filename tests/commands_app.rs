//! A small application on `plover::manage::Commands`, for the tests of the commands: Plover's
//! ready user model and one note model, a REST API, the accounts views and the admin.

use std::process::ExitCode;

use plover::accounts::User;
use plover::admin::Admin;
use plover::manage::Commands;
use plover::prelude::*;

/// A note; `title` came after the first release (the migration tests start without it).
#[derive(Debug, RestModel)]
#[diesel(table_name = cmd_note)]
#[rest(table, name = "note")]
pub struct Note {
    /// Primary key.
    pub id: i32,
    /// The text.
    pub text: String,
    /// A title.
    pub title: Option<String>,
}

fn main() -> ExitCode {
    Commands::<User>::new("notes")
        .about("The notes application of Plover's command tests")
        // The admin's history table comes without being listed.
        .models([User::meta(), Note::meta()])
        // A job that writes a note with its payload as the text.
        .jobs(|db| {
            let db = db.clone();
            plover::jobs::Jobs::new(db.clone()).handle("note", move |text: String| {
                let db = db.clone();
                async move {
                    let changes = NoteChanges {
                        text: Some(text),
                        ..NoteChanges::default()
                    };
                    db.run(move |conn| {
                        conn.transaction(|conn| plover::model::save::<Note>(conn, changes, None))
                    })
                    .await?;
                    Ok(())
                }
            })
        })
        .run(|db, auth| {
            let mut api = RestApi::new(db.clone());
            api.register_resource(Resource::<Note>::new().auth(UserAuthentication::new(auth)));
            let mut admin = Admin::new(auth);
            admin
                .register(plover::admin::ModelAdmin::<User>::new())
                .register(plover::admin::ModelAdmin::<Note>::new());
            let (api, accounts, admin) = (api.setup(), auth.setup(), admin.setup());
            move |cfg: &mut actix_web::web::ServiceConfig| {
                accounts(cfg);
                api(cfg);
                admin(cfg);
            }
        })
}
