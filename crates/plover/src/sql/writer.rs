//! The SQL text of a statement and its arguments, written in one pass: the same code writes
//! the text of a new shape and collects the arguments of a known one, so that the arguments
//! always follow the text's placeholders. Identifiers come only from model metadata.

use std::borrow::Cow;

use crate::error::Error;
use crate::meta::{FieldMeta, ModelMeta};
use crate::query::{Filter, Group, Op, Select, Term, Within};
use crate::sql::arg::Arg;
use crate::value::fold_case;
use crate::value::kind::{FieldKind, SqlType};

/// Where an argument goes in a statement's text: diesel writes each engine's placeholder
/// (`?`, `$n`) there. No identifier holds it.
pub(crate) const PLACEHOLDER: char = '\0';

/// Text (unless it is known) and arguments of one statement.
pub(crate) struct Writer<'a> {
    text: Option<String>,
    pub(crate) args: Vec<Arg<'a>>,
    pub(crate) pg: bool,
    /// Whether the text is the same for every statement of this shape and diesel may keep it
    /// prepared (not with an `IN` list of values on SQLite).
    pub(crate) prepared: bool,
    /// The conditions of the models that joins reach (the selection's `within`).
    within: &'a [Within],
    /// While set, `column` writes this alias for the table it names (a joined table's
    /// conditions).
    alias: Option<(&'static str, String)>,
}

impl<'a> Writer<'a> {
    /// A writer of text and arguments (`text`), or of arguments only.
    pub(crate) fn new(pg: bool, text: bool) -> Writer<'a> {
        Writer {
            text: text.then(|| String::with_capacity(256)),
            args: Vec::new(),
            pg,
            prepared: true,
            within: &[],
            alias: None,
        }
    }

    pub(crate) fn into_text(self) -> Option<String> {
        self.text
    }

    /// Appends SQL.
    pub(crate) fn sql(&mut self, sql: &str) {
        if let Some(text) = &mut self.text {
            text.push_str(sql);
        }
    }

    /// Appends a quoted identifier.
    pub(crate) fn ident(&mut self, name: &str) {
        if let Some(text) = &mut self.text {
            text.push('"');
            text.push_str(&name.replace('"', "\"\""));
            text.push('"');
        }
    }

    /// Appends an SQL string literal of `value` (`'...'`, its quotes doubled): for names from
    /// metadata only, never for values.
    pub(crate) fn literal(&mut self, value: &str) {
        if let Some(text) = &mut self.text {
            text.push('\'');
            for part in value.split_inclusive('\'') {
                text.push_str(part);
                if part.ends_with('\'') {
                    text.push('\'');
                }
            }
            text.push('\'');
        }
    }

    /// Appends `"table"."column"` (the alias in place of an aliased table).
    pub(crate) fn column(&mut self, meta: &ModelMeta, field: &FieldMeta) {
        // Taken out for the call, not cloned (this runs for every column of every statement).
        let alias = self.alias.take();
        match &alias {
            Some((table, alias)) if *table == meta.table => self.ident(alias),
            _ => self.ident(meta.table),
        }
        self.alias = alias;
        self.sql(".");
        self.ident(field.column);
    }

    /// The alias of the model reached at hop `hop` of ordering term `term`.
    pub(super) fn order_alias(term: usize, hop: usize) -> String {
        format!("plover_o{term}_{hop}")
    }

    /// The joins of the models that ordering terms reach through foreign keys, each under an
    /// alias of its own, holding only the rows `within` lets joins reach: a row whose related
    /// row is missing or hidden orders as NULL (a `LEFT JOIN`). A hop through a foreign key
    /// that is not nullable, to a model that `within` does not narrow, after such hops only, is
    /// an `INNER JOIN` (as Django joins a required foreign key): every row has its related row
    /// there (the schema's `REFERENCES`, which Plover's SQLite connections enforce), so the
    /// rows are the same, and the database may start from the related table's index on the
    /// ordering column instead of sorting every row.
    pub(crate) fn order_joins(&mut self, meta: &ModelMeta, s: &'a Select) -> Result<(), Error> {
        self.within = &s.within;
        for (term, order) in s.order.iter().enumerate() {
            let mut model = meta;
            let mut from = std::borrow::Cow::Borrowed(meta.table);
            let mut inner = true;
            for (hop, &index) in order.through.iter().enumerate() {
                let fk = model.field_at(index)?;
                let target = fk.joined()?;
                let alias = Writer::order_alias(term, hop);
                inner &= !fk.nullable && !self.narrows(target);
                self.sql(if inner { " INNER JOIN " } else { " LEFT JOIN " });
                self.ident(target.table);
                self.sql(" AS ");
                self.ident(&alias);
                self.sql(" ON ");
                self.ident(&alias);
                self.sql(".");
                self.ident(target.pk_field().column);
                self.sql(" = ");
                self.ident(&from);
                self.sql(".");
                self.ident(fk.column);
                self.alias = Some((target.table, alias.clone()));
                let scoped = self.scope(target);
                self.alias = None;
                scoped?;
                (model, from) = (target, alias.into());
            }
        }
        Ok(())
    }

    /// Appends a placeholder ([`PLACEHOLDER`]) and binds `arg` to it.
    pub(crate) fn bind(&mut self, arg: Arg<'a>) {
        self.args.push(arg);
        if let Some(text) = &mut self.text {
            text.push(PLACEHOLDER);
        }
    }

    /// Binds several values of a column: `IN (?, ...)` on SQLite (never prepared), `= ANY($n)`
    /// on PostgreSQL; `NOT IN` and `!= ALL` with `not`.
    pub(crate) fn bind_all(
        &mut self,
        sql: SqlType,
        args: Vec<Arg<'a>>,
        not: bool,
    ) -> Result<(), Error> {
        #[cfg(feature = "postgres")]
        if self.pg {
            self.sql(if not { " != ALL(" } else { " = ANY(" });
            self.bind(crate::sql::arg::list(sql, args)?);
            self.sql(")");
            return Ok(());
        }
        let _ = sql;
        self.prepared = false;
        if args.len() > LONG_LIST {
            let integers: Option<Vec<i64>> = (args.iter())
                .map(|arg| match arg {
                    Arg::I32(n) => Some(i64::from(*n)),
                    Arg::I64(n) => Some(*n),
                    _ => None,
                })
                .collect();
            if let Some(integers) = integers {
                // SQLite parses a placeholder per value otherwise (a search index's thousands
                // of keys: `sql::search`).
                return self.in_json_array(not, &integers);
            }
        }
        self.sql(if not { " NOT IN (" } else { " IN (" });
        for (i, arg) in args.into_iter().enumerate() {
            if i > 0 {
                self.sql(", ");
            }
            self.bind(arg);
        }
        self.sql(")");
        Ok(())
    }

    /// ` IN` (` NOT IN` with `not`) the integers `values`, bound as one JSON array that SQLite's
    /// `json_each` reads: one placeholder and one statement text for any number of values.
    pub(crate) fn in_json_array(&mut self, not: bool, values: &[i64]) -> Result<(), Error> {
        let json = serde_json::to_string(values).map_err(|e| Error::Internal(e.to_string()))?;
        self.sql(if not { " NOT IN" } else { " IN" });
        self.sql(" (SELECT value FROM json_each(");
        self.bind(Arg::Text(json.into()));
        self.sql("))");
        Ok(())
    }

    /// `SELECT` of every field of `meta` in field order; with `columns`, only the fields it
    /// marks (the rest are read as their type's default: `column::selecting`; `1` if none).
    pub(crate) fn select_fields(&mut self, meta: &ModelMeta, columns: Option<&[bool]>) {
        self.sql("SELECT ");
        let mut first = true;
        for (i, field) in meta.fields.iter().enumerate() {
            if columns.is_some_and(|c| !c.get(i).copied().unwrap_or(true)) {
                continue;
            }
            if !first {
                self.sql(", ");
            }
            first = false;
            self.column(meta, field);
        }
        if first {
            self.sql("1");
        }
    }

    /// ` FROM "table"`.
    pub(crate) fn from(&mut self, meta: &ModelMeta) {
        self.sql(" FROM ");
        self.ident(meta.table);
    }

    /// ` WHERE ...` of a selection's conditions (nothing without any).
    pub(crate) fn conditions(&mut self, meta: &ModelMeta, s: &'a Select) -> Result<(), Error> {
        self.within = &s.within;
        let mut first = true;
        for f in &s.filters {
            self.sql(if first { " WHERE " } else { " AND " });
            first = false;
            self.filter(meta, f, 0)?;
        }
        for group in &s.groups {
            self.sql(if first { " WHERE " } else { " AND " });
            first = false;
            self.group(meta, group, false)?;
        }
        if !s.any_of.is_empty() {
            self.sql(if first { " WHERE (" } else { " AND (" });
            for (i, conj) in s.any_of.iter().enumerate() {
                self.sql(if i > 0 { " OR (" } else { "(" });
                for (j, f) in conj.iter().enumerate() {
                    if j > 0 {
                        self.sql(" AND ");
                    }
                    self.filter(meta, f, 0)?;
                }
                self.sql(")");
            }
            self.sql(")");
        }
        Ok(())
    }

    /// A group's condition, in parentheses: its terms joined by OR, or NOT of their AND.
    /// Under a NOT (`negated`), a condition on a NULL is false rather than unknown, so that
    /// `not=(status=closed)` keeps the rows without a status.
    fn group(&mut self, meta: &ModelMeta, group: &'a Group, negated: bool) -> Result<(), Error> {
        let (open, join, negated) = match group {
            Group::Any(_) => ("(", " OR ", negated),
            Group::Not(_) => ("NOT (", " AND ", true),
        };
        if group.terms().is_empty() {
            return Err(Error::Internal("an empty group of conditions".into()));
        }
        self.sql(open);
        for (i, term) in group.terms().iter().enumerate() {
            if i > 0 {
                self.sql(join);
            }
            match term {
                Term::Filter(f) => {
                    self.sql(if negated { "COALESCE((" } else { "(" });
                    self.filter(meta, f, 0)?;
                    self.sql(if negated { "), FALSE)" } else { ")" });
                }
                Term::Group(inner) => self.group(meta, inner, negated)?,
            }
        }
        self.sql(")");
        Ok(())
    }

    /// ` ORDER BY ...` and ` LIMIT ? OFFSET ?` of a selection.
    pub(crate) fn order_and_window(&mut self, meta: &ModelMeta, s: &Select) -> Result<(), Error> {
        self.order_by(meta, s, 0)?;
        if let Some(limit) = s.limit {
            self.sql(" LIMIT ");
            self.bind(Arg::I64(limit));
            self.sql(" OFFSET ");
            self.bind(Arg::I64(s.offset));
        }
        Ok(())
    }

    /// ` ORDER BY ...` of a selection's ordering terms from the `from`th on (nothing without
    /// any).
    pub(super) fn order_by(
        &mut self,
        meta: &ModelMeta,
        s: &Select,
        from: usize,
    ) -> Result<(), Error> {
        for (i, term) in s.order.iter().enumerate().skip(from) {
            let desc = term.desc;
            self.sql(if i == from { " ORDER BY " } else { ", " });
            let (mut model, mut inner) = (meta, true);
            for &index in &term.through {
                let fk = model.field_at(index)?;
                model = fk.joined()?;
                // As `order_joins` joins it.
                inner &= !fk.nullable && !self.narrows(model);
            }
            let field = model.field_at(term.field)?;
            if term.through.is_empty() {
                self.column(meta, field);
            } else {
                self.ident(&Writer::order_alias(i, term.through.len() - 1));
                self.sql(".");
                self.ident(field.column);
            }
            if self.pg && field.kind == FieldKind::Text {
                // Text sorts by code point, as on SQLite, whatever the database's collation.
                self.sql(" COLLATE \"C\"");
            }
            self.sql(if desc { " DESC" } else { " ASC" });
            // A row that a `LEFT JOIN` misses orders as NULL whatever the field. Without any
            // NULL to place, no `NULLS` clause: it would not match the target's plain index.
            if self.pg && (field.nullable || !inner) {
                // NULLs first ascending and last descending, as on SQLite.
                self.sql(if desc { " NULLS LAST" } else { " NULLS FIRST" });
            }
        }
        Ok(())
    }

    /// The condition of `f` from path position `depth` on, on model `meta`.
    fn filter(&mut self, meta: &ModelMeta, f: &'a Filter, depth: usize) -> Result<(), Error> {
        let index = *f
            .path
            .get(depth)
            .ok_or_else(|| Error::Internal("empty filter path".into()))?;
        let field = meta.field_at(index)?;
        if depth + 1 == f.path.len() {
            return self.leaf(meta, field, f);
        }
        let target = field.joined()?;
        self.column(meta, field);
        // A single row of the target: a scalar subquery, so that both engines can read an
        // index on (foreign key, ordering column) in order and stop at the limit.
        self.sql(if selects_one(target, f, depth + 1) {
            " = (SELECT "
        } else {
            " IN (SELECT "
        });
        self.column(target, target.pk_field());
        self.from(target);
        self.sql(" WHERE ");
        self.filter(target, f, depth + 1)?;
        self.scope(target)?;
        self.sql(")");
        Ok(())
    }

    /// Whether the selection's `within` narrows the rows of `meta` that joins reach.
    fn narrows(&self, meta: &ModelMeta) -> bool {
        narrows(self.within, meta)
    }

    /// ` AND ...` of the conditions that `within` sets on the rows of `meta` (nothing without).
    fn scope(&mut self, meta: &ModelMeta) -> Result<(), Error> {
        let within = self.within;
        for w in within.iter().filter(|w| w.table == meta.table) {
            for f in &w.filters {
                self.sql(" AND ");
                self.filter(meta, f, 0)?;
            }
        }
        Ok(())
    }

    /// The condition of `f` on `field` itself. Several values combine with OR (AND for `ne`).
    fn leaf(&mut self, meta: &ModelMeta, field: &FieldMeta, f: &'a Filter) -> Result<(), Error> {
        let sql = field.sql_type;
        let text = field.kind == FieldKind::Text;
        let args = || f.values.iter().map(|p| Arg::of(sql, p));
        match f.op {
            Op::Eq | Op::In if f.values.len() == 1 => {
                self.column(meta, field);
                self.sql(" = ");
                self.bind(Arg::of(sql, &f.values[0])?);
            }
            Op::Eq | Op::In | Op::Ne => {
                self.column(meta, field);
                self.bind_all(sql, args().collect::<Result<_, _>>()?, f.op == Op::Ne)?;
            }
            Op::Is | Op::Lt | Op::Lte | Op::Gt | Op::Gte => {
                let compare = match f.op {
                    Op::Lt => " < ",
                    Op::Lte => " <= ",
                    Op::Gt => " > ",
                    Op::Gte => " >= ",
                    _ => " = ",
                };
                self.any(f.values.len(), |w, i| {
                    w.column(meta, field);
                    let arg = Arg::of(sql, &f.values[i])?;
                    if f.op == Op::Is && matches!(arg, Arg::Null(_)) {
                        w.sql(" IS NULL");
                        return Ok(());
                    }
                    if w.pg && text && f.op != Op::Is {
                        // Comparisons by code point, as ordering.
                        w.sql(" COLLATE \"C\"");
                    }
                    w.sql(compare);
                    w.bind(arg);
                    Ok(())
                })?;
            }
            Op::Like | Op::ILike | Op::Contains => {
                if !text {
                    return Err(Error::Internal("like on a non-text field".into()));
                }
                self.any(f.values.len(), |w, i| {
                    let crate::value::param::Param::Text(value) = &f.values[i] else {
                        return Err(Error::Internal("a pattern that is not text".into()));
                    };
                    w.like(meta, field, f.op, value);
                    Ok(())
                })?;
            }
        }
        Ok(())
    }

    /// One `LIKE` of `value` on a text field: case-sensitive, case-insensitive for all of
    /// Unicode (SQLite folds both sides with `plover_lower`), or contains (a literal substring).
    fn like(&mut self, meta: &ModelMeta, field: &FieldMeta, op: Op, value: &'a str) {
        let folded = !self.pg && op != Op::Like;
        if folded {
            self.sql("plover_lower(");
        }
        self.column(meta, field);
        if folded {
            self.sql(")");
        }
        if self.pg && op != Op::Like {
            // Case folds in the database's collation: under the "C" of Plover's text columns,
            // PostgreSQL would fold ASCII letters only.
            self.sql(" COLLATE \"default\"");
        }
        self.sql(if self.pg && op != Op::Like {
            " ILIKE "
        } else {
            " LIKE "
        });
        let pattern = match (op, self.pg) {
            (Op::Like, false) => Cow::Borrowed(value),
            (Op::ILike, false) => Cow::Owned(fold_case(value)),
            (Op::Contains, false) => Cow::Owned(contains_pattern(&fold_case(value))),
            (Op::Contains, true) => Cow::Owned(contains_pattern(value)),
            (_, true) => pg_pattern(value),
            _ => Cow::Borrowed(value),
        };
        self.bind(Arg::Text(pattern));
        if op == Op::Contains {
            self.sql(" ESCAPE '\\'");
        }
    }

    /// `n` conditions joined by OR as a balanced tree: a thousand values nest ten levels deep,
    /// inside the engines' expression depth limits (SQLite's is 1,000), where a chain would not.
    fn any(
        &mut self,
        n: usize,
        mut one: impl FnMut(&mut Self, usize) -> Result<(), Error>,
    ) -> Result<(), Error> {
        if n == 0 {
            return Err(Error::Internal("a filter without values".into()));
        }
        self.balanced(0, n, &mut one)
    }

    fn balanced(
        &mut self,
        from: usize,
        to: usize,
        one: &mut impl FnMut(&mut Self, usize) -> Result<(), Error>,
    ) -> Result<(), Error> {
        if to - from == 1 {
            return one(self, from);
        }
        let middle = from + (to - from) / 2;
        self.sql("(");
        self.balanced(from, middle, one)?;
        self.sql(" OR ");
        self.balanced(middle, to, one)?;
        self.sql(")");
        Ok(())
    }
}

impl<'a> Writer<'a> {
    /// ` LEFT JOIN "target" AS "alias" ON "alias"."pk" = "from"."fk"`, holding only the rows
    /// that the selection's `within` lets joins reach: a row whose related row is missing or
    /// hidden reads NULL from it (the joins of an aggregate's fields).
    pub(crate) fn scoped_left_join(
        &mut self,
        s: &'a Select,
        from: &str,
        fk: &FieldMeta,
        alias: &str,
    ) -> Result<(), Error> {
        let target = fk.joined()?;
        self.within = &s.within;
        self.sql(" LEFT JOIN ");
        self.ident(target.table);
        self.sql(" AS ");
        self.ident(alias);
        self.sql(" ON ");
        self.ident(alias);
        self.sql(".");
        self.ident(target.pk_field().column);
        self.sql(" = ");
        self.ident(from);
        self.sql(".");
        self.ident(fk.column);
        self.alias = Some((target.table, alias.to_owned()));
        let scoped = self.scope(target);
        self.alias = None;
        scoped
    }
}

/// Whether `within` narrows the rows of `meta` that joins reach.
pub(super) fn narrows(within: &[Within], meta: &ModelMeta) -> bool {
    (within.iter()).any(|w| w.table == meta.table && !w.filters.is_empty())
}

/// The most integers that SQLite is given as a list of placeholders (`IN (?, ?, ...)`); a
/// longer list is one JSON array (`IN (SELECT value FROM json_each(?))`).
const LONG_LIST: usize = 64;

/// Whether `filter` from path position `depth` on selects at most one row of `meta`: a single
/// value compared for equality with a unique field (`#[rest(unique)]` or the primary key).
pub(crate) fn selects_one(meta: &ModelMeta, filter: &Filter, depth: usize) -> bool {
    depth + 1 == filter.path.len()
        && filter.values.len() == 1
        && matches!(filter.op, Op::Eq | Op::In)
        && meta
            .fields
            .get(filter.path[depth])
            .is_some_and(|f| f.unique)
}

/// A LIKE pattern for PostgreSQL, where `\` escapes by default: doubled, it is a plain
/// character, as on SQLite (only `%` and `_` are special on both).
fn pg_pattern(pattern: &str) -> Cow<'_, str> {
    if pattern.contains('\\') {
        Cow::Owned(pattern.replace('\\', "\\\\"))
    } else {
        Cow::Borrowed(pattern)
    }
}

/// `%text%` with `\`, `%` and `_` escaped by `\`, for `LIKE ... ESCAPE '\'`: a literal
/// substring on both engines.
fn contains_pattern(text: &str) -> String {
    let mut pattern = String::with_capacity(text.len() + 2);
    pattern.push('%');
    for c in text.chars() {
        if matches!(c, '\\' | '%' | '_') {
            pattern.push('\\');
        }
        pattern.push(c);
    }
    pattern.push('%');
    pattern
}
