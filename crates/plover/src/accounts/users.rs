//! The user model Plover ships: what most applications need of a user, ready for the
//! accounts component, REST, the admin's forms and the `createsuperuser` command.

use plover_derive::RestModel;

/// A user, in the table `users`: a unique username, a bcrypt password hash (write-only), a
/// private e-mail address, whether the user may log in and whether they are an administrator,
/// and when they joined.
///
/// Use it as it is (`Auth::<plover::accounts::User>::new(db)`, and `User::meta()` among the
/// models of [`schema::create_tables`](crate::schema::create_tables)), or write a model of
/// your own and mark its fields the same way (`#[rest(username)]`, `#[rest(password)]`,
/// `#[rest(active)]`, `#[rest(admin)]`): the derive implements
/// [`UserModel`](super::UserModel) from them.
///
/// ```
/// use plover::prelude::*;
/// use plover::accounts::User;
///
/// let db = Database::from_url("sqlite://:memory:?max_connections=1").unwrap();
/// let auth = Auth::<User>::new(db.clone()).cost(4);
/// db.run_blocking(|conn| {
///     plover::schema::create_tables(conn, &[User::meta()])?;
///     let alice = auth.create_user(conn, "alice", "a long passphrase", false)?;
///     assert!(alice.active && !alice.admin && alice.email.is_empty());
///     assert!(alice.check_password("a long passphrase"));
///     Ok(())
/// })
/// .unwrap();
/// ```
#[derive(Debug, Clone, RestModel)]
#[diesel(table_name = users)]
#[rest(table, name = "user", display = "{username}")]
pub struct User {
    /// Primary key.
    pub id: i32,
    /// The name the user logs in with: unique, at most 150 characters.
    #[rest(username, not_blank, max_len = 150)]
    pub username: String,
    /// The bcrypt hash of the password (write-only: never shown or filtered).
    #[rest(password)]
    pub password: String,
    /// The e-mail address: private (shown only by a resource that shows it, and the admin).
    #[rest(private, default = String::new(), max_len = 254)]
    pub email: String,
    /// Whether the user may log in.
    #[rest(active, default = true)]
    pub active: bool,
    /// Whether the user has the admin permission.
    #[rest(admin, default = false)]
    pub admin: bool,
    /// When the user was created.
    #[rest(read_only, default = crate::value::now())]
    pub date_joined: chrono::NaiveDateTime,
}
