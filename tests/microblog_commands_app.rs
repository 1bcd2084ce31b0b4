//! The microblog example's command line without its demo data and pages: its user model, which
//! requires an e-mail address, for the tests of `createsuperuser`.

use std::process::ExitCode;

use microblog::User;
use plover::manage::Commands;

fn main() -> ExitCode {
    Commands::<User>::new("microblog")
        .models(microblog::models())
        .run(microblog::routes)
}
