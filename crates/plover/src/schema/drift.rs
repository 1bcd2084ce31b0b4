//! Schema drift: the differences between the models and the tables that already exist (a
//! missing column; a column of another type, nullability or a shorter length; a missing
//! `UNIQUE` or foreign key), found when the application starts, so that no request meets a
//! `no such column` or a value the table cannot hold, and no rule the model declares goes
//! unenforced.

use diesel::sql_types::{Integer, Nullable, Text};
use diesel::{QueryableByName, RunQueryDsl};

use super::{column, ident};
use crate::db::{Conn, Engine};
use crate::error::Error;
use crate::model::{FieldMeta, ModelMeta};
use crate::value::kind::SqlType;

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
    /// The column it is about; `None` for a whole table.
    pub column: Option<String>,
    /// Whether `fix` deletes data: a column or a table the models no longer have, which a
    /// migration drops only when asked (`makemigrations --allow-drop`).
    pub drops: bool,
    /// Whether the application works with the table as it is: a column the models no longer
    /// have that inserts may leave out (it accepts NULL or has a default), or a table no model
    /// has. The start goes on; `check` and `makemigrations` report it.
    pub harmless: bool,
}

impl Difference {
    /// A difference about `column`, to fill in (no fix, deletes nothing, stops the start).
    fn about(column: &str) -> Difference {
        Difference {
            table: "",
            what: String::new(),
            fix: None,
            undo: None,
            column: Some(column.to_owned()),
            drops: false,
            harmless: false,
        }
    }
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
    /// PostgreSQL: the most characters a `varchar(n)` or `char(n)` column holds (SQLite
    /// stores any length whatever the declared type says).
    #[diesel(sql_type = Nullable<Integer>)]
    max_len: Option<i32>,
    /// Whether the column has a default.
    #[diesel(sql_type = Integer)]
    has_default: i32,
}

/// A pair of names the catalog gives: an index and one of its columns, or a foreign key's
/// column and the table it refers to.
#[derive(Debug, QueryableByName)]
struct Pair {
    #[diesel(sql_type = Text)]
    a: String,
    #[diesel(sql_type = Text)]
    b: String,
}

/// The columns of `table` that a unique index of that one column covers (a `UNIQUE`
/// constraint, or a unique index that is neither partial nor on an expression).
fn unique_columns(conn: &mut Conn<'_>, table: &str) -> Result<Vec<String>, Error> {
    let pairs: Vec<Pair> = match conn {
        Conn::Sqlite(c) => diesel::sql_query(
            "SELECT il.name AS a, ii.name AS b FROM pragma_index_list(?) AS il, \
             pragma_index_info(il.name) AS ii WHERE il.\"unique\" = 1 AND il.partial = 0",
        )
        .bind::<Text, _>(table)
        .load(*c)?,
        #[cfg(feature = "postgres")]
        Conn::Pg(c) => diesel::sql_query(
            "SELECT i.indexrelid::text AS a, a.attname::text AS b FROM pg_index i \
             JOIN pg_class t ON t.oid = i.indrelid \
             JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = ANY(i.indkey) \
             WHERE t.relname = $1 AND i.indisunique \
             AND t.relnamespace = \
             (SELECT oid FROM pg_namespace WHERE nspname = current_schema()) \
             AND i.indpred IS NULL AND i.indexprs IS NULL",
        )
        .bind::<Text, _>(table)
        .load(*c)?,
    };
    let single = |index: &str| pairs.iter().filter(|p| p.a == index).count() == 1;
    Ok(pairs
        .iter()
        .filter(|p| single(&p.a))
        .map(|p| p.b.clone())
        .collect())
}

/// The foreign keys of one column of `table`: the column and the table it refers to.
fn foreign_keys(conn: &mut Conn<'_>, table: &str) -> Result<Vec<Pair>, Error> {
    Ok(match conn {
        Conn::Sqlite(c) => diesel::sql_query(
            "SELECT \"from\" AS a, \"table\" AS b FROM pragma_foreign_key_list(?) \
             WHERE id IN (SELECT id FROM pragma_foreign_key_list(?) GROUP BY id \
             HAVING COUNT(*) = 1)",
        )
        .bind::<Text, _>(table)
        .bind::<Text, _>(table)
        .load(*c)?,
        #[cfg(feature = "postgres")]
        Conn::Pg(c) => diesel::sql_query(
            "SELECT a.attname::text AS a, r.relname::text AS b FROM pg_constraint k \
             JOIN pg_class t ON t.oid = k.conrelid \
             JOIN pg_class r ON r.oid = k.confrelid \
             JOIN pg_attribute a ON a.attrelid = k.conrelid AND a.attnum = k.conkey[1] \
             WHERE k.contype = 'f' AND cardinality(k.conkey) = 1 AND t.relname = $1 \
             AND t.relnamespace = \
             (SELECT oid FROM pg_namespace WHERE nspname = current_schema())",
        )
        .bind::<Text, _>(table)
        .load(*c)?,
    })
}

/// Whether `table` exists.
pub fn table_exists(conn: &mut Conn<'_>, table: &str) -> Result<bool, Error> {
    Ok(!columns(conn, table)?.is_empty())
}

/// The columns of `table` (none if it does not exist).
fn columns(conn: &mut Conn<'_>, table: &str) -> Result<Vec<Found>, Error> {
    Ok(match conn {
        Conn::Sqlite(c) => diesel::sql_query(
            "SELECT name, type AS ty, \"notnull\" AS not_null, NULL AS max_len, \
             CASE WHEN dflt_value IS NULL THEN 0 ELSE 1 END AS has_default \
             FROM pragma_table_info(?)",
        )
        .bind::<Text, _>(table)
        .load(*c)?,
        #[cfg(feature = "postgres")]
        Conn::Pg(c) => diesel::sql_query(
            "SELECT column_name::text AS name, data_type::text AS ty, \
             CASE WHEN is_nullable = 'NO' THEN 1 ELSE 0 END AS not_null, \
             character_maximum_length::integer AS max_len, \
             CASE WHEN column_default IS NULL THEN 0 ELSE 1 END AS has_default \
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
    let unique = unique_columns(conn, model.table)?;
    let references = foreign_keys(conn, model.table)?;
    for field in model.fields {
        let column = found
            .iter()
            .find(|c| c.name.eq_ignore_ascii_case(field.column));
        match column {
            None => out.push(missing(model, field, engine, None)),
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
                        ..Difference::about(field.column)
                    });
                }
                // SQLite reports an INTEGER PRIMARY KEY as nullable: the key is never NULL.
                if !field.primary_key && (c.not_null == 1) == field.nullable {
                    out.push(nullability(model, field, engine));
                }
                out.extend(shorter(model, field, c));
                let same = |name: &String| name.eq_ignore_ascii_case(field.column);
                if field.unique && !field.primary_key && !unique.iter().any(same) {
                    out.push(not_unique(model, field));
                }
                if let Some(target) = field.fk {
                    let target = target().table;
                    let kept = references
                        .iter()
                        .any(|r| same(&r.a) && r.b.eq_ignore_ascii_case(target));
                    if !kept {
                        out.push(no_reference(model, field, target, engine));
                    }
                }
            }
        }
    }
    out.extend(missing_search_indexes(conn, model)?);
    for c in &found {
        let modelled = model
            .fields
            .iter()
            .any(|f| c.name.eq_ignore_ascii_case(f.column));
        if !modelled {
            out.push(removed(conn, model, c)?);
        }
    }
    Ok(out)
}

/// The search indexes of `model`'s fields that the database lacks (a field declared
/// `#[rest(search_index)]` after its table was made): each fixed by creating it and putting the
/// rows in. Harmless: a search without it reads every row, as before.
fn missing_search_indexes(
    conn: &mut Conn<'_>,
    model: &ModelMeta,
) -> Result<Vec<Difference>, Error> {
    let engine = conn.engine();
    let mut out = Vec::new();
    for field in super::search::missing(conn, model)? {
        let fill = super::search::fill(model, field, engine);
        let fix = super::search::create(model, field, engine)
            .into_iter()
            .chain(fill);
        out.push(Difference {
            table: model.table,
            what: format!(
                "the search index of column {} is missing",
                ident(field.column)
            ),
            fix: Some(fix.collect::<Vec<_>>().join(";\n")),
            undo: Some(super::search::drop(model, field, engine).join(";\n")),
            harmless: true,
            ..Difference::about(field.column)
        });
    }
    Ok(out)
}

/// A column of the table that no field of the model has (a field removed from the model).
fn removed(conn: &mut Conn<'_>, model: &ModelMeta, found: &Found) -> Result<Difference, Error> {
    let (table, name) = (ident(model.table), ident(&found.name));
    let harmless = found.not_null == 0 || found.has_default == 1;
    let mut what = format!(
        "column {name} is in the table, not in the model `{}` (a field removed? \
         `makemigrations --allow-drop` drops it, `--rename {}=NEW_FIELD` renames it)",
        model.name, found.name
    );
    if !harmless {
        what.push_str(": it is NOT NULL without a default, so no row can be inserted");
    }
    let mut fix = String::new();
    if conn.engine() == Engine::Sqlite {
        // SQLite drops no column that an index covers: its indexes go first; a UNIQUE one
        // (made with the table) cannot go without rebuilding the table.
        for index in indexes_of(conn, model.table, &found.name)? {
            if index.starts_with("sqlite_autoindex_") {
                what.push_str(": SQLite cannot drop it (it is UNIQUE): rebuild the table");
                return Ok(Difference {
                    table: model.table,
                    what,
                    drops: true,
                    harmless,
                    ..Difference::about(&found.name)
                });
            }
            fix.push_str(&format!("DROP INDEX {};\n", ident(&index)));
        }
    }
    fix.push_str(&format!("ALTER TABLE {table} DROP COLUMN {name}"));
    Ok(Difference {
        table: model.table,
        what,
        fix: Some(fix),
        // The data is gone; the column comes back empty.
        undo: Some(format!(
            "ALTER TABLE {table} ADD COLUMN {name} {}",
            found.ty
        )),
        drops: true,
        harmless,
        ..Difference::about(&found.name)
    })
}

/// SQLite: the indexes of `table` that cover `column`.
fn indexes_of(conn: &mut Conn<'_>, table: &str, column: &str) -> Result<Vec<String>, Error> {
    let pairs: Vec<Pair> = match conn {
        Conn::Sqlite(c) => diesel::sql_query(
            "SELECT il.name AS a, ii.name AS b FROM pragma_index_list(?) AS il, \
             pragma_index_info(il.name) AS ii",
        )
        .bind::<Text, _>(table)
        .load(*c)?,
        #[cfg(feature = "postgres")]
        Conn::Pg(_) => Vec::new(),
    };
    let mut out: Vec<String> = pairs
        .into_iter()
        .filter(|p| p.b.eq_ignore_ascii_case(column))
        .map(|p| p.a)
        .collect();
    out.dedup();
    Ok(out)
}

/// Whether `table` is Plover's or diesel's own (rate limits, idempotency keys, applied
/// migrations) or the engine's: never a removed model's.
fn own_table(table: &str) -> bool {
    ["plover_", "__diesel_", "sqlite_"]
        .iter()
        .any(|prefix| table.starts_with(prefix))
}

/// The tables of the database that none of `models` has (models removed from the
/// application), but for Plover's, diesel's and the engine's own: each a [`Difference`] whose
/// fix drops the table (`makemigrations --allow-drop`).
///
/// # Errors
/// The database's error.
pub fn leftover_tables(
    conn: &mut Conn<'_>,
    models: &[&'static ModelMeta],
) -> Result<Vec<Difference>, Error> {
    let tables: Vec<Pair> = match conn {
        Conn::Sqlite(c) => {
            diesel::sql_query("SELECT name AS a, type AS b FROM sqlite_master WHERE type = 'table'")
                .load(*c)?
        }
        #[cfg(feature = "postgres")]
        Conn::Pg(c) => diesel::sql_query(
            "SELECT table_name::text AS a, table_type::text AS b FROM information_schema.tables \
             WHERE table_schema = current_schema() AND table_type = 'BASE TABLE'",
        )
        .load(*c)?,
    };
    Ok(tables
        .into_iter()
        .filter(|t| !own_table(&t.a) && !super::search::belongs(&t.a, models))
        .filter(|t| !models.iter().any(|m| m.table.eq_ignore_ascii_case(&t.a)))
        .map(|t| Difference {
            table: "",
            what: format!(
                "table {} has no model (a model removed? `makemigrations --allow-drop` drops it)",
                ident(&t.a)
            ),
            fix: Some(format!("DROP TABLE {}", ident(&t.a))),
            undo: None,
            column: None,
            drops: true,
            harmless: true,
        })
        .collect())
}

/// The difference of `field`'s missing column. `one_off` is an SQL literal that the rows
/// already there take (`makemigrations --default`), for a required column without a default
/// of its own: on PostgreSQL the column has no default afterwards, as the model says.
pub(super) fn missing(
    model: &ModelMeta,
    field: &FieldMeta,
    engine: Engine,
    one_off: Option<&str>,
) -> Difference {
    let table = model.table;
    // Existing rows take the column's default, or NULL: a NOT NULL column needs a default.
    let one_off = one_off.filter(|_| !field.nullable && field.sql_default.is_none());
    if field.nullable || field.sql_default.is_some() || one_off.is_some() {
        let (table_name, name) = (ident(table), ident(field.column));
        let mut fix = format!("ALTER TABLE {table_name} ADD COLUMN ");
        let definition = |unique: bool| {
            let mut definition = column(field, engine, unique);
            if let Some(literal) = one_off {
                let with = format!(" NOT NULL DEFAULT {literal}");
                definition = definition.replacen(" NOT NULL", &with, 1);
            }
            definition
        };
        if field.unique && engine == Engine::Sqlite {
            // SQLite cannot add a UNIQUE column: the column, then a unique index.
            fix.push_str(&format!(
                "{};\nCREATE UNIQUE INDEX {} ON {table_name} ({name})",
                definition(false),
                ident(&format!("{table}_{}_unique", field.column))
            ));
        } else {
            fix.push_str(&definition(field.unique));
        }
        if one_off.is_some() && engine == Engine::Postgres {
            fix.push_str(&format!(
                ";\nALTER TABLE {table_name} ALTER COLUMN {name} DROP DEFAULT"
            ));
        }
        return Difference {
            table,
            what: format!("column {name} is missing"),
            fix: Some(fix),
            undo: Some(format!("ALTER TABLE {table_name} DROP COLUMN {name}")),
            ..Difference::about(field.column)
        };
    }
    Difference {
        table,
        what: format!(
            "column {} is missing, and existing rows cannot take it: it is NOT NULL without a \
             default. Give the rows a value with `makemigrations --default {}.{}=VALUE`, make \
             the field an Option, give it a literal #[rest(default = ...)], or add the column \
             with values of your own",
            ident(field.column),
            model.name,
            field.name
        ),
        fix: None,
        undo: None,
        ..Difference::about(field.column)
    }
}

/// A text column that holds fewer characters than the model accepts (PostgreSQL's
/// `varchar(n)`): a longer value would be a database error instead of a 400.
fn shorter(model: &ModelMeta, field: &FieldMeta, found: &Found) -> Option<Difference> {
    let limit = found.max_len.filter(|_| field.sql_type == SqlType::Text)?;
    let c = &field.constraints;
    let longest_choice = c.choices.iter().map(|v| v.chars().count()).max();
    let accepted = match (c.max_len, longest_choice) {
        (_, Some(n)) => Some(n),
        (Some(n), None) => usize::try_from(n).ok(),
        (None, None) => None,
    };
    if accepted.is_some_and(|n| usize::try_from(limit).is_ok_and(|limit| n <= limit)) {
        return None;
    }
    let (table, name) = (ident(model.table), ident(field.column));
    let alter = format!("ALTER TABLE {table} ALTER COLUMN {name} TYPE");
    Some(Difference {
        table: model.table,
        what: format!(
            "column {name} holds at most {limit} characters, the model's `{}` accepts {}",
            field.name,
            accepted.map_or("any length".to_owned(), |n| format!("up to {n}"))
        ),
        fix: Some(format!("{alter} TEXT")),
        undo: Some(format!("{alter} {}({limit})", found.ty)),
        ..Difference::about(field.column)
    })
}

/// A `#[rest(unique)]` column without its unique index.
fn not_unique(model: &ModelMeta, field: &FieldMeta) -> Difference {
    let (table, name) = (ident(model.table), ident(field.column));
    let index = ident(&format!("{}_{}_unique", model.table, field.column));
    Difference {
        table: model.table,
        what: format!(
            "column {name} is not UNIQUE, the model's `{}` is unique (the fix fails while \
             rows share a value: remove the duplicates first)",
            field.name
        ),
        fix: Some(format!("CREATE UNIQUE INDEX {index} ON {table} ({name})")),
        undo: Some(format!("DROP INDEX {index}")),
        ..Difference::about(field.column)
    }
}

/// A `#[rest(fk = ...)]` column without its foreign key.
fn no_reference(
    model: &ModelMeta,
    field: &FieldMeta,
    target: &'static str,
    engine: Engine,
) -> Difference {
    let (table, name) = (ident(model.table), ident(field.column));
    let what = format!(
        "column {name} has no foreign key to {}, the model's `{}` refers to it",
        ident(target),
        field.name
    );
    if engine == Engine::Sqlite {
        return Difference {
            table: model.table,
            what: format!(
                "{what}: SQLite cannot add one to a table, rebuild the table with a migration \
                 of your own"
            ),
            fix: None,
            undo: None,
            ..Difference::about(field.column)
        };
    }
    let key = ident(&format!("{}_{}_fkey", model.table, field.column));
    let pk = field.fk.map_or("id", |target| target().pk_field().column);
    Difference {
        table: model.table,
        what: format!("{what} (the fix fails while a row refers to no row)"),
        fix: Some(format!(
            "ALTER TABLE {table} ADD CONSTRAINT {key} FOREIGN KEY ({name}) REFERENCES {} ({})",
            ident(target),
            ident(pk)
        )),
        undo: Some(format!("ALTER TABLE {table} DROP CONSTRAINT {key}")),
        ..Difference::about(field.column)
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
            ..Difference::about(field.column)
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
        ..Difference::about(field.column)
    }
}

/// The differences of every model of `models`, as one error that lists each with its fix: what
/// [`create_tables`](super::create_tables) reports before the application serves anything.
pub(crate) fn check(conn: &mut Conn<'_>, models: &[&'static ModelMeta]) -> Result<(), Error> {
    let mut all = Vec::new();
    for model in models {
        all.extend(
            differences(conn, model)?
                .into_iter()
                .filter(|d| !d.harmless),
        );
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
        if d.table.is_empty() {
            out.push_str(&format!("  - {}\n", d.what));
        } else {
            out.push_str(&format!("  - table {}: {}\n", ident(d.table), d.what));
        }
    }
    let fixes: Vec<&str> = differences
        .iter()
        .filter(|d| !d.drops)
        .filter_map(|d| d.fix.as_deref())
        .collect();
    if !fixes.is_empty() {
        out.push_str("statements that fix these safely:\n");
        for fix in fixes {
            // A fix of several statements, each on its own lines: all indented alike.
            for line in format!("{fix};").lines() {
                out.push_str("  ");
                out.push_str(line);
                out.push('\n');
            }
        }
        out.push_str(
            "the `makemigrations` command writes them as a migration, `migrate` applies it \
             (see Plover's docs/deployment.md)\n",
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_report_indents_every_line_of_a_fix_alike() {
        let difference = Difference {
            fix: Some("CREATE TABLE t (a INT);\nCREATE INDEX t_a ON t (a)".into()),
            ..Difference::about("a")
        };
        let text = report(&[Difference {
            table: "t",
            ..difference
        }]);
        assert!(
            text.contains("\n  CREATE TABLE t (a INT);\n  CREATE INDEX t_a ON t (a);\n"),
            "{text}"
        );
    }
}
