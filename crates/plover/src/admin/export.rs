//! Export of the filtered query to CSV or JSON, with chosen columns, streamed.
//!
//! The rows are read in keyset chunks of [`CHUNK`] on the primary key, ascending, and each
//! chunk is encoded (CSV through the `csv` crate, RFC 4180 with CRLF line ends; JSON as one
//! array of objects, compact) as soon as it is read: the export never holds more than one
//! chunk of rows and its encoding.
//!
//! The view reads and encodes the first chunk with the request's connection, so that every
//! error it can meet (a filter the database refuses, no connection) is still an error page. An
//! export that fits in that chunk is one sized download, as any other response. A longer one
//! is streamed ([`Reply::Stream`]): the response starts with the first chunk, and each further
//! chunk is read when the client has taken the previous one, on the blocking thread pool with
//! a connection checked out for that chunk alone. A client that reads slowly, or not at all,
//! thus holds no pooled connection while it makes the server wait, and each chunk's checkout
//! is bounded by the pool's timeout as any request's. Rows written between two chunks may or
//! may not be in the file (each chunk is its own statement; the keyset never repeats or skips
//! a row that stays).
//!
//! The bound on response memory holds for the streamed body too: the server's
//! [`Guard`](crate::server::Guard) reserves each large chunk in its
//! [`ResponseMemory`](crate::server::ResponseMemory) until the connection has taken it, and
//! ends the download (the client sees it incomplete) when a chunk does not fit. An error on a
//! later chunk ends the download the same way, and is logged.

use actix_web::http::StatusCode;
use serde::ser::{Serialize, SerializeMap, Serializer};
use serde_json::Value;

use super::cells::neutralise;
use super::facets::FACETS;
use super::page::{plain_text, Chunks, Reply};
use super::prepared::{bad_request, Cx, PreparedAdmin, CHANGELIST};
use super::views::{Crumb, ExportView};
use crate::db::Conn;
use crate::error::Error;
use crate::listing::{FIELDS, LIMIT, ORDERING, PAGE};
use crate::meta::LoadFields;
use crate::query::{Filter, Op, Order, Param, Select};

/// Rows loaded per query while exporting (keyset on the primary key).
const CHUNK: i64 = 1000;

/// The form field that names the file format (`csv` or `json`).
const FORMAT: &str = "format";

/// The file formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Format {
    Csv,
    Json,
}

/// An export under way: the query of its next chunk and how to encode it.
#[derive(Debug)]
struct Export {
    /// The model's `load_fields`.
    load: LoadFields,
    /// The filtered selection, primary key ascending, [`CHUNK`] rows; past the first chunk,
    /// with `pk > last` added to `filters`.
    select: Select,
    /// The request's filters, without the keyset condition.
    filters: Vec<Filter>,
    /// The primary key's field index.
    pk: usize,
    /// The fields loaded: the primary key (for the keyset), then the chosen columns.
    fields: Vec<usize>,
    /// The names of the chosen columns.
    names: Vec<&'static str>,
    format: Format,
    /// Whether the header (CSV) or the opening bracket (JSON) is written.
    started: bool,
    /// Whether a JSON object is written (the next one follows a comma).
    any_row: bool,
    /// Whether the last chunk is read.
    done: bool,
}

impl Export {
    /// Reads and encodes the next chunk; `None` once the file is complete.
    fn next(&mut self, conn: &mut Conn<'_>) -> Result<Option<Vec<u8>>, Error> {
        if self.done {
            return Ok(None);
        }
        let rows = (self.load)(conn, &self.select, &self.fields)?;
        let last = rows.last().and_then(|r| r.first()).and_then(Value::as_i64);
        match last {
            Some(last) if rows.len() as i64 == CHUNK => {
                self.select.filters.clone_from(&self.filters);
                self.select.filters.push(Filter {
                    path: vec![self.pk],
                    op: Op::Gt,
                    values: vec![Param::Int(last)],
                });
            }
            _ => self.done = true,
        }
        let out = match self.format {
            Format::Csv => self.csv(&rows)?,
            Format::Json => self.json(&rows)?,
        };
        self.started = true;
        Ok((!out.is_empty()).then_some(out))
    }

    /// The rows as CSV records, after the header row in the first chunk.
    fn csv(&self, rows: &[Vec<Value>]) -> Result<Vec<u8>, Error> {
        let mut writer = csv::WriterBuilder::new()
            .terminator(csv::Terminator::CRLF)
            .from_writer(Vec::new());
        if !self.started {
            writer.write_record(&self.names).map_err(csv_error)?;
        }
        for row in rows {
            let values = row.iter().skip(1).map(csv_cell);
            writer.write_record(values).map_err(csv_error)?;
        }
        writer
            .into_inner()
            .map_err(|e| Error::Internal(format!("export: {e}")))
    }

    /// The rows as JSON objects: the opening bracket in the first chunk, the closing one in
    /// the last, a comma before each object but the first.
    fn json(&mut self, rows: &[Vec<Value>]) -> Result<Vec<u8>, Error> {
        let mut out = Vec::new();
        if !self.started {
            out.push(b'[');
        }
        for row in rows {
            if self.any_row {
                out.push(b',');
            }
            let object = Object {
                names: &self.names,
                values: row.get(1..).unwrap_or_default(),
            };
            serde_json::to_writer(&mut out, &object)
                .map_err(|e| Error::Internal(format!("export: {e}")))?;
            self.any_row = true;
        }
        if self.done {
            out.push(b']');
        }
        Ok(out)
    }
}

impl Chunks for Export {
    fn next_chunk(&mut self, conn: &mut Conn<'_>) -> Result<Option<Vec<u8>>, Error> {
        self.next(conn)
    }
}

/// A value as a CSV cell that spreadsheets do not evaluate ([`neutralise`]); numbers, booleans
/// and dates are written as they are.
fn csv_cell(value: &Value) -> String {
    match value {
        Value::String(text) => neutralise(text).into_owned(),
        other => plain_text(other),
    }
}

fn csv_error(e: csv::Error) -> Error {
    Error::Internal(format!("export: {e}"))
}

/// One exported row as a JSON object: the column names with the row's values, in order.
struct Object<'a> {
    names: &'a [&'static str],
    values: &'a [Value],
}

impl Serialize for Object<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(self.names.len()))?;
        for (name, value) in self.names.iter().zip(self.values) {
            map.serialize_entry(name, value)?;
        }
        map.end()
    }
}

impl PreparedAdmin {
    /// The exportable columns, in model order: what the index may show, that is the primary
    /// key and the form fields but a private field that `columns` does not name (the forms
    /// show it; a file of every row's value is another matter).
    pub(super) fn exportable(&self) -> Vec<usize> {
        (0..self.meta.fields.len())
            .filter(|&i| self.list.exposed[i])
            .collect()
    }

    /// The importable columns, in model order: the primary key and the form fields (private
    /// ones too: an import writes them as the forms do, and shows no stored value).
    pub(super) fn importable(&self) -> Vec<usize> {
        let pk = self.meta.pk;
        (0..self.meta.fields.len())
            .filter(|i| *i == pk || self.forms.fields.contains(i))
            .collect()
    }

    /// `GET {prefix}/{name}/export/` (the form) and `POST` (the file).
    pub(crate) fn export_view(&self, cx: &Cx<'_>, conn: &mut Conn<'_>) -> Result<Reply, Error> {
        let meta = self.meta;
        let exportable = self.exportable();
        // Filters only: ordering and pages do not apply to an export.
        let filters: Vec<(String, String)> = cx
            .req
            .query
            .iter()
            .filter(|(k, _)| ![ORDERING, PAGE, LIMIT, FACETS, CHANGELIST].contains(&k.as_str()))
            .cloned()
            .collect();
        let select = self.list.conditions(&self.scoped(&filters), &())?;
        if !cx.req.post {
            let view = ExportView {
                chrome: self.chrome(cx, vec![Crumb::here("Export")]),
                title: format!("Export {}", self.counted(2)),
                action: cx.req.path_and_query(),
                url: self.list_place(cx),
                columns: exportable
                    .iter()
                    .map(|&i| meta.fields[i].name.to_owned())
                    .collect(),
                filters: (filters.iter().map(|(k, _)| k.clone()))
                    .zip(self.filter_texts(conn, &filters)?)
                    .collect(),
            };
            return Ok(Reply::Html(StatusCode::OK, self.templates.export(&view)?));
        }
        let mut chosen = Vec::new();
        for (_, name) in cx.req.form.iter().filter(|(k, _)| k == FIELDS) {
            match meta.field(name) {
                Some((idx, _)) if exportable.contains(&idx) => chosen.push(idx),
                _ => return Err(bad_request(format!("'{name}' is not a column to export"))),
            }
        }
        chosen.sort_unstable();
        chosen.dedup();
        if chosen.is_empty() {
            return Err(bad_request("choose at least one column"));
        }
        let (format, content_type, extension) = match cx.req.field(FORMAT).unwrap_or_default() {
            "csv" => (Format::Csv, "text/csv; charset=utf-8", "csv"),
            "json" => (Format::Json, "application/json", "json"),
            _ => return Err(bad_request("the format is csv or json")),
        };

        let select = Select {
            order: vec![Order::asc(meta.pk)],
            limit: Some(CHUNK),
            ..select
        };
        let mut export = Export {
            load: meta.ops.load_fields,
            filters: select.filters.clone(),
            select,
            pk: meta.pk,
            fields: std::iter::once(meta.pk)
                .chain(chosen.iter().copied())
                .collect(),
            names: chosen.iter().map(|&i| meta.fields[i].name).collect(),
            format,
            started: false,
            any_row: false,
            done: false,
        };
        let first = export.next(conn)?.unwrap_or_default();
        let filename = format!("{}.{extension}", self.name);
        if export.done {
            return Ok(Reply::File {
                content_type,
                filename,
                body: first,
            });
        }
        Ok(Reply::Stream {
            content_type,
            filename,
            first,
            rest: Box::new(export),
        })
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{json, Value};

    use super::{Export, Format};
    use crate::db::Conn;
    use crate::error::Error;
    use crate::query::Select;

    fn no_rows(_: &mut Conn<'_>, _: &Select, _: &[usize]) -> Result<Vec<Vec<Value>>, Error> {
        Ok(Vec::new())
    }

    fn export(format: Format) -> Export {
        Export {
            load: no_rows,
            select: Select::default(),
            filters: Vec::new(),
            pk: 0,
            fields: vec![0, 1, 2],
            names: vec!["id", "text"],
            format,
            started: false,
            any_row: false,
            done: false,
        }
    }

    /// Rows as loaded: the primary key, then the chosen columns.
    fn rows(values: &[(i64, Value)]) -> Vec<Vec<Value>> {
        values
            .iter()
            .map(|(pk, v)| vec![json!(pk), json!(pk), v.clone()])
            .collect()
    }

    #[test]
    fn csv_has_one_header_and_quotes_fields_when_needed() -> Result<(), Error> {
        let mut csv = export(Format::Csv);
        let first = rows(&[(1, json!("plain")), (2, json!("a,b")), (3, json!(null))]);
        let out = csv.csv(&first)?;
        csv.started = true;
        assert_eq!(out, b"id,text\r\n1,plain\r\n2,\"a,b\"\r\n3,\r\n");
        let second = rows(&[
            (4, json!("say \"hi\"")),
            (5, json!("two\nlines")),
            (6, json!(true)),
        ]);
        let out = csv.csv(&second)?;
        assert_eq!(
            out,
            b"4,\"say \"\"hi\"\"\"\r\n5,\"two\nlines\"\r\n6,true\r\n"
        );
        Ok(())
    }

    #[test]
    fn csv_text_cells_that_spreadsheets_would_evaluate_start_with_a_quote() -> Result<(), Error> {
        let csv = export(Format::Csv);
        let out = csv.csv(&rows(&[
            (1, json!("=HYPERLINK(\"http://x\",\"y\")")),
            (2, json!("+1")),
            (3, json!("-2")),
            (4, json!("@SUM(A1)")),
            (5, json!("\tx")),
            (6, json!("\rx")),
            (7, json!(-3)),
            (8, json!("a=b")),
        ]))?;
        assert_eq!(
            String::from_utf8_lossy(&out),
            "id,text\r\n1,\"'=HYPERLINK(\"\"http://x\"\",\"\"y\"\")\"\r\n2,'+1\r\n3,'-2\r\n\
             4,'@SUM(A1)\r\n5,'\tx\r\n6,\"'\rx\"\r\n7,-3\r\n8,a=b\r\n"
        );
        Ok(())
    }

    #[test]
    fn csv_quotes_a_lone_empty_field_so_that_its_row_is_not_a_blank_line() -> Result<(), Error> {
        let mut csv = export(Format::Csv);
        csv.names = vec!["text"];
        let out = csv.csv(&[vec![json!(1), json!("")], vec![json!(2), json!("x")]])?;
        assert_eq!(out, b"text\r\n\"\"\r\nx\r\n");
        Ok(())
    }

    #[test]
    fn json_chunks_join_into_one_array() -> Result<(), Error> {
        let mut json = export(Format::Json);
        let mut out = json.json(&rows(&[(1, json!("a")), (2, json!(null))]))?;
        json.started = true;
        out.extend(json.json(&rows(&[(3, json!("c\"d"))]))?);
        json.done = true;
        out.extend(json.json(&[])?);
        let text = String::from_utf8(out).map_err(|e| Error::Internal(e.to_string()))?;
        assert_eq!(
            text,
            r#"[{"id":1,"text":"a"},{"id":2,"text":null},{"id":3,"text":"c\"d"}]"#
        );
        Ok(())
    }

    #[test]
    fn an_empty_json_export_is_an_empty_array() -> Result<(), Error> {
        let mut json = export(Format::Json);
        json.done = true;
        assert_eq!(json.json(&[])?, b"[]");
        Ok(())
    }
}
