//! The example's admin: every model, a computed column, a panel, and a type-ahead for the
//! author of a message.

use plover::admin::{Admin, AdminPanel, Column, ModelAdmin, PanelData};
use plover::db::Conn;
use plover::prelude::*;
use plover::query::{Filter, Op, Param, Select};

use crate::{Message, Note, Relationship, User};

/// "New messages this week": how many, and the five newest.
pub struct NewMessages;

impl AdminPanel for NewMessages {
    fn data(&self, conn: &mut Conn<'_>) -> Result<PanelData, plover::Error> {
        let pub_date = Message::FIELDS.pub_date.index();
        let week_ago = plover::value::now() - chrono::Duration::days(7);
        let this_week = vec![Filter {
            path: vec![pub_date],
            op: Op::Gte,
            values: vec![Param::DateTime(week_ago)],
        }];
        let count = count_messages_since(conn, week_ago)?;
        let newest = Message::load(
            conn,
            &Select {
                filters: this_week,
                order: vec![(pub_date, true)],
                limit: Some(5),
                ..Select::default()
            },
        )?;
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

/// `SELECT COUNT(*) FROM message WHERE pub_date >= ?`, on either engine.
fn count_messages_since(
    conn: &mut Conn<'_>,
    since: chrono::NaiveDateTime,
) -> Result<i64, plover::Error> {
    use crate::message;
    use diesel::prelude::*;
    let query = message::table.filter(message::pub_date.ge(since)).count();
    Ok(match conn {
        Conn::Sqlite(c) => query.get_result(*c)?,
        Conn::Pg(c) => query.get_result(*c)?,
    })
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
                .exclude([User::FIELDS.password]),
        )
        .register(ModelAdmin::<Relationship>::new())
        .register(
            ModelAdmin::<Message>::new()
                .columns({
                    let f = Message::FIELDS;
                    [f.id, f.user_id, f.content, f.pub_date].map(Column::field)
                })
                .foreign_key_lookup(Message::FIELDS.user_id, User::FIELDS.username),
        )
        .register(ModelAdmin::<Note>::new())
        .register_panel("New messages this week", NewMessages);
    admin
}
