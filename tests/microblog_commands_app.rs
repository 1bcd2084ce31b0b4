//! The microblog example's command line without its demo data and pages: its user model, which
//! requires an e-mail address, for the tests of `createsuperuser`, and its webhook for new
//! users (`WEBHOOK_URL`, `WEBHOOK_SECRET`, `WEBHOOK_TARGETS`).

use std::process::ExitCode;

use microblog::User;
use plover::manage::Commands;

fn main() -> ExitCode {
    let mut commands = Commands::<User>::new("microblog");
    match microblog::webhook_from_env() {
        Ok(Some(endpoint)) => {
            commands =
                commands.webhooks(move |db, auth| microblog::new_user_webhook(db, auth, &endpoint));
        }
        Ok(None) => {}
        Err(message) => {
            eprintln!("microblog: {message}");
            return ExitCode::from(2);
        }
    }
    commands.models(microblog::models()).run(microblog::routes)
}
