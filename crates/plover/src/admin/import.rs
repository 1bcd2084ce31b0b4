//! The import of a CSV file in the export's format, `{prefix}/{name}/import/`.
//!
//! The upload (`file`, multipart) answers a preview: every row with the values it would store
//! and the errors of every check its write runs (types, required fields, constraints,
//! choices, foreign keys, unique values against the table and the rows before it in the file,
//! the model's rules). The preview runs the writes themselves, each row in a savepoint, and
//! rolls the whole transaction back: what it shows is what the import would do, and nothing of
//! it stays. The confirmation posts the file back (`data`, base64, in a hidden input of the
//! CSRF-protected form: the server keeps nothing between the two requests) and runs the same
//! writes again, checked again, committed only when no row has an error: all rows or none.
//!
//! A row with a value in the primary key's column updates that row (only the columns of the
//! file; the others stay), one without creates a row (defaults fill in the columns the file
//! does not have). Read-only columns are read and ignored, as the forms ignore them. Text cells
//! lose the `'` that the export put before what spreadsheets would evaluate
//! ([`restore`](super::cells::restore)), so an exported file imports back to the same values.

use std::collections::HashMap;

use actix_web::http::StatusCode;
use actix_web::ResponseError;
use base64::Engine as _;
use serde_json::Value;

use super::cells::restore;
use super::erased::Changes;
use super::form::{parse_input, refusal};
use super::page::{plain_text, Reply};
use super::prepared::{Cx, PreparedAdmin};
use super::rights::require;
use super::views::{Crumb, ImportPreview, ImportRow, ImportView, Notice};
use crate::db::{cancel, Conn};
use crate::error::Error;
use crate::model::row::Row;
use crate::model::{usernames, FieldKind, FieldMeta};
use crate::query::Select;

/// A file read as far as its rows, before any value is parsed.
struct Sheet {
    /// The field of each column.
    fields: Vec<usize>,
    /// The column names, as the file has them.
    names: Vec<String>,
    /// The rows after the header.
    records: Vec<csv::StringRecord>,
}

/// One row of the file: what it writes, and what is wrong with it.
struct Parsed<C> {
    row: ImportRow,
    changes: C,
}

impl PreparedAdmin {
    /// `GET {prefix}/{name}/import/` (the upload form) and `POST` (the preview, or with
    /// `confirm=yes` the import).
    pub(crate) fn import_view(&self, cx: &Cx<'_>, conn: &mut Conn<'_>) -> Result<Reply, Error> {
        if !cx.req.post {
            return self.import_page(cx, None, None, StatusCode::OK);
        }
        let refuse =
            |message: String| self.import_page(cx, Some(message), None, StatusCode::BAD_REQUEST);
        let text = match (cx.req.field("file"), cx.req.field("data")) {
            (Some(file), _) => file.to_owned(),
            (None, Some(data)) => {
                let decoded = base64::engine::general_purpose::STANDARD
                    .decode(data.trim())
                    .ok()
                    .and_then(|bytes| String::from_utf8(bytes).ok());
                match decoded {
                    Some(text) => text,
                    None => return refuse(
                        "The copy of the file in the confirmation is damaged; send the file again."
                            .into(),
                    ),
                }
            }
            (None, None) => return refuse("Choose a CSV file to import.".into()),
        };
        let max = self.list.limits.max_import_bytes;
        if text.len() > max {
            return refuse(format!(
                "The file has {} bytes; at most {} ({max} bytes) can be imported at once: split it.",
                text.len(),
                size_text(max)
            ));
        }
        let sheet = match self.read_sheet(&text) {
            Ok(sheet) => sheet,
            Err(message) => return refuse(message),
        };
        let mut rows: Vec<Parsed<Changes>> = (sheet.records.iter().enumerate())
            .map(|(n, record)| self.parse_row(&sheet, n + 1, record))
            .collect();
        let updated = rows.iter().filter(|r| r.row.pk.is_some()).count();
        let commit = cx.req.field("confirm") == Some("yes");
        if self.import_rows(cx, conn, &mut rows, commit)? {
            return Ok(Reply::Done {
                to: self.list_place(cx),
                notice: Notice::text(format!(
                    "Imported {} {}: {} added, {updated} updated.",
                    rows.len(),
                    self.counted(rows.len()),
                    rows.len() - updated
                )),
            });
        }
        let rows: Vec<ImportRow> = rows.into_iter().map(|p| p.row).collect();
        let failed = rows.iter().filter(|r| !r.errors.is_empty()).count();
        let preview = ImportPreview {
            columns: sheet.names,
            created: rows.len() - updated,
            updated,
            failed,
            rows,
            data: base64::engine::general_purpose::STANDARD.encode(&text),
        };
        let status = if failed == 0 {
            StatusCode::OK
        } else {
            StatusCode::BAD_REQUEST
        };
        self.import_page(cx, None, Some(preview), status)
    }

    /// Writes the rows without errors in one transaction, each in a savepoint, through the
    /// forms' write ([`Self::save`]); the errors of a refused row go to it. Commits when
    /// `commit` and no row has an error (returns `true`), else rolls everything back.
    fn import_rows(
        &self,
        cx: &Cx<'_>,
        conn: &mut Conn<'_>,
        rows: &mut [Parsed<Changes>],
        commit: bool,
    ) -> Result<bool, Error> {
        // Updating stored rows needs `change` besides the page's `add`.
        require(self.rights(cx).change || rows.iter().all(|p| p.row.pk.is_none()))?;
        let meta = self.meta;
        let key = meta.fields[meta.pk].name;
        let mut rolled_back = false;
        // Usernames are checked against one read of the user table (not one per row).
        let written = usernames::in_bulk(|| {
            conn.transaction(|conn| {
                // The rows the file updates, in one query.
                let ids: Vec<i64> = rows.iter().filter_map(|p| p.row.pk).collect();
                let stored = match ids.is_empty() {
                    true => None,
                    false => Some(self.model.load(conn, &Select::ids_in(meta.pk, &ids))?),
                };
                let existing: HashMap<i64, &dyn Row> = (stored.iter())
                    .flat_map(|rows| rows.iter())
                    .map(|row| (row.pk(), row))
                    .collect();
                let mut updated: HashMap<i64, usize> = HashMap::new();
                for parsed in rows.iter_mut() {
                    // A client that left gets nothing more: stop, and roll back.
                    cancel::stop_if_client_gone()?;
                    let row = &mut parsed.row;
                    if !row.errors.is_empty() {
                        continue;
                    }
                    let current = match row.pk {
                        None => None,
                        Some(pk) => {
                            if let Some(first) = updated.insert(pk, row.number) {
                                row.errors.push((
                                    key.to_owned(),
                                    format!("row {first} updates this row already"),
                                ));
                                continue;
                            }
                            match existing.get(&pk) {
                                Some(current) => Some(*current),
                                None => {
                                    row.errors.push((
                                        key.to_owned(),
                                        format!("there is no {} with {key} {pk}", self.name),
                                    ));
                                    continue;
                                }
                            }
                        }
                    };
                    let changes = std::mem::replace(&mut parsed.changes, self.model.changes());
                    let Err(e) = self.save(cx, conn, changes, current) else {
                        continue;
                    };
                    match refusal(meta, e) {
                        Ok(refused) if refused.fields.is_empty() => {
                            let message = refused.message.unwrap_or_else(|| "Refused.".into());
                            row.errors.push((String::new(), message));
                        }
                        Ok(refused) => row.errors.extend(refused.fields),
                        Err(e) if e.status_code().is_client_error() => {
                            row.errors.push((String::new(), e.public_message()));
                        }
                        Err(e) => return Err(e),
                    }
                }
                if commit && rows.iter().all(|p| p.row.errors.is_empty()) {
                    Ok(())
                } else {
                    rolled_back = true;
                    Err(Error::Internal(
                        "the import's preview is rolled back".into(),
                    ))
                }
            })
        });
        match written {
            Ok(()) => Ok(true),
            Err(_) if rolled_back => Ok(false),
            Err(e) => Err(e),
        }
    }

    /// The header and the rows of a file, or what is wrong with it as a whole: no header, a
    /// column that is not importable or is there twice, a row of another length, no rows or
    /// more than `max_bulk_rows`, or rows to create without a column they need.
    fn read_sheet(&self, text: &str) -> Result<Sheet, String> {
        let meta = self.meta;
        let importable = self.importable();
        let columns = || {
            (importable.iter())
                .map(|&i| meta.fields[i].name)
                .collect::<Vec<_>>()
                .join(", ")
        };
        let text = text.strip_prefix('\u{feff}').unwrap_or(text);
        if let Some(message) = broken_quote(text) {
            return Err(message);
        }
        let mut reader = csv::ReaderBuilder::new().from_reader(text.as_bytes());
        let header = reader.headers().map_err(|e| csv_message(&e, text))?.clone();
        if header.iter().all(|name| name.trim().is_empty()) {
            return Err(format!(
                "The file is empty: its first line names the columns ({}).",
                columns()
            ));
        }
        let mut fields = Vec::with_capacity(header.len());
        for name in &header {
            let name = name.trim();
            let idx = match meta.field(name) {
                Some((idx, _)) if importable.contains(&idx) => idx,
                _ => {
                    return Err(format!(
                        "The column \"{name}\" is not one of {}: the columns are {}.",
                        self.name,
                        columns()
                    ))
                }
            };
            if fields.contains(&idx) {
                return Err(format!("The column \"{name}\" is there twice."));
            }
            fields.push(idx);
        }
        let max = self.list.limits.max_bulk_rows;
        let mut records = Vec::new();
        for record in reader.records() {
            if records.len() == max {
                return Err(format!(
                    "The file has more than {max} rows; import at most {max} at once: split it."
                ));
            }
            records.push(record.map_err(|e| csv_message(&e, text))?);
        }
        if records.is_empty() {
            return Err("The file has no rows after its header.".into());
        }
        let pk_column = fields.iter().position(|&i| i == meta.pk);
        let creates = records.iter().any(|r| {
            pk_column
                .and_then(|c| r.get(c))
                .is_none_or(|cell| cell.trim().is_empty())
        });
        if creates {
            let missing = (self.forms.fields.iter().copied()).find(|&i| {
                let field = &meta.fields[i];
                field.required && !field.read_only && !fields.contains(&i)
            });
            if let Some(idx) = missing {
                return Err(format!(
                    "Rows without a value in the column \"{}\" add rows, which need the column \
                     \"{}\": the file has none.",
                    meta.fields[meta.pk].name, meta.fields[idx].name
                ));
            }
        }
        Ok(Sheet {
            fields,
            names: header.iter().map(|n| n.trim().to_owned()).collect(),
            records,
        })
    }

    /// Row `number` of the file: its key, its values as changes, what is wrong with them.
    fn parse_row(
        &self,
        sheet: &Sheet,
        number: usize,
        record: &csv::StringRecord,
    ) -> Parsed<Changes> {
        let meta = self.meta;
        let mut changes = self.model.changes();
        let mut row = ImportRow {
            number,
            pk: None,
            cells: Vec::with_capacity(sheet.fields.len()),
            errors: Vec::new(),
        };
        let pk_cell = (sheet.fields.iter().zip(record.iter()))
            .find(|(&idx, _)| idx == meta.pk)
            .map(|(_, cell)| cell.trim())
            .filter(|cell| !cell.is_empty());
        if let Some(cell) = pk_cell {
            match cell.parse::<i64>() {
                Ok(pk) => row.pk = Some(pk),
                Err(_) => row.errors.push((
                    meta.fields[meta.pk].name.to_owned(),
                    "Enter a whole number, or nothing for a new row.".into(),
                )),
            }
        }
        let creating = row.pk.is_none();
        for (&idx, cell) in sheet.fields.iter().zip(record.iter()) {
            let field = &meta.fields[idx];
            if idx == meta.pk || field.read_only {
                continue;
            }
            let parsed = cell_value(field, cell, creating).and_then(|value| match value {
                Some(value) => self.model.set_json(&mut changes, idx, &value),
                None => Ok(()),
            });
            if let Err(message) = parsed {
                row.errors.push((field.name.to_owned(), message));
            }
        }
        if creating {
            self.model.fill_defaults(&mut changes);
        }
        // The values as they would be stored (a new row's defaults too), or as the file has
        // them where they are wrong.
        for (&idx, cell) in sheet.fields.iter().zip(record.iter()) {
            let field = &meta.fields[idx];
            let text = match self.model.changes_json(&changes, idx) {
                _ if idx == meta.pk => cell.trim().to_owned(),
                _ if field.read_only => String::new(), // never taken from a file, as from a form
                _ if row.errors.iter().any(|(name, _)| name == field.name) => cell.to_owned(),
                Some(value) => plain_text(&value),
                None => String::new(),
            };
            row.cells.push(text);
        }
        Parsed { row, changes }
    }

    fn import_page(
        &self,
        cx: &Cx<'_>,
        error: Option<String>,
        preview: Option<ImportPreview>,
        status: StatusCode,
    ) -> Result<Reply, Error> {
        let meta = self.meta;
        let url = self.url(cx);
        let view = ImportView {
            chrome: self.chrome(cx, vec![Crumb::here("Import")]),
            title: format!("Import {}", self.counted(2)),
            action: self.keeping_place(cx, &format!("{url}import/")),
            url: self.list_place(cx),
            columns: (self.importable().iter())
                .map(|&i| meta.fields[i].name.to_owned())
                .collect(),
            key: meta.fields[meta.pk].name.to_owned(),
            max_rows: self.list.limits.max_bulk_rows,
            max_size: size_text(self.list.limits.max_import_bytes),
            error,
            preview,
        };
        Ok(Reply::Html(status, self.templates.import(&view)?))
    }
}

/// The value a cell gives its field, as the forms' inputs are read ([`parse_input`]); `None`:
/// the field is not given (an empty cell of a new row's field with a default). Booleans are
/// `true` or `false` (also `1`/`0`, `yes`/`no`); an empty cell is NULL for a nullable field,
/// and for a text field that is not nullable the empty text.
fn cell_value(field: &FieldMeta, cell: &str, creating: bool) -> Result<Option<Value>, String> {
    if field.kind == FieldKind::Text {
        return Ok(Some(if cell.is_empty() && field.nullable {
            Value::Null
        } else {
            Value::String(restore(cell).to_owned())
        }));
    }
    if cell.trim().is_empty() {
        return match () {
            () if field.nullable => Ok(Some(Value::Null)),
            () if creating && !field.required => Ok(None),
            () => Err("This field is required.".into()),
        };
    }
    if field.kind == FieldKind::Bool {
        return match cell.trim().to_ascii_lowercase().as_str() {
            "true" | "1" | "yes" => Ok(Some(Value::Bool(true))),
            "false" | "0" | "no" => Ok(Some(Value::Bool(false))),
            _ => Err("Enter true or false.".into()),
        };
    }
    parse_input(field, cell).map(Some)
}

/// A CSV error as a message for people, naming the row as the preview numbers them (the first
/// after the header is 1) and the line of `text` it starts on.
fn csv_message(error: &csv::Error, text: &str) -> String {
    let place = match error.position().map(|p| (p.record(), p.byte())) {
        Some((0, _)) | None => "The header".to_owned(),
        Some((row, byte)) => {
            // The line the row starts on (a quoted cell may span lines); the reader's position
            // may be before the previous line's end (the `\n` of a `\r\n`).
            let at = usize::try_from(byte).map_or(text.len(), |b| b.min(text.len()));
            let (before, after) = text.split_at(text.floor_char_boundary(at));
            let ends = after.chars().take_while(|c| matches!(c, '\r' | '\n'));
            let lines = before.matches('\n').count() + ends.filter(|&c| c == '\n').count();
            format!("Row {row} (line {})", lines + 1)
        }
    };
    match error.kind() {
        csv::ErrorKind::UnequalLengths {
            expected_len, len, ..
        } => format!(
            "{place} has {len} cells where the header has {expected_len}: every row needs one \
             cell per column."
        ),
        _ => format!("{place} cannot be read as CSV: {error}"),
    }
}

/// What breaks the file's quoting (RFC 4180), naming the line: a quoted cell never closed, or
/// text after a cell's closing quote. The CSV reader takes both without a word (an unclosed
/// quote swallows the rest of the file into one cell; `"a"b` reads `ab`), so the file is
/// checked first and refused as a whole. A quote inside a cell that does not start with one
/// is text, as the reader reads it.
fn broken_quote(text: &str) -> Option<String> {
    let mut line = 1;
    let mut chars = text.chars().peekable();
    let mut cell_start = true;
    while let Some(c) = chars.next() {
        match c {
            '"' if cell_start => {
                let opened = line;
                loop {
                    match chars.next() {
                        None => {
                            return Some(format!(
                                "Line {opened}: a quoted cell is never closed (a \" without \
                                 its closing \"; a quote inside a quoted cell is written \"\")."
                            ))
                        }
                        Some('"') if chars.peek() == Some(&'"') => {
                            chars.next();
                        }
                        Some('"') => break,
                        Some('\n') => line += 1,
                        Some(_) => {}
                    }
                }
                if !matches!(chars.peek(), None | Some(',' | '\r' | '\n')) {
                    return Some(format!(
                        "Line {line}: text follows the closing quote of a cell (a quote inside \
                         a quoted cell is written \"\")."
                    ));
                }
                cell_start = false;
            }
            '\n' => {
                line += 1;
                cell_start = true;
            }
            ',' | '\r' => cell_start = true,
            _ => cell_start = false,
        }
    }
    None
}

/// A size for people: `2 MiB`, `512 KiB`, `100 bytes`.
fn size_text(bytes: usize) -> String {
    const KIB: usize = 1024;
    match bytes {
        b if b >= KIB * KIB && b % (KIB * KIB) == 0 => format!("{} MiB", b / (KIB * KIB)),
        b if b >= KIB && b % KIB == 0 => format!("{} KiB", b / KIB),
        b => format!("{b} bytes"),
    }
}
