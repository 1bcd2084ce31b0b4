//! The example's admin: every model, a computed column, an action on selected users, a panel,
//! a type-ahead for the author of a message, a user's messages edited on the user's page, and
//! the job queue's pages.

use plover::admin::{Action, Admin, AdminPanel, Column, Inline, ModelAdmin, PanelData};
use plover::db::Conn;
use plover::prelude::*;
use plover::query::Op;
use plover::views::Query;

use crate::{Message, Note, Relationship, User, UserChanges};

/// "New messages this week": how many, and the five newest.
pub struct NewMessages;

impl AdminPanel for NewMessages {
    fn data(&self, conn: &mut Conn<'_>) -> Result<PanelData, plover::Error> {
        let pub_date = Message::FIELDS.pub_date;
        let week_ago = plover::value::now() - chrono::Duration::days(7);
        let this_week = Query::<Message>::new().filter(pub_date, Op::Gte, week_ago);
        let count = this_week.count(conn)?;
        let newest = this_week.order_by_desc(pub_date).limit(5).all(conn)?;
        let mut items = vec![format!("{count} new in the last 7 days")];
        items.extend(
            newest
                .into_iter()
                .map(|m| format!("{}: {}", m.pub_date.format("%Y-%m-%d %H:%M"), m.content)),
        );
        Ok(PanelData {
            items,
            forms: Vec::new(),
        })
    }
}

/// The user admin's action "Deactivate": the selected users can no longer log in (their
/// sessions end at their next request). An administrator is refused, and then nobody is
/// deactivated: take the admin flag away first, so that nobody locks the admin out.
pub fn deactivate(conn: &mut Conn<'_>, users: &[User]) -> Result<String, plover::Error> {
    for user in users {
        if user.admin {
            return Err(plover::Error::Conflict(format!(
                "{} is an administrator: take the admin flag away first.",
                user.username
            )));
        }
        let changes = UserChanges {
            active: Some(false),
            ..UserChanges::default()
        };
        plover::model::save::<User>(conn, changes, Some(user))?;
    }
    let names: Vec<&str> = users.iter().map(|u| u.username.as_str()).collect();
    Ok(format!("Deactivated: {}.", names.join(", ")))
}

/// The admin under `/admin`.
pub fn admin(auth: &Auth<User>) -> Admin<User> {
    let mut admin = Admin::new(auth);
    admin
        .register(
            ModelAdmin::<User>::new()
                .columns([
                    Column::field(User::FIELDS.id),
                    Column::field(User::FIELDS.username),
                    Column::field(User::FIELDS.email),
                    Column::field(User::FIELDS.join_date),
                    Column::field(User::FIELDS.active),
                    Column::field(User::FIELDS.admin),
                    Column::computed("email domain", |u: &User| {
                        u.email
                            .rsplit_once('@')
                            .map(|(_, d)| d.to_owned())
                            .unwrap_or_default()
                    }),
                ])
                .exclude([User::FIELDS.password])
                .search_fields([User::FIELDS.username, User::FIELDS.email])
                .list_filter([
                    User::FIELDS.active,
                    User::FIELDS.admin,
                    User::FIELDS.join_date,
                ])
                .action(Action::new("deactivate", "Deactivate", deactivate))
                // The user's messages, newest last, as a table on the user's page.
                .inline(
                    Inline::<Message>::new(Message::FIELDS.user_id)
                        .fields([Message::FIELDS.content, Message::FIELDS.pub_date])
                        .extra(1)
                        .max_shown(20),
                ),
        )
        .register(ModelAdmin::<Relationship>::new())
        .register(
            ModelAdmin::<Message>::new()
                .columns({
                    let f = Message::FIELDS;
                    [f.id, f.user_id, f.content, f.pub_date].map(Column::field)
                })
                .foreign_key_lookup(Message::FIELDS.user_id, User::FIELDS.username)
                .search_fields([Message::FIELDS.content])
                .list_filter([Message::FIELDS.user_id, Message::FIELDS.pub_date]),
        )
        .register(ModelAdmin::<Note>::new())
        .register_panel("New messages this week", NewMessages)
        // The job queue: the webhook's deliveries (WEBHOOK_URL), their retries and failures.
        .jobs();
    admin
}
