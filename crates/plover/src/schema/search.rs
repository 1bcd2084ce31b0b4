//! The search indexes of the fields declared `#[rest(search_index)]` (docs/reference.md#search-q).
//!
//! On PostgreSQL, a trigram GIN index of the column in the database's collation, which serves
//! the search's `ILIKE` as written (the `pg_trgm` extension is created if missing).
//!
//! On SQLite, an FTS5 table with the `trigram` tokenizer, `"<table>_<column>_search"`, that
//! holds each row's text folded by `plover_lower` under the row's key, kept by three triggers
//! on the table. A search reads it first (`crate::sql::search`). The table keeps its own copy
//! of the folded text: a contentless table would not, but deleting from one takes either the
//! exact text it indexed (which a later Unicode version of `plover_lower` might fold
//! otherwise) or SQLite 3.43's `contentless_delete`, which older programs opening the database
//! cannot read. The triggers call `plover_lower`, which Plover registers on each of its
//! connections: another program that writes the table (the `sqlite3` shell) must define it
//! too, or its writes fail; reads need nothing.

use super::ident;
use crate::db::{Conn, Engine};
use crate::error::Error;
use crate::model::{FieldMeta, ModelMeta};
use crate::sql::search::{index_exists, table_name};

/// The fields of `model` that have a search index.
pub(super) fn fields(model: &ModelMeta) -> impl Iterator<Item = &'static FieldMeta> + '_ {
    model.fields.iter().filter(|f| f.search_index)
}

/// The fields of `model` whose search index the database lacks.
pub(super) fn missing(
    conn: &mut Conn<'_>,
    model: &ModelMeta,
) -> Result<Vec<&'static FieldMeta>, Error> {
    let mut out = Vec::new();
    for field in fields(model) {
        if !index_exists(conn, &table_name(model.table, field.column))? {
            out.push(field);
        }
    }
    Ok(out)
}

/// The statements that create the search index of `field` of `model` where it does not exist
/// (the rows already in the table are [`fill`]'s).
pub(super) fn create(model: &ModelMeta, field: &FieldMeta, engine: Engine) -> Vec<String> {
    let (table, column) = (ident(model.table), ident(field.column));
    let index = ident(&table_name(model.table, field.column));
    if engine == Engine::Postgres {
        return vec![
            "CREATE EXTENSION IF NOT EXISTS pg_trgm".to_owned(),
            format!(
                "CREATE INDEX IF NOT EXISTS {index} ON {table} \
                 USING gin ({column} COLLATE \"default\" gin_trgm_ops)"
            ),
        ];
    }
    let key = ident(model.pk_field().column);
    let add = format!(
        "INSERT INTO {index} (rowid, {column}) VALUES (new.{key}, plover_lower(new.{column}))"
    );
    let remove = format!("DELETE FROM {index} WHERE rowid = old.{key}");
    let trigger = |event: &str, body: &str| {
        let name = ident(&format!(
            "{}_{event}",
            table_name(model.table, field.column)
        ));
        let on = match event {
            "update" => format!("UPDATE OF {column}, {key} ON {table}"),
            _ => format!("{} ON {table}", event.to_uppercase()),
        };
        format!("CREATE TRIGGER IF NOT EXISTS {name} AFTER {on} BEGIN {body}; END")
    };
    vec![
        format!(
            "CREATE VIRTUAL TABLE IF NOT EXISTS {index} USING fts5({column}, \
             tokenize = 'trigram case_sensitive 1', columnsize = 0)"
        ),
        trigger("insert", &add),
        trigger("delete", &remove),
        trigger("update", &format!("{remove}; {add}")),
    ]
}

/// On SQLite, the statement that puts the rows already in the table into the new search
/// index of `field`; on PostgreSQL, none (`CREATE INDEX` reads them).
pub(super) fn fill(model: &ModelMeta, field: &FieldMeta, engine: Engine) -> Option<String> {
    (engine == Engine::Sqlite).then(|| {
        let (table, column) = (ident(model.table), ident(field.column));
        let index = ident(&table_name(model.table, field.column));
        let key = ident(model.pk_field().column);
        format!(
            "INSERT OR REPLACE INTO {index} (rowid, {column}) \
             SELECT {key}, plover_lower({column}) FROM {table}"
        )
    })
}

/// The statements that remove the search index of `field` of `model` (a migration's undo).
pub(super) fn drop(model: &ModelMeta, field: &FieldMeta, engine: Engine) -> Vec<String> {
    let name = table_name(model.table, field.column);
    if engine == Engine::Postgres {
        return vec![format!("DROP INDEX IF EXISTS {}", ident(&name))];
    }
    let mut out: Vec<String> = ["insert", "delete", "update"]
        .iter()
        .map(|event| {
            format!(
                "DROP TRIGGER IF EXISTS {}",
                ident(&format!("{name}_{event}"))
            )
        })
        .collect();
    out.push(format!("DROP TABLE IF EXISTS {}", ident(&name)));
    out
}

/// Whether `table` is a search index of one of `models`, or one of the tables SQLite keeps for
/// it (`<index>_data`, `<index>_idx`, ...): never a removed model's table.
pub(super) fn belongs(table: &str, models: &[&'static ModelMeta]) -> bool {
    models.iter().any(|m| {
        fields(m).any(|f| {
            let name = table_name(m.table, f.column);
            table.strip_prefix(name.as_str()).is_some_and(|rest| {
                rest.is_empty()
                    || ["_data", "_idx", "_config", "_docsize", "_content"].contains(&rest)
            })
        })
    })
}

#[cfg(test)]
mod tests {
    use plover_derive::RestModel;

    use super::super::statements;
    use crate::db::Engine;
    use crate::model::RestModel;

    /// Two search fields, for the statements' tests only.
    #[derive(Debug, RestModel)]
    #[diesel(table_name = post)]
    struct Post {
        id: i32,
        #[rest(search_index)]
        title: String,
        #[rest(search_index)]
        body: Option<String>,
    }

    #[test]
    fn postgresql_gets_the_extension_once_and_an_index_per_field() {
        let all = statements(Post::meta(), Engine::Postgres);
        assert_eq!(
            all[1..],
            [
                "CREATE EXTENSION IF NOT EXISTS pg_trgm",
                "CREATE INDEX IF NOT EXISTS \"post_title_search\" ON \"post\" \
                 USING gin (\"title\" COLLATE \"default\" gin_trgm_ops)",
                "CREATE INDEX IF NOT EXISTS \"post_body_search\" ON \"post\" \
                 USING gin (\"body\" COLLATE \"default\" gin_trgm_ops)",
            ]
        );
    }

    #[test]
    fn sqlite_gets_a_table_and_three_triggers_per_field() {
        let all = statements(Post::meta(), Engine::Sqlite);
        assert_eq!(all.len(), 1 + 2 * 4, "{all:#?}");
        assert_eq!(
            all[1],
            "CREATE VIRTUAL TABLE IF NOT EXISTS \"post_title_search\" USING fts5(\"title\", \
             tokenize = 'trigram case_sensitive 1', columnsize = 0)"
        );
        assert_eq!(
            all[4],
            "CREATE TRIGGER IF NOT EXISTS \"post_title_search_update\" AFTER UPDATE OF \
             \"title\", \"id\" ON \"post\" BEGIN DELETE FROM \"post_title_search\" WHERE rowid = \
             old.\"id\"; INSERT INTO \"post_title_search\" (rowid, \"title\") VALUES (new.\"id\", \
             plover_lower(new.\"title\")); END"
        );
        assert!(super::belongs("post_body_search_data", &[Post::meta()]));
        assert!(!super::belongs("post_body_searches", &[Post::meta()]));
    }
}
