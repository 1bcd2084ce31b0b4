//! Export of the filtered query to CSV or JSON, with chosen columns.

use actix_web::http::StatusCode;
use serde_json::Value;

use super::page::{plain_text, Reply};
use super::prepared::{bad_request, Cx, PreparedAdmin};
use super::views::ExportView;
use crate::db::Conn;
use crate::error::Error;
use crate::listing::parse_list_query;
use crate::model::RestModel;
use crate::query::{Filter, Op, Param};

/// Rows loaded per query while exporting (keyset on the primary key).
const CHUNK: i64 = 1000;

/// A CSV field (RFC 4180): quoted when it holds a comma, a quote or a line break.
fn csv_field(text: &str, out: &mut String) {
    if text.contains([',', '"', '\r', '\n']) {
        out.push('"');
        out.push_str(&text.replace('"', "\"\""));
        out.push('"');
    } else {
        out.push_str(text);
    }
}

impl<M: RestModel> PreparedAdmin<M> {
    /// The exportable columns: the primary key and the form fields, in model order.
    fn exportable(&self) -> Vec<usize> {
        let pk = M::meta().pk;
        (0..M::meta().fields.len())
            .filter(|i| *i == pk || self.form_fields.contains(i))
            .collect()
    }

    /// `GET {prefix}/{name}/export/` (the form) and `POST` (the file).
    pub(crate) fn export_view(&self, cx: &Cx<'_>, conn: &mut Conn<'_>) -> Result<Reply, Error> {
        let meta = M::meta();
        let exportable = self.exportable();
        // Filters only: ordering and pages do not apply to an export.
        let filters: Vec<(String, String)> = cx
            .req
            .query
            .iter()
            .filter(|(k, _)| !matches!(k.as_str(), "ordering" | "page" | "limit"))
            .cloned()
            .collect();
        let query = parse_list_query(&filters, &self.rules, i64::MAX - 1)?;
        let url = self.url(cx);
        if !cx.req.post {
            let view = ExportView {
                chrome: cx.chrome.clone(),
                title: format!("Export {}", self.name),
                action: cx.req.path_and_query(),
                url,
                columns: exportable
                    .iter()
                    .map(|&i| meta.fields[i].name.to_owned())
                    .collect(),
                filters,
            };
            return Ok(Reply::Html(StatusCode::OK, self.templates.export(&view)?));
        }
        let mut chosen = Vec::new();
        for (_, name) in cx.req.form.iter().filter(|(k, _)| k == "fields") {
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
        let format = cx.req.field("format").unwrap_or_default();
        if !matches!(format, "csv" | "json") {
            return Err(bad_request("the format is csv or json"));
        }

        // Primary key ascending, in chunks, so that a large table is never one huge read.
        let mut select = query.select;
        select.order = vec![(meta.pk, false)];
        select.offset = 0;
        select.limit = Some(CHUNK);
        let base_filters = select.filters.clone();
        let mut rows: Vec<Vec<Value>> = Vec::new();
        loop {
            let chunk = (meta.ops.load_fields)(conn, &select, &chosen_with_pk(&chosen, meta.pk))?;
            let last = chunk.last().and_then(|r| r[0].as_i64());
            let full = chunk.len() as i64 == CHUNK;
            rows.extend(chunk.into_iter().map(|mut r| r.split_off(1)));
            match last {
                Some(last) if full => {
                    select.filters = base_filters.clone();
                    select.filters.push(Filter {
                        path: vec![meta.pk],
                        op: Op::Gt,
                        values: vec![Param::Int(last)],
                    });
                }
                _ => break,
            }
        }
        let names: Vec<&str> = chosen.iter().map(|&i| meta.fields[i].name).collect();
        if format == "json" {
            let objects: Vec<Value> = rows
                .into_iter()
                .map(|row| Value::Object(names.iter().map(|n| (*n).to_owned()).zip(row).collect()))
                .collect();
            return Ok(Reply::File {
                content_type: "application/json",
                filename: format!("{}.json", self.name),
                body: Value::Array(objects).to_string().into_bytes(),
            });
        }
        let mut csv = String::new();
        for (n, name) in names.iter().enumerate() {
            if n > 0 {
                csv.push(',');
            }
            csv_field(name, &mut csv);
        }
        csv.push_str("\r\n");
        for row in rows {
            for (n, value) in row.iter().enumerate() {
                if n > 0 {
                    csv.push(',');
                }
                csv_field(&plain_text(value), &mut csv);
            }
            csv.push_str("\r\n");
        }
        Ok(Reply::File {
            content_type: "text/csv; charset=utf-8",
            filename: format!("{}.csv", self.name),
            body: csv.into_bytes(),
        })
    }
}

/// The primary key first (for the keyset), then the chosen columns.
fn chosen_with_pk(chosen: &[usize], pk: usize) -> Vec<usize> {
    std::iter::once(pk).chain(chosen.iter().copied()).collect()
}

#[cfg(test)]
mod tests {
    use super::csv_field;

    #[test]
    fn csv_fields_are_quoted_when_needed() {
        let mut out = String::new();
        for text in ["plain", "a,b", "say \"hi\"", "two\nlines", ""] {
            csv_field(text, &mut out);
            out.push('|');
        }
        assert_eq!(out, "plain|\"a,b\"|\"say \"\"hi\"\"\"|\"two\nlines\"||");
    }
}
