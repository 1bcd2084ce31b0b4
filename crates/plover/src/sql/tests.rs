//! The statements' texts and their cache, on SQLite.
#![allow(clippy::unwrap_used)]

use diesel::{Connection, RunQueryDsl, SqliteConnection};
use plover_derive::RestModel;

use super::*;
use crate::model::RestModel;
use crate::query::{Filter, Op, Order, Param};

/// Texts, for the texts' tests only (no table is declared to diesel).
#[derive(Debug, RestModel)]
#[diesel(table_name = note)]
struct Note {
    id: i32,
    title: String,
    score: Option<i64>,
}

/// Refers to a note, for the texts of joins.
#[derive(Debug, RestModel)]
#[diesel(table_name = remark)]
struct Remark {
    id: i32,
    #[rest(fk = Note)]
    note_id: i32,
}

fn filter(field: usize, op: Op, values: Vec<Param>) -> Filter {
    Filter {
        path: vec![field],
        op,
        values,
    }
}

fn select(filters: Vec<Filter>) -> Select {
    Select {
        filters,
        order: vec![Order::desc(2), Order::asc(0)],
        limit: Some(21),
        ..Select::default()
    }
}

#[test]
fn the_text_of_a_list_on_each_engine() {
    let s = select(vec![
        filter(
            1,
            Op::Lt,
            vec![Param::Text("m".into()), Param::Text("n".into())],
        ),
        filter(2, Op::In, vec![Param::Int(1), Param::Int(2)]),
    ]);
    let columns = r#"SELECT "note"."id", "note"."title", "note"."score" FROM "note""#;
    assert_eq!(
        rows_text(Note::meta(), &s, false).unwrap(),
        format!(
            r#"{columns} WHERE ("note"."title" < ? OR "note"."title" < ?) AND "note"."score" IN (?, ?) ORDER BY "note"."score" DESC, "note"."id" ASC LIMIT ? OFFSET ?"#
        )
    );
    #[cfg(feature = "postgres")]
    assert_eq!(
        rows_text(Note::meta(), &s, true).unwrap(),
        format!(
            r#"{columns} WHERE ("note"."title" COLLATE "C" < ? OR "note"."title" COLLATE "C" < ?) AND "note"."score" = ANY(?) ORDER BY "note"."score" DESC NULLS LAST, "note"."id" ASC LIMIT ? OFFSET ?"#
        )
    );
}

#[test]
fn a_join_meets_the_conditions_within_its_target() {
    let join = Filter {
        path: vec![1, 1],
        op: Op::Like,
        values: vec![Param::Text("a%".into())],
    };
    let mut s = Select {
        filters: vec![join],
        ..Select::default()
    };
    let plain = r#"SELECT "remark"."id", "remark"."note_id" FROM "remark" WHERE "remark"."note_id" IN (SELECT "note"."id" FROM "note" WHERE "note"."title" LIKE ?)"#;
    assert_eq!(rows_text(Remark::meta(), &s, false).unwrap(), plain);
    let mut before = Vec::new();
    s.shape(&mut before);
    s.within = vec![crate::query::Within {
        table: "note",
        filters: vec![filter(2, Op::Gt, vec![Param::Int(3)])],
    }];
    assert_eq!(
        rows_text(Remark::meta(), &s, false).unwrap(),
        plain.replace("LIKE ?)", r#"LIKE ? AND "note"."score" > ?)"#)
    );
    let mut after = Vec::new();
    s.shape(&mut after);
    assert_ne!(before, after, "the conditions within are part of the shape");
}

#[test]
fn an_ordering_through_a_required_key_to_an_unscoped_model_is_an_inner_join() {
    let s = Select {
        order: vec![Order {
            through: vec![1],
            field: 1,
            desc: false,
        }],
        ..Select::default()
    };
    assert_eq!(
        rows_text(Remark::meta(), &s, false).unwrap(),
        r#"SELECT "remark"."id", "remark"."note_id" FROM "remark" INNER JOIN "note" AS "plover_o0_0" ON "plover_o0_0"."id" = "remark"."note_id" ORDER BY "plover_o0_0"."title" ASC"#
    );
    // No `NULLS FIRST` on PostgreSQL: no row lacks its note, and the clause would keep the
    // note's plain index on `title` from serving the order.
    #[cfg(feature = "postgres")]
    assert!(rows_text(Remark::meta(), &s, true)
        .unwrap()
        .ends_with(r#"ORDER BY "plover_o0_0"."title" COLLATE "C" ASC"#));
}

#[cfg(feature = "postgres")]
#[test]
fn case_insensitive_patterns_fold_in_the_databases_collation_on_postgresql() {
    let s = Select {
        filters: vec![
            filter(1, Op::ILike, vec![Param::Text("a%".into())]),
            filter(1, Op::Like, vec![Param::Text("b%".into())]),
        ],
        ..Select::default()
    };
    assert_eq!(
        rows_text(Note::meta(), &s, true).unwrap(),
        r#"SELECT "note"."id", "note"."title", "note"."score" FROM "note" WHERE "note"."title" COLLATE "default" ILIKE ? AND "note"."title" LIKE ?"#
    );
}

#[test]
fn an_ordering_through_a_join_is_a_left_join_of_the_rows_within() {
    let s = Select {
        order: vec![
            Order {
                through: vec![1],
                field: 1,
                desc: true,
            },
            Order::asc(0),
        ],
        within: vec![crate::query::Within {
            table: "note",
            filters: vec![filter(2, Op::Gt, vec![Param::Int(3)])],
        }],
        ..Select::default()
    };
    assert_eq!(
        rows_text(Remark::meta(), &s, false).unwrap(),
        r#"SELECT "remark"."id", "remark"."note_id" FROM "remark" LEFT JOIN "note" AS "plover_o0_0" ON "plover_o0_0"."id" = "remark"."note_id" AND "plover_o0_0"."score" > ? ORDER BY "plover_o0_0"."title" DESC, "remark"."id" ASC"#
    );
    #[cfg(feature = "postgres")]
    assert!(rows_text(Remark::meta(), &s, true).unwrap().ends_with(
        r#"ORDER BY "plover_o0_0"."title" COLLATE "C" DESC NULLS LAST, "remark"."id" ASC"#
    ));
}

#[test]
fn a_text_is_kept_per_shape_and_the_values_are_bound() {
    let mut sqlite = SqliteConnection::establish(":memory:").unwrap();
    diesel::sql_query(
        "CREATE TABLE note (id INTEGER PRIMARY KEY, title TEXT NOT NULL, score BIGINT)",
    )
    .execute(&mut sqlite)
    .unwrap();
    let conn = &mut Conn::Sqlite(&mut sqlite);
    for (title, score) in [("a", Some(1)), ("b", None), ("c", Some(3))] {
        let changes = NoteChanges {
            title: Some(title.into()),
            score: Some(score),
        };
        Note::insert_row(conn, changes).unwrap();
    }
    let meta = Note::meta();
    let kept = meta.cache.len();
    let below = |conn: &mut Conn<'_>, n: i64| {
        let s = select(vec![filter(2, Op::Lt, vec![Param::Int(n)])]);
        Note::load(conn, &s)
            .unwrap()
            .into_iter()
            .map(|n| n.title)
            .collect::<Vec<_>>()
    };
    assert_eq!(below(conn, 3), ["a"]);
    assert_eq!(
        below(conn, 4),
        ["c", "a"],
        "the new value is bound, not the first one"
    );
    assert_eq!(meta.cache.len(), kept + 1, "one text for the one shape");
    let two = select(vec![filter(0, Op::In, vec![Param::Int(1), Param::Int(3)])]);
    assert_eq!(Note::load(conn, &two).unwrap().len(), 2);
    assert_eq!(
        meta.cache.len(),
        kept + 1,
        "an IN list's text is not kept on SQLite"
    );
    assert_eq!(count(conn, meta, &select(Vec::new())).unwrap(), 3);
    let b = by_pk::<Note>(conn, meta, 2).unwrap().unwrap();
    assert_eq!((b.title.as_str(), b.score), ("b", None));
    assert!(
        by_pk::<Note>(conn, meta, i64::MAX).unwrap().is_none(),
        "out of the key's range"
    );
    let changes = NoteChanges {
        score: Some(Some(7)),
        ..NoteChanges::default()
    };
    assert_eq!(Note::update(conn, 2, changes).unwrap(), 1);
    assert_eq!(Note::load_pk(conn, 2).unwrap().unwrap().score, Some(7));
    assert_eq!(delete(conn, meta, &[1, 2, i64::MAX]).unwrap(), 2);
    assert_eq!(ids(conn, meta, &Select::default()).unwrap(), [3]);
}

/// A model whose writes the outbox records, for the JSON its writes return.
#[derive(Debug, RestModel)]
#[diesel(table_name = entry)]
struct Entry {
    id: i32,
    title: String,
    score: Option<f64>,
    done: bool,
}

#[test]
fn a_literal_doubles_its_quotes() {
    let mut w = Writer::new(false, true);
    w.literal("it's 'q'");
    assert_eq!(w.into_text().unwrap(), "'it''s ''q'''");
}

/// The JSON an insert, an update and a delete return for the outbox is the one a read of the
/// row gives (after the insert and the update, before the delete).
#[test]
fn a_write_returns_the_json_a_read_of_the_row_gives() {
    let mut sqlite = SqliteConnection::establish(":memory:").unwrap();
    diesel::sql_query(
        "CREATE TABLE entry (id INTEGER PRIMARY KEY AUTOINCREMENT, title TEXT NOT NULL, \
         score DOUBLE, done BOOLEAN NOT NULL)",
    )
    .execute(&mut sqlite)
    .unwrap();
    let meta = Entry::meta();
    meta.record_changes();
    let read = |conn: &mut Conn<'_>, keys: &[Arg<'static>]| {
        outbox::before(conn, meta, meta.pk, keys).unwrap()
    };
    let given = [
        (1, Arg::Text("it's \"é\"".into())),
        (2, Arg::I64(3)),
        (3, Arg::Bool(true)),
    ];
    let statement = insert_statement(meta, &given, false, true, None).unwrap();
    let inserted: Vec<Snapshot<Entry>> = statement.load(&mut sqlite).unwrap();
    let conn = &mut Conn::Sqlite(&mut sqlite);
    let Snapshot(row, after) = inserted.into_iter().next().unwrap();
    let keys = vec![Arg::I32(row.id)];
    assert_eq!(
        read(conn, &keys),
        [(1, after.unwrap())],
        "the insert's JSON"
    );
    assert!(read(conn, &keys)[0].1.contains(r#""score":3.0"#));
    let set_score = |w: &mut Writer<'_>| {
        w.sql("UPDATE ");
        w.ident(meta.table);
        w.sql(r#" SET "score" = NULL"#);
    };
    let (changed, after) =
        where_in(conn, meta, Query::Nullify, 0, &keys, true, &set_score).unwrap();
    assert_eq!(
        (changed, after),
        (1, read(conn, &keys)),
        "the update's JSON"
    );
    let before = read(conn, &keys);
    let delete = |w: &mut Writer<'_>| {
        w.sql("DELETE FROM ");
        w.ident(meta.table);
    };
    let (deleted, returned) = where_in(conn, meta, Query::Delete, 0, &keys, true, &delete).unwrap();
    assert_eq!((deleted, returned), (1, before), "the delete's JSON");
    assert!(read(conn, &keys).is_empty());
}

/// The text of aggregates (`sql/aggregate.rs`).
mod aggregates {
    use plover_derive::RestModel;

    use crate::model::RestModel;
    use crate::query::{Aggregate, Func, Operand, Select};
    use crate::query::{Filter, Op, Param, Within};
    use crate::sql::aggregate::aggregate_text;

    /// A model of the texts' tests only (no table is declared to diesel).
    #[derive(Debug, RestModel)]
    #[diesel(table_name = tally)]
    struct Tally {
        id: i32,
        status: String,
    }

    /// Refers to a tally, for the texts of joins.
    #[derive(Debug, RestModel)]
    #[diesel(table_name = line)]
    struct Line {
        id: i32,
        #[rest(fk = Tally)]
        tally_id: i32,
        qty: i32,
    }

    fn term(through: Vec<usize>, field: usize) -> Operand {
        Operand { through, field }
    }

    #[test]
    fn one_statement_groups_joins_and_bounds_on_each_engine() {
        let a = Aggregate {
            group: vec![term(vec![1], 1), term(vec![], 2)],
            count: true,
            values: vec![(Func::Sum, term(vec![], 2)), (Func::Max, term(vec![1], 1))],
            limit: 1001,
        };
        let s = Select {
            filters: vec![Filter {
                path: vec![2],
                op: Op::Gt,
                values: vec![Param::Int(1)],
            }],
            within: vec![Within {
                table: "tally",
                filters: vec![Filter {
                    path: vec![1],
                    op: Op::Eq,
                    values: vec![Param::Text("shown".into())],
                }],
            }],
            ..Select::default()
        };
        let sqlite = aggregate_text(Line::meta(), &s, &a, false).unwrap();
        assert_eq!(
            sqlite,
            r#"SELECT "plover_a0"."status", "line"."qty", COUNT(*), SUM("line"."qty"), MAX("plover_a0"."status") FROM "line" LEFT JOIN "tally" AS "plover_a0" ON "plover_a0"."id" = "line"."tally_id" AND "plover_a0"."status" = ? WHERE "line"."qty" > ? GROUP BY "plover_a0"."status", "line"."qty" ORDER BY "plover_a0"."status" ASC, "line"."qty" ASC LIMIT ?"#
        );
        let pg = aggregate_text(Line::meta(), &s, &a, true).unwrap();
        assert_eq!(
            pg,
            r#"SELECT "plover_a0"."status", "line"."qty", COUNT(*), CAST(SUM("line"."qty") AS BIGINT), MAX("plover_a0"."status" COLLATE "C") FROM "line" LEFT JOIN "tally" AS "plover_a0" ON "plover_a0"."id" = "line"."tally_id" AND "plover_a0"."status" = ? WHERE "line"."qty" > ? GROUP BY "plover_a0"."status", "line"."qty" ORDER BY "plover_a0"."status" COLLATE "C" ASC NULLS FIRST, "line"."qty" ASC NULLS FIRST LIMIT ?"#
        );
        let _ = Tally::meta();
    }
}

#[test]
fn a_page_ordered_through_a_required_key_reads_each_related_rows_first_rows_on_postgresql() {
    let through = Order {
        through: vec![1],
        field: 1,
        desc: false,
    };
    let s = Select {
        order: vec![through.clone(), Order::desc(0)],
        limit: Some(21),
        offset: 40,
        ..Select::default()
    };
    // SQLite: the plain join, its plan reading each note's remarks by the foreign key's index.
    assert_eq!(
        rows_text(Remark::meta(), &s, false).unwrap(),
        r#"SELECT "remark"."id", "remark"."note_id" FROM "remark" INNER JOIN "note" AS "plover_o0_0" ON "plover_o0_0"."id" = "remark"."note_id" ORDER BY "plover_o0_0"."title" ASC, "remark"."id" DESC LIMIT ? OFFSET ?"#
    );
    #[cfg(feature = "postgres")]
    {
        assert_eq!(
            rows_text(Remark::meta(), &s, true).unwrap(),
            r#"SELECT "remark"."id", "remark"."note_id" FROM "note" AS "plover_o0_0" CROSS JOIN LATERAL (SELECT "remark".* FROM "remark" WHERE "remark"."note_id" = "plover_o0_0"."id" ORDER BY "remark"."id" DESC LIMIT ?) AS "remark" ORDER BY "plover_o0_0"."title" COLLATE "C" ASC, "remark"."id" DESC LIMIT ? OFFSET ?"#
        );
        let key = |s: &Select| {
            let mut key = Vec::new();
            rows_shape(Remark::meta(), s, true, &mut key);
            key
        };
        let deep = Select {
            offset: lateral::MAX_WINDOW - 20,
            ..s.clone()
        };
        assert_ne!(key(&s), key(&deep), "the window decides the text");
        // The plain join wherever the lateral one could read more or give other rows.
        let fallbacks = [
            deep,
            Select {
                filters: vec![filter(0, Op::Gt, vec![Param::Int(1)])],
                ..s.clone()
            },
            Select {
                order: vec![through.clone()],
                ..s.clone()
            },
            Select {
                order: vec![through.clone(), Order::asc(1)],
                ..s.clone()
            },
            Select {
                order: vec![Order::desc(0), through],
                ..s.clone()
            },
            Select {
                limit: None,
                ..s.clone()
            },
            Select {
                within: vec![crate::query::Within {
                    table: "note",
                    filters: vec![filter(2, Op::Gt, vec![Param::Int(3)])],
                }],
                ..s.clone()
            },
        ];
        for other in &fallbacks {
            let text = rows_text(Remark::meta(), other, true).unwrap();
            assert!(
                text.starts_with(r#"SELECT "remark"."id", "remark"."note_id" FROM "remark""#),
                "{text}"
            );
            assert!(!text.contains("LATERAL"), "{text}");
        }
    }
}
