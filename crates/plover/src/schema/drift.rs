//! Schema drift: the differences between the models and the tables that already exist (a
//! missing column, a column of another type or nullability), found when the application
//! starts, so that no request meets a `no such column`.

use diesel::sql_types::{Integer, Text};
use diesel::{QueryableByName, RunQueryDsl};

use super::{column, ident};
use crate::db::{Conn, Engine};
use crate::error::Error;
use crate::kind::SqlType;
use crate::model::{FieldMeta, ModelMeta};

/// One difference between a model and its table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Difference {
    /// The table.
    pub table: &'static str,
    /// What differs, in words.
    pub what: String,
    /// The statement that fixes it, where that is safe (a new column that every existing row
    /// can take); `None` where it needs the application's decision (a type to convert, data
    /// to fill in), said in `what`.
    pub fix: Option<String>,
    /// The statement that reverts `fix` (a migration's `down.sql`).
    pub undo: Option<String>,
}

/// A column as the database describes it.
#[derive(Debug, QueryableByName)]
struct Found {
    #[diesel(sql_type = Text)]
    name: String,
    /// SQLite: the declared type; PostgreSQL: `information_schema`'s `data_type`.
    #[diesel(sql_type = Text)]
    ty: String,
    #[diesel(sql_type = Integer)]
    not_null: i32,
}

/// Whether `table` exists.
pub fn table_exists(conn: &mut Conn<'_>, table: &str) -> Result<bool, Error> {
    Ok(!columns(conn, table)?.is_empty())
}

/// The columns of `table` (none if it does not exist).
fn columns(conn: &mut Conn<'_>, table: &str) -> Result<Vec<Found>, Error> {
    Ok(match conn {
        Conn::Sqlite(c) => diesel::sql_query(
            "SELECT name, type AS ty, \"notnull\" AS not_null FROM pragma_table_info(?)",
        )
        .bind::<Text, _>(table)
        .load(*c)?,
        #[cfg(feature = "postgres")]
        Conn::Pg(c) => diesel::sql_query(
            "SELECT column_name::text AS name, data_type::text AS ty, \
             CASE WHEN is_nullable = 'NO' THEN 1 ELSE 0 END AS not_null \
             FROM information_schema.columns \
             WHERE table_schema = current_schema() AND table_name = $1",
        )
        .bind::<Text, _>(table)
        .load(*c)?,
    })
}

/// Whether a column the database describes as `found` holds the values of `ty`: on SQLite by
/// type affinity (how it stores values), on PostgreSQL by type.
fn compatible(ty: SqlType, found: &str, engine: Engine) -> bool {
    let found = found.to_ascii_lowercase();
    match engine {
        Engine::Sqlite => {
            // SQLite's affinity rules (section 3.1 of its datatype documentation).
            let affinity = if found.contains("int") {
                "integer"
            } else if ["char", "clob", "text"].iter().any(|t| found.contains(t)) {
                "text"
            } else if ["real", "floa", "doub"].iter().any(|t| found.contains(t)) {
                "real"
            } else {
                "numeric"
            };
            let wanted = match ty {
                SqlType::Integer | SqlType::BigInt => "integer",
                SqlType::Text => "text",
                SqlType::Real | SqlType::Double => "real",
                SqlType::Boolean | SqlType::Date | SqlType::Timestamp => "numeric",
            };
            affinity == wanted || (wanted == "numeric" && affinity == "integer")
        }
        Engine::Postgres => match ty {
            SqlType::Integer => found == "integer",
            SqlType::BigInt => found == "bigint",
            SqlType::Text => ["text", "character varying", "character"].contains(&found.as_str()),
            SqlType::Real => found == "real",
            SqlType::Double => found == "double precision",
            SqlType::Boolean => found == "boolean",
            SqlType::Date => found == "date",
            SqlType::Timestamp => found == "timestamp without time zone",
        },
    }
}

/// The differences between `model` and its table, if the table exists.
pub fn differences(conn: &mut Conn<'_>, model: &ModelMeta) -> Result<Vec<Difference>, Error> {
    let engine = conn.engine();
    let found = columns(conn, model.table)?;
    let mut out = Vec::new();
    if found.is_empty() {
        return Ok(out);
    }
    for field in model.fields {
        let column = found
            .iter()
            .find(|c| c.name.eq_ignore_ascii_case(field.column));
        match column {
            None => out.push(missing(model, field, engine)),
            Some(c) => {
                if !compatible(field.sql_type, &c.ty, engine) {
                    out.push(Difference {
                        table: model.table,
                        what: format!(
                            "column {} is {}, the model's `{}` needs {}: convert it with a \
                             migration of your own",
                            ident(field.column),
                            c.ty,
                            field.name,
                            field.sql_type.name()
                        ),
                        fix: None,
                        undo: None,
                    });
                }
                // SQLite reports an INTEGER PRIMARY KEY as nullable: the key is never NULL.
                if !field.primary_key && (c.not_null == 1) == field.nullable {
                    out.push(nullability(model, field, engine));
                }
            }
        }
    }
    Ok(out)
}

fn missing(model: &ModelMeta, field: &FieldMeta, engine: Engine) -> Difference {
    let table = model.table;
    // Existing rows take the column's default, or NULL: a NOT NULL column needs a default.
    if field.nullable || field.sql_default.is_some() {
        let (table_name, name) = (ident(table), ident(field.column));
        let mut fix = format!("ALTER TABLE {table_name} ADD COLUMN ");
        if field.unique && engine == Engine::Sqlite {
            // SQLite cannot add a UNIQUE column: the column, then a unique index.
            fix.push_str(&format!(
                "{};\nCREATE UNIQUE INDEX {} ON {table_name} ({name})",
                column(field, engine, false),
                ident(&format!("{table}_{}_unique", field.column))
            ));
        } else {
            fix.push_str(&column(field, engine, field.unique));
        }
        return Difference {
            table,
            what: format!("column {name} is missing"),
            fix: Some(fix),
            undo: Some(format!("ALTER TABLE {table_name} DROP COLUMN {name}")),
        };
    }
    Difference {
        table,
        what: format!(
            "column {} is missing, and existing rows cannot take it: it is NOT NULL without a \
             default. Make the field an Option, give it a literal #[rest(default = ...)], or add \
             the column with values of your own",
            ident(field.column)
        ),
        fix: None,
        undo: None,
    }
}

fn nullability(model: &ModelMeta, field: &FieldMeta, engine: Engine) -> Difference {
    let table = model.table;
    let name = ident(field.column);
    if field.nullable {
        // The model may write NULL where the table refuses it.
        let postgres = engine == Engine::Postgres;
        let alter = format!("ALTER TABLE {} ALTER COLUMN {name}", ident(table));
        let fix = postgres.then(|| format!("{alter} DROP NOT NULL"));
        let undo = postgres.then(|| format!("{alter} SET NOT NULL"));
        return Difference {
            table,
            what: format!(
                "column {name} is NOT NULL, the model's `{}` is an Option{}",
                field.name,
                if fix.is_none() {
                    ": rebuild the table (SQLite cannot drop NOT NULL), or make the field required"
                } else {
                    ""
                }
            ),
            fix,
            undo,
        };
    }
    Difference {
        table,
        what: format!(
            "column {name} accepts NULL, the model's `{}` is not an Option: make it an Option, \
             or fill in the NULLs and add NOT NULL with a migration of your own",
            field.name
        ),
        fix: None,
        undo: None,
    }
}

/// The differences of every model of `models`, as one error that lists each with its fix: what
/// [`create_tables`](super::create_tables) reports before the application serves anything.
pub(crate) fn check(conn: &mut Conn<'_>, models: &[&'static ModelMeta]) -> Result<(), Error> {
    let mut all = Vec::new();
    for model in models {
        all.extend(differences(conn, model)?);
    }
    if all.is_empty() {
        return Ok(());
    }
    Err(Error::Internal(report(&all)))
}

/// The text of a drift report: each difference, then the statements that fix what can be fixed.
pub fn report(differences: &[Difference]) -> String {
    let mut out = format!(
        "the database does not match the models ({} difference{}):\n",
        differences.len(),
        if differences.len() == 1 { "" } else { "s" }
    );
    for d in differences {
        out.push_str(&format!("  - table {}: {}\n", ident(d.table), d.what));
    }
    let fixes: Vec<&str> = differences
        .iter()
        .filter_map(|d| d.fix.as_deref())
        .collect();
    if !fixes.is_empty() {
        out.push_str("statements that fix these safely:\n");
        for fix in fixes {
            out.push_str(&format!("  {fix};\n"));
        }
        out.push_str(
            "the `makemigrations` command writes them as a migration, `migrate` applies it \
             (see Plover's docs/deployment.md)\n",
        );
    }
    out
}
