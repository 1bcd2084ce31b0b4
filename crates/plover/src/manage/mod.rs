//! The command line of an application: one call in `main` gives it Django's management
//! commands (feature `manage`, on by default).
//!
//! | command | what it does |
//! |---|---|
//! | `serve` (also with no command) | creates the missing tables, stops on [schema drift](crate::schema::differences), runs the start hooks, serves |
//! | `check` | compares the models with the database and lists the migrations not applied; exit status 1 if either needs work |
//! | `makemigrations [NAME] [--empty] [--allow-drop] [--default FIELD=VALUE] [--rename OLD=NEW]` | writes a migration folder of the fixes ([`schema::migrations::make_with`]) |
//! | `migrate` | applies the migrations not applied yet ([`schema::migrations::apply`]) |
//! | `createsuperuser [--username NAME] [--FIELD VALUE]` | creates an active administrator ([`Auth::create_user_with`]): the username and each field the user model requires without a default from its option, else `PLOVER_SUPERUSER_<NAME>`, else asked on the terminal; the password from `PLOVER_SUPERUSER_PASSWORD`, else asked twice (not echoed; three tries; never blank) |
//! | `changepassword NAME` | sets a user's password ([`Auth::set_password`]), asked twice (or from `PLOVER_NEW_PASSWORD`); the user's sessions end |
//! | `grant NAME PERMISSION... [--in-group GROUP]...`, `grant --group [--create] NAME PERMISSION...` | grants [permissions](crate::permissions) (`ticket.change`) to a user or a group, and puts a user in groups; all or nothing, an unknown user, group or permission exits 1 |
//! | `revoke NAME PERMISSION... [--in-group GROUP]...`, `revoke --group NAME PERMISSION...` | takes them back |
//! | `openapi [--prefix /api]` | prints the REST API's OpenAPI document |
//! | `routes` | prints the routes Plover mounts (REST, admin, accounts; not the application's own views) |
//! | `worker [--once]` | runs the application's [jobs](crate::jobs) ([`Commands::jobs`]) until stopped (SIGINT, SIGTERM); with `--once`, the jobs due now, then exits |
//!
//! Every command reads the database from `--database URL`, else `DATABASE_URL`, else the
//! default the application gives; `serve` binds `--bind ADDR`, else `BIND`, else
//! `127.0.0.1:8000`, and signs its session cookies with `SECRET_KEY` (at least 32 bytes; else a
//! random key per start). An application with [jobs](Commands::jobs) runs them in `serve` and
//! `worker` with `--job-workers N` workers, else `JOB_WORKERS`, else 2 (`serve` with 0 runs
//! none: `worker` processes run them). `--help` describes each command.
//!
//! ```no_run
//! use plover::prelude::*;
//! use plover::manage::Commands;
//!
//! #[derive(Debug, RestModel)]
//! #[diesel(table_name = note)]
//! #[rest(table)]
//! pub struct Note { pub id: i32, pub text: String }
//!
//! fn main() -> std::process::ExitCode {
//!     Commands::<plover::accounts::User>::new("notes")
//!         .about("A notes service")
//!         .database("sqlite://notes.db")
//!         .models([plover::accounts::User::meta(), Note::meta()])
//!         .run(|db, auth| {
//!             let mut api = RestApi::new(db.clone());
//!             api.register_resource(Resource::<Note>::new().auth(UserAuthentication::new(auth)));
//!             let (api, accounts) = (api.setup(), auth.setup());
//!             move |cfg: &mut actix_web::web::ServiceConfig| {
//!                 accounts(cfg);
//!                 api(cfg);
//!             }
//!         })
//! }
//! ```

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use actix_web::web::ServiceConfig;
use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};

use crate::accounts::{Auth, UserModel};
use crate::db::Database;
use crate::error::Error;
use crate::jobs::Jobs;
use crate::model::ModelMeta;
use crate::schema::{self, migrations};
use permissions::Verb;

mod accounts;
mod permissions;
use crate::server::{Except, Guard, Server};
use accounts::{Accounts, Session};

// The options every command takes (a plain comment: clap shows doc comments in `--help`).
#[derive(Debug, Parser)]
struct Cli {
    /// The database URL (sqlite://FILE or postgres://...)
    #[arg(long, env = "DATABASE_URL", global = true)]
    database: Option<String>,
    /// The address `serve` binds (default 127.0.0.1:8000, or the application's)
    #[arg(long, env = "BIND", global = true)]
    bind: Option<String>,
    /// The job workers `serve` and `worker` start (default 2; `serve` with 0 starts none)
    #[arg(long, env = "JOB_WORKERS", global = true)]
    job_workers: Option<usize>,
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Creates the missing tables, stops on schema drift, serves (the default command)
    Serve,
    /// Compares the models with the database and lists the migrations not applied; exits
    /// with status 1 if either needs work
    Check,
    /// Writes a migration folder with the statements that bring the database to the models
    Makemigrations {
        /// The migration's name: lowercase letters, digits and _ (add_description); without
        /// it, a name made from the changes
        name: Option<String>,
        /// Write the folder even where a difference needs statements written by hand
        #[arg(long)]
        empty: bool,
        /// Drop the columns and tables the models no longer have, and their data
        #[arg(long)]
        allow_drop: bool,
        /// A one-off value that the rows already there take in a new required column:
        /// FIELD=VALUE or MODEL.FIELD=VALUE (repeatable)
        #[arg(long = "default", value_name = "FIELD=VALUE", value_parser = pair)]
        defaults: Vec<(String, String)>,
        /// A field renamed: its column is renamed, its data kept (OLD=NEW or MODEL.OLD=NEW;
        /// repeatable)
        #[arg(long = "rename", value_name = "OLD=NEW", value_parser = pair)]
        renames: Vec<(String, String)>,
    },
    /// Applies the migrations not applied yet, in order
    Migrate,
    /// Creates an active administrator. Each value from its option, else from
    /// PLOVER_SUPERUSER_<NAME> (PLOVER_SUPERUSER_PASSWORD for the password), else asked on the
    /// terminal
    Createsuperuser {
        /// The new user's name
        #[arg(long)]
        username: Option<String>,
    },
    /// Sets a user's password, asked twice on the terminal (or from PLOVER_NEW_PASSWORD); the
    /// user's sessions end
    Changepassword {
        /// The user's name
        username: String,
    },
    /// Grants permissions to a user or a group, or puts a user in groups (all or nothing)
    Grant(permissions::Grants),
    /// Takes back permissions of a user or a group, or takes a user out of groups
    Revoke(permissions::Grants),
    /// Prints the REST API's OpenAPI document
    Openapi {
        /// The API's prefix, when the application has several
        #[arg(long)]
        prefix: Option<String>,
    },
    /// Prints the routes Plover mounts: REST, admin, accounts (not the application's own views)
    Routes,
    /// Runs the application's jobs until stopped (SIGINT, SIGTERM)
    Worker {
        /// Run the jobs due now, then exit
        #[arg(long)]
        once: bool,
    },
}

/// `KEY=VALUE`, split.
fn pair(text: &str) -> Result<(String, String), String> {
    match text.split_once('=') {
        Some((key, value)) if !key.trim().is_empty() => {
            Ok((key.trim().to_owned(), value.to_owned()))
        }
        _ => Err(format!("expected NAME=VALUE, not {text:?}")),
    }
}

/// What a start hook does: work on the database before the server starts.
type StartHook<U> = Box<dyn Fn(&Database, &Auth<U>) -> Result<(), Error>>;

/// What makes the application's job handlers.
type JobsHook = Box<dyn Fn(&Database) -> Jobs>;

/// What makes the application's webhooks.
#[cfg(feature = "webhooks")]
type WebhooksHook<U> = Box<dyn Fn(&Database, &Auth<U>) -> crate::webhooks::Webhooks>;

/// The job workers `serve` and `worker` start unless told otherwise.
const JOB_WORKERS: usize = 2;

/// An application's command line: its name, default database, models and start hooks, then
/// [`run`](Commands::run) with the function that configures its routes. See the
/// [module documentation](self) for the commands.
pub struct Commands<U: UserModel> {
    /// What does not depend on the user model: all the commands need, and run with.
    program: Program,
    auth: Box<dyn Fn(Auth<U>) -> Auth<U>>,
    on_start: Vec<StartHook<U>>,
    #[cfg(feature = "webhooks")]
    webhooks: Option<WebhooksHook<U>>,
}

impl<U: UserModel> std::fmt::Debug for Commands<U> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Commands")
            .field("name", &self.program.name)
            .field("database", &self.program.database)
            .finish_non_exhaustive()
    }
}

/// A command failed: the message printed after the program's name.
struct Failure(String);

impl From<Error> for Failure {
    fn from(e: Error) -> Failure {
        Failure(e.field_lines("\n"))
    }
}

impl From<std::io::Error> for Failure {
    fn from(e: std::io::Error) -> Failure {
        // The reader of the output went away (`openapi | head`): nothing to report.
        if e.kind() == std::io::ErrorKind::BrokenPipe {
            return Failure(String::new());
        }
        Failure(e.to_string())
    }
}

impl<U: UserModel + Clone> Commands<U> {
    /// The commands of the program `name`, on `sqlite://<name>.db` unless
    /// [`database`](Commands::database) says otherwise, migrations in `migrations/`.
    pub fn new(name: &str) -> Commands<U> {
        let program = Program {
            name: name.to_owned(),
            about: String::new(),
            database: format!("sqlite://{name}.db"),
            models: vec![
                <crate::history::HistoryEntry as crate::model::RestModel>::meta(),
                <crate::changes::ChangeEvent as crate::model::RestModel>::meta(),
                <crate::jobs::Job as crate::model::RestModel>::meta(),
                <crate::webhooks::WebhookEndpoint as crate::model::RestModel>::meta(),
            ]
            .into_iter()
            .chain(crate::permissions::models())
            .collect(),
            bind: "127.0.0.1:8000".to_owned(),
            migrations: PathBuf::from("migrations"),
            jobs: None,
            superuser: superuser_fields::<U>().collect(),
            username_field: U::USERNAME_FIELD,
        };
        Commands {
            program,
            auth: Box::new(|auth| auth),
            on_start: Vec::new(),
            #[cfg(feature = "webhooks")]
            webhooks: None,
        }
    }

    /// The text `--help` shows under the program's name.
    pub fn about(mut self, text: &str) -> Commands<U> {
        self.program.about = text.to_owned();
        self
    }

    /// The database URL used when neither `--database` nor `DATABASE_URL` gives one.
    pub fn database(mut self, url: &str) -> Commands<U> {
        self.program.database = url.to_owned();
        self
    }

    /// The address `serve` binds when neither `--bind` nor `BIND` gives one (default
    /// `127.0.0.1:8000`).
    pub fn bind(mut self, address: &str) -> Commands<U> {
        self.program.bind = address.to_owned();
        self
    }

    /// The models whose tables the application uses, in any order (see
    /// [`schema::create_tables`]). Plover's own history table
    /// ([`HistoryEntry`](crate::history::HistoryEntry), which the admin writes to), events
    /// table ([`ChangeEvent`](crate::changes::ChangeEvent), the outbox of change feeds), job
    /// queue ([`Job`](crate::jobs::Job)), stored webhook endpoints
    /// ([`WebhookEndpoint`](crate::webhooks::WebhookEndpoint)) and permission tables
    /// ([`permissions::models`](crate::permissions::models)) are always among them; a model
    /// listed twice counts once.
    pub fn models(mut self, models: impl IntoIterator<Item = &'static ModelMeta>) -> Commands<U> {
        for model in models {
            if !self.program.models.iter().any(|m| m.table == model.table) {
                self.program.models.push(model);
            }
        }
        self
    }

    /// The migrations directory (default `migrations`, relative to the working directory).
    pub fn migrations(mut self, dir: impl Into<PathBuf>) -> Commands<U> {
        self.program.migrations = dir.into();
        self
    }

    /// Changes the accounts component before use (its login limits, password cost, ...).
    pub fn auth(mut self, configure: impl Fn(Auth<U>) -> Auth<U> + 'static) -> Commands<U> {
        self.auth = Box::new(configure);
        self
    }

    /// Work `serve` does once the tables are there, before it serves (demo data, say).
    pub fn on_start(
        mut self,
        hook: impl Fn(&Database, &Auth<U>) -> Result<(), Error> + 'static,
    ) -> Commands<U> {
        self.on_start.push(Box::new(hook));
        self
    }

    /// The application's job handlers, made once per process from the database: `serve` starts
    /// workers that run them beside the server, and the `worker` command runs them alone
    /// (see the [module documentation](self) for how many).
    pub fn jobs(mut self, handlers: impl Fn(&Database) -> Jobs + 'static) -> Commands<U> {
        self.program.jobs = Some(Box::new(handlers));
        self
    }

    /// The application's [webhooks](crate::webhooks) (feature `webhooks`), made once per
    /// process: `serve` and `worker` deliver them. Their delivery jobs join the application's
    /// [jobs](Commands::jobs) (or make the job workers on their own), and each such process
    /// also runs the dispatcher that queues the deliveries of new events
    /// ([`Webhooks::start`](crate::webhooks::Webhooks::start)).
    ///
    /// `hooks` gets the database and the authentication: build the REST API's resources the
    /// endpoints want as the routes do (a function that both call), then the webhooks on it.
    #[cfg(feature = "webhooks")]
    pub fn webhooks(
        mut self,
        hooks: impl Fn(&Database, &Auth<U>) -> crate::webhooks::Webhooks + 'static,
    ) -> Commands<U> {
        self.webhooks = Some(Box::new(hooks));
        self
    }

    /// Runs the command of the program's arguments; `app` configures the application's
    /// routes (Plover wraps them in the session middleware and its [`Guard`]). Errors are
    /// printed after the program's name; the exit status is 1 on failure, 2 on a usage error.
    pub fn run<F, R>(self, app: F) -> ExitCode
    where
        F: FnOnce(&Database, &Auth<U>) -> R,
        R: Fn(&mut ServiceConfig) + Clone + Send + 'static,
    {
        // What needs the user model's type is done here, in closures; the commands run in
        // `Program`, compiled once in Plover.
        let Commands {
            program,
            auth: configure,
            on_start,
            #[cfg(feature = "webhooks")]
            webhooks,
        } = self;
        let open = move |url: &str| -> Result<Opened<'_>, Failure> {
            let db = Database::from_url(url).map_err(|e| Failure(e.to_string()))?;
            let mut auth = Auth::<U>::new(db.clone());
            if let Ok(key) = std::env::var("SECRET_KEY") {
                if key.len() < 32 {
                    return Err(Failure("SECRET_KEY needs at least 32 bytes".into()));
                }
                auth = auth.secret_key(key.as_bytes());
            }
            let auth = configure(auth);
            let (hooks, routes) = ((db.clone(), auth.clone()), (db.clone(), auth.clone()));
            #[cfg(feature = "webhooks")]
            let webhooks = webhooks.map(|make| {
                let (db, auth) = (db.clone(), auth.clone());
                Box::new(move || make(&db, &auth)) as Box<dyn Fn() -> _>
            });
            Ok(Opened {
                db,
                start: Box::new(move || on_start.iter().try_for_each(|h| h(&hooks.0, &hooks.1))),
                routes: Box::new(move || Box::new(app(&routes.0, &routes.1)) as Box<dyn Routes>),
                #[cfg(feature = "webhooks")]
                webhooks,
                accounts: Box::new(auth),
            })
        };
        program.run(Box::new(open))
    }
}

/// The database of a command, the accounts on it, and the parts of the application that take
/// them, with the user model's type erased.
struct Opened<'a> {
    db: Database,
    accounts: Box<dyn Accounts>,
    /// Runs the start hooks ([`Commands::on_start`]).
    start: Box<dyn Fn() -> Result<(), Error>>,
    /// The application's routes (the function given to [`Commands::run`]; called once).
    routes: Box<dyn FnOnce() -> Box<dyn Routes> + 'a>,
    /// The application's webhooks ([`Commands::webhooks`]).
    #[cfg(feature = "webhooks")]
    webhooks: Option<Box<dyn Fn() -> crate::webhooks::Webhooks>>,
}

/// Opens the database of a URL with the accounts and the application on it (once a run).
type Open<'a> = Box<dyn FnOnce(&str) -> Result<Opened<'a>, Failure> + 'a>;

/// An application's commands without its user model's type: [`Commands::run`] runs them.
struct Program {
    name: String,
    about: String,
    database: String,
    models: Vec<&'static ModelMeta>,
    bind: String,
    migrations: PathBuf,
    jobs: Option<JobsHook>,
    /// The fields `createsuperuser` asks for beyond the username and the password.
    superuser: Vec<&'static crate::model::FieldMeta>,
    /// The user model's username field.
    username_field: &'static str,
}

impl Program {
    /// [`Commands::run`] after the user model's type is erased.
    fn run(&self, open: Open<'_>) -> ExitCode {
        let mut command = Cli::command().name(self.name.clone());
        if !self.about.is_empty() {
            command = command.about(self.about.clone());
        }
        // One option per field the user model requires beyond its name and password; a field
        // named as a global option is asked for or read from the environment.
        let options =
            || (self.superuser.iter()).filter(|f| !["database", "bind"].contains(&f.name()));
        command = command.mut_subcommand("createsuperuser", |mut sub| {
            for field in options() {
                sub = sub.arg(
                    clap::Arg::new(field.name())
                        .long(field.name().replace('_', "-"))
                        .value_name(field.name().to_ascii_uppercase())
                        .help(format!("The new user's {}", field.name().replace('_', " "))),
                );
            }
            sub
        });
        let parsed = command
            .try_get_matches_from(std::env::args_os())
            .and_then(|matches| {
                let extra: Vec<(&str, String)> = matches
                    .subcommand_matches("createsuperuser")
                    .map(|sub| {
                        options()
                            .filter_map(|f| {
                                Some((f.name(), sub.get_one::<String>(f.name())?.clone()))
                            })
                            .collect()
                    })
                    .unwrap_or_default();
                Ok((Cli::from_arg_matches(&matches)?, extra))
            });
        let (cli, extra) = match parsed {
            Ok(parsed) => parsed,
            Err(e) => {
                let _ = e.print();
                return ExitCode::from(if e.use_stderr() { 2 } else { 0 });
            }
        };
        match self.execute(cli, &extra, open) {
            Ok(code) => code,
            Err(Failure(message)) if message.is_empty() => ExitCode::SUCCESS,
            Err(Failure(message)) => {
                eprintln!("{}: {message}", self.name);
                ExitCode::FAILURE
            }
        }
    }

    fn execute(
        &self,
        cli: Cli,
        given: &[(&str, String)],
        open: Open<'_>,
    ) -> Result<ExitCode, Failure> {
        let url = cli.database.unwrap_or_else(|| self.database.clone());
        let app = open(&url)?;
        let db = &app.db;
        let job_workers = cli.job_workers.unwrap_or(JOB_WORKERS);
        let dir = &self.migrations;
        let mut out = std::io::stdout().lock();
        match cli.command.unwrap_or(Command::Serve) {
            Command::Serve => {
                let bind = cli.bind.unwrap_or_else(|| self.bind.clone());
                self.serve_app(app, (&bind, job_workers), out)?;
            }
            Command::Check => {
                let _ = (app.routes)(); // a configuration that cannot be built fails here
                return self.check(db, &mut out);
            }
            Command::Makemigrations {
                name,
                empty,
                allow_drop,
                defaults,
                renames,
            } => {
                let models = &self.models;
                let options = migrations::Options {
                    name: name.unwrap_or_default(),
                    empty,
                    allow_drop,
                    defaults,
                    renames,
                };
                let written =
                    db.run_blocking(|c| migrations::make_with(c, models, dir, &options))?;
                match written {
                    Some(folder) => writeln!(out, "wrote {}", folder.display())?,
                    None => writeln!(out, "no changes: the database matches the models")?,
                }
            }
            Command::Migrate => {
                let applied = db.run_blocking(|c| migrations::apply(c, dir))?;
                for version in &applied {
                    writeln!(out, "applied {version}")?;
                }
                if applied.is_empty() {
                    writeln!(out, "no migrations to apply")?;
                }
            }
            Command::Createsuperuser { username } => {
                // The models whose changes the served application records record this
                // user too: its resources' feeds and its webhooks.
                let _ = self.background(&app);
                let accounts = &app.accounts;
                let _ = (app.routes)();
                self.createsuperuser(db, &**accounts, username, given, &mut out)?;
            }
            Command::Changepassword { username } => {
                permissions::changepassword(db, &*app.accounts, &username, &mut out)?;
            }
            Command::Grant(args) => {
                let accounts = &app.accounts;
                let _ = (app.routes)(); // the permissions the application declares
                permissions::grants(db, &**accounts, &args, Verb::Grant, &mut out)?;
            }
            Command::Revoke(args) => {
                let accounts = &app.accounts;
                let _ = (app.routes)();
                permissions::grants(db, &**accounts, &args, Verb::Revoke, &mut out)?;
            }
            Command::Openapi { prefix } => openapi(&record((app.routes)()), prefix, &mut out)?,
            Command::Routes => routes(&record((app.routes)()), &mut out)?,
            Command::Worker { once } => self.worker(&app, job_workers, once, &mut out)?,
        }
        Ok(ExitCode::SUCCESS)
    }

    /// `serve`: the missing tables (a failure on drift, naming the migrations not applied),
    /// the start hooks, then the server on `bind` until it stops.
    fn serve_app(
        &self,
        app: Opened<'_>,
        (bind, job_workers): (&str, usize),
        out: std::io::StdoutLock<'_>,
    ) -> Result<(), Failure> {
        let db = &app.db;
        let dir = &self.migrations;
        let waiting = db.run_blocking(|c| migrations::pending(c, dir))?;
        if let Err(Failure(mut message)) = self.create_tables(db) {
            if !waiting.is_empty() {
                message.push_str(&format!(
                    "migrations are not applied yet ({}): run `migrate` first\n",
                    waiting.join(", ")
                ));
            }
            return Err(Failure(message));
        }
        if !waiting.is_empty() {
            log::warn!("migrations not applied yet (run `migrate`): {waiting:?}");
        }
        (app.start)()?;
        let background = self.background(&app);
        let session = app.accounts.session();
        let routes = (app.routes)();
        drop(out);
        // The REST APIs' requests skip the session middleware (server::Except).
        let sessionless = record(routes.clone()).sessionless_prefixes();
        serve(
            &self.name,
            session,
            sessionless.into(),
            routes,
            bind,
            (background, job_workers),
        )?;
        Ok(())
    }

    /// `createsuperuser`: an active administrator, each value from its option (`given`), else
    /// asked on the terminal, the password asked twice.
    fn createsuperuser(
        &self,
        db: &Database,
        accounts: &dyn Accounts,
        username: Option<String>,
        given: &[(&str, String)],
        out: &mut impl Write,
    ) -> Result<(), Failure> {
        self.create_tables(db)?;
        let mut ask = Asker::stdin();
        let username = match username {
            Some(name) => name,
            None => ask.value(self.username_field, "--username")?,
        };
        let mut fields = Vec::new();
        for field in &self.superuser {
            let raw = match given.iter().find(|(name, _)| *name == field.name()) {
                Some((_, raw)) => raw.clone(),
                None => ask.value(field.name(), &format!("--{}", field.name()))?,
            };
            let value = text_value(field, &raw)
                .map_err(|message| Failure(format!("{}: {message}", field.name())))?;
            fields.push((field.name(), value));
        }
        let password = ask.new_password("PLOVER_SUPERUSER_PASSWORD")?;
        let (name, id) =
            db.run_blocking(|c| accounts.create_superuser(c, &username, &password, &fields))?;
        writeln!(out, "created {name} (id {id})")?;
        Ok(())
    }

    /// `worker`: the application's jobs and webhook deliveries, run by `count` workers until a
    /// signal stops them (beside the dispatcher of the webhooks), or with `once` those due now.
    fn worker(
        &self,
        app: &Opened<'_>,
        count: usize,
        once: bool,
        out: &mut impl Write,
    ) -> Result<(), Failure> {
        self.create_tables(&app.db)?;
        let background = self.background(app);
        let Some(jobs) = background.jobs() else {
            return Err(Failure(
                "this application has no jobs (manage::Commands::jobs) nor webhooks".into(),
            ));
        };
        actix_web::rt::System::new().block_on(async {
            if once {
                let ran = jobs.run_due().await?;
                writeln!(out, "ran {ran} jobs")?;
                return Ok(());
            }
            let running = background.start(count.max(1))?;
            eprintln!("{}: {} job workers", self.name, count.max(1));
            stopped().await?;
            running.stop().await;
            Ok(())
        })
    }

    /// The job handlers of [`Commands::jobs`], with those of the webhooks' deliveries, and the
    /// webhooks.
    fn background(&self, app: &Opened<'_>) -> Background {
        let db = &app.db;
        let jobs = self.jobs.as_ref().map(|handlers| handlers(db));
        #[cfg(feature = "webhooks")]
        if let Some(hooks) = &app.webhooks {
            let jobs = jobs.unwrap_or_else(|| Jobs::new(db.clone()));
            return Background::Webhooks(hooks(), jobs);
        }
        Background::Jobs(jobs)
    }

    /// Creates the missing tables; drift is a failure with the report.
    fn create_tables(&self, db: &Database) -> Result<(), Failure> {
        let models = &self.models;
        db.run_blocking(|c| schema::create_tables(c, models))?;
        Ok(())
    }

    /// `check`: the differences, the missing tables, the pending migrations.
    fn check(&self, db: &Database, out: &mut impl Write) -> Result<ExitCode, Failure> {
        let models = &self.models;
        let dir = &self.migrations;
        let (differences, missing, waiting) = db.run_blocking(|c| {
            let mut differences = Vec::new();
            let mut missing = Vec::new();
            for model in models {
                if schema::table_exists(c, model.table)? {
                    differences.extend(schema::differences(c, model)?);
                } else {
                    missing.push(model.table);
                }
            }
            differences.extend(schema::leftover_tables(c, models)?);
            Ok((differences, missing, migrations::pending(c, dir)?))
        })?;
        for table in &missing {
            writeln!(
                out,
                "table \"{table}\" does not exist yet: `serve` creates it"
            )?;
        }
        if differences.is_empty() {
            writeln!(out, "the tables that exist match the models")?;
        } else {
            write!(out, "{}", schema::report(&differences))?;
        }
        for name in &waiting {
            writeln!(out, "migration {name} is not applied: run `migrate`")?;
        }
        Ok(if differences.is_empty() && waiting.is_empty() {
            ExitCode::SUCCESS
        } else {
            ExitCode::FAILURE
        })
    }
}

/// Runs the application's configuration once and returns what Plover mounted.
fn record(routes: Box<dyn Routes>) -> crate::mounted::Recorded {
    crate::mounted::record(|| {
        let _app = actix_web::App::new().configure(move |cfg| routes.configure(cfg));
    })
}

/// `openapi`: the OpenAPI document of the API mounted at `prefix` (or of the only one).
fn openapi(
    recorded: &crate::mounted::Recorded,
    prefix: Option<String>,
    out: &mut impl Write,
) -> Result<(), Failure> {
    let found: Vec<_> = recorded
        .openapi
        .iter()
        .filter(|(p, _)| prefix.as_ref().is_none_or(|wanted| wanted == p))
        .collect();
    let [(_, document)] = found[..] else {
        let prefixes: Vec<&str> = recorded.openapi.iter().map(|(p, _)| p.as_str()).collect();
        return Err(Failure(format!(
            "name one API with --prefix; this application has: {}",
            prefixes.join(", ")
        )));
    };
    let text = serde_json::to_string_pretty(document).unwrap_or_default();
    writeln!(out, "{text}")?;
    Ok(())
}

/// `routes`: one line per route Plover mounted, in aligned columns.
fn routes(recorded: &crate::mounted::Recorded, out: &mut impl Write) -> Result<(), Failure> {
    let routes = &recorded.routes;
    let width = |f: fn(&crate::mounted::Mounted) -> usize| routes.iter().map(f).max().unwrap_or(0);
    let (methods, paths) = (width(|r| r.methods.len()), width(|r| r.path.len()));
    for r in routes {
        writeln!(out, "{:methods$}  {:paths$}  {}", r.methods, r.path, r.what)?;
    }
    Ok(())
}

/// The fields `createsuperuser` asks for beyond the username and the password: those the user
/// model requires (no default, not an `Option`), as Django's asks for its `REQUIRED_FIELDS`.
fn superuser_fields<U: UserModel>() -> impl Iterator<Item = &'static crate::model::FieldMeta> {
    let own = [
        Some(U::USERNAME_FIELD),
        Some(U::PASSWORD_FIELD),
        U::ACTIVE_FIELD,
        U::ADMIN_FIELD,
    ];
    U::meta()
        .fields()
        .iter()
        .filter(move |f| f.is_required() && !own.contains(&Some(f.name())))
}

/// The value of `field` that a person typed, as a REST body would give it.
fn text_value(field: &crate::model::FieldMeta, raw: &str) -> Result<serde_json::Value, String> {
    use crate::value::kind::FieldKind;
    let trimmed = raw.trim();
    Ok(match field.kind() {
        FieldKind::Int32 | FieldKind::Int64 => trimmed
            .parse::<i64>()
            .map_err(|_| "enter a whole number")?
            .into(),
        FieldKind::Float => trimmed
            .parse::<f64>()
            .ok()
            .filter(|v| v.is_finite())
            .ok_or("enter a number")?
            .into(),
        FieldKind::Bool => match trimmed.to_ascii_lowercase().as_str() {
            "true" | "yes" | "y" | "1" => true.into(),
            "false" | "no" | "n" | "0" => false.into(),
            _ => return Err("enter yes or no".into()),
        },
        FieldKind::Text => raw.into(),
        FieldKind::Date | FieldKind::DateTime => trimmed.into(),
    })
}

/// Where `createsuperuser` asks for what its options and environment do not give: the terminal
/// (a password without echo), or the lines piped to its standard input.
struct Asker {
    terminal: bool,
    input: std::io::StdinLock<'static>,
}

/// How many times a password is asked for before `createsuperuser` gives up.
const PASSWORD_TRIES: usize = 3;

impl Asker {
    fn stdin() -> Asker {
        use std::io::IsTerminal;
        let input = std::io::stdin().lock();
        Asker {
            terminal: input.is_terminal(),
            input,
        }
    }

    /// One line, after `prompt` on the standard error; `None` at the end of the input.
    fn line(&mut self, prompt: &str, secret: bool) -> Result<Option<String>, Failure> {
        use std::io::BufRead;
        if secret && self.terminal {
            return Ok(Some(rpassword::prompt_password(prompt)?));
        }
        eprint!("{prompt}");
        let mut line = String::new();
        if self.input.read_line(&mut line)? == 0 {
            return Ok(None);
        }
        let end = line.trim_end_matches(['\n', '\r']).len();
        line.truncate(end);
        Ok(Some(line))
    }

    /// The value of field `name`: `PLOVER_SUPERUSER_<NAME>`, else asked.
    fn value(&mut self, name: &str, option: &str) -> Result<String, Failure> {
        let variable = format!("PLOVER_SUPERUSER_{}", name.to_ascii_uppercase());
        if let Ok(value) = std::env::var(&variable) {
            return Ok(value);
        }
        let prompt = format!("{}: ", capitalized(&name.replace('_', " ")));
        self.line(&prompt, false)?.ok_or_else(|| {
            Failure(format!(
                "no terminal to ask the {name} on: give {option} or set {variable}"
            ))
        })
    }

    /// The new administrator's password: `PLOVER_SUPERUSER_PASSWORD`, else asked twice, up to
    /// three times while the two differ or it is blank (as Django's `createsuperuser`).
    fn new_password(&mut self, variable: &str) -> Result<String, Failure> {
        if let Ok(password) = std::env::var(variable) {
            if password.trim().is_empty() {
                return Err(Failure(format!(
                    "{variable} is blank: blank passwords are not allowed"
                )));
            }
            return Ok(password);
        }
        let no_terminal = || {
            Failure(format!(
                "no terminal to ask the password on: set {variable}"
            ))
        };
        for _ in 0..PASSWORD_TRIES {
            let password = self.line("Password: ", true)?.ok_or_else(no_terminal)?;
            if password.trim().is_empty() {
                eprintln!("Blank passwords are not allowed.");
                continue;
            }
            let again = self
                .line("Password (again): ", true)?
                .ok_or_else(no_terminal)?;
            if again == password {
                return Ok(password);
            }
            eprintln!("The two passwords differ.");
        }
        Err(Failure(format!("no password after {PASSWORD_TRIES} tries")))
    }
}

/// `text` with its first letter in upper case (a prompt).
fn capitalized(text: &str) -> String {
    let mut chars = text.chars();
    chars
        .next()
        .map(|first| first.to_uppercase().chain(chars).collect())
        .unwrap_or_default()
}

/// The application's routes, as a trait object: the server below is compiled once in Plover,
/// not once per application (a change to the application's models then leaves it alone).
trait Routes: Send {
    fn configure(&self, cfg: &mut ServiceConfig);
    fn clone_box(&self) -> Box<dyn Routes>;
}

impl<R: Fn(&mut ServiceConfig) + Clone + Send + 'static> Routes for R {
    fn configure(&self, cfg: &mut ServiceConfig) {
        self(cfg);
    }

    fn clone_box(&self) -> Box<dyn Routes> {
        Box::new(self.clone())
    }
}

impl Clone for Box<dyn Routes> {
    fn clone(&self) -> Self {
        self.clone_box()
    }
}

/// Serves `routes` behind the session middleware and Plover's guard until the process ends.
/// Requests under the `sessionless` prefixes (the REST APIs', whose requests never use the
/// session) skip the session middleware.
fn serve(
    name: &str,
    session: Session,
    sessionless: std::sync::Arc<[String]>,
    routes: Box<dyn Routes>,
    bind: &str,
    (background, job_workers): (Background, usize),
) -> Result<(), Failure> {
    actix_web::rt::System::new().block_on(async move {
        let running = background.start(job_workers)?;
        let server = Server::new(move || {
            let routes = routes.clone();
            actix_web::App::new()
                .wrap(Except::new(session(), sessionless.clone()))
                .wrap(Guard::default())
                .configure(move |cfg| routes.configure(cfg))
        })
        .bind(bind)?;
        eprintln!("{name}: serving on http://{bind}/");
        let served = server.run().await;
        running.stop().await;
        served
    })?;
    Ok(())
}

/// What runs beside the server, and alone in `worker`: the job workers, and with webhooks the
/// dispatcher of their deliveries.
enum Background {
    Jobs(Option<Jobs>),
    #[cfg(feature = "webhooks")]
    Webhooks(crate::webhooks::Webhooks, Jobs),
}

/// A [`Background`] at work, until stopped.
enum Running {
    Jobs(Option<crate::jobs::Workers>),
    #[cfg(feature = "webhooks")]
    Webhooks(crate::webhooks::Running),
}

impl Background {
    /// The jobs its workers run: the application's, and the webhooks' deliveries.
    fn jobs(&self) -> Option<Jobs> {
        match self {
            Background::Jobs(jobs) => jobs.clone(),
            #[cfg(feature = "webhooks")]
            Background::Webhooks(hooks, jobs) => Some(hooks.jobs(jobs.clone())),
        }
    }

    /// Starts `count` job workers (none with 0) and the dispatcher, on the current actix
    /// runtime.
    fn start(self, count: usize) -> std::io::Result<Running> {
        Ok(match self {
            Background::Jobs(jobs) => {
                Running::Jobs(jobs.filter(|_| count > 0).map(|jobs| jobs.start(count)))
            }
            #[cfg(feature = "webhooks")]
            Background::Webhooks(hooks, jobs) => Running::Webhooks(
                (hooks.start_with_workers(jobs, count)).map_err(std::io::Error::other)?,
            ),
        })
    }
}

impl Running {
    /// Stops the dispatcher, then the workers (each finishes its job first).
    async fn stop(self) {
        match self {
            Running::Jobs(workers) => {
                if let Some(workers) = workers {
                    workers.stop().await;
                }
            }
            #[cfg(feature = "webhooks")]
            Running::Webhooks(running) => running.stop().await,
        }
    }
}

/// Until the process is asked to stop: SIGINT (Ctrl-C) or SIGTERM.
async fn stopped() -> std::io::Result<()> {
    use actix_web::rt::signal;
    let mut terminate = signal::unix::signal(signal::unix::SignalKind::terminate())?;
    let interrupt = std::pin::pin!(signal::ctrl_c());
    let terminated = std::pin::pin!(terminate.recv());
    futures_util::future::select(interrupt, terminated).await;
    Ok(())
}
