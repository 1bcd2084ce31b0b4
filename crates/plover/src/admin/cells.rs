//! Text cells of the CSV export that spreadsheets do not evaluate, and the import that reads
//! them back as they were.
//!
//! A text that starts with `=`, `+`, `-`, `@`, a tab or a carriage return is written with a
//! leading `'` (OWASP's advice against formula injection). So that the import can tell such a
//! cell from a text that really starts with `'`, the rule looks past the text's own leading
//! quotes: a text whose first character after them is one of those six gets one more `'`, and
//! the import removes one `'` from exactly those cells. Every other text is written as it is.

/// The characters a spreadsheet evaluates at the start of a cell.
const EVALUATED: [char; 6] = ['=', '+', '-', '@', '\t', '\r'];

/// Whether `text`, past its leading quotes, starts with a character spreadsheets evaluate.
fn evaluated(text: &str) -> bool {
    text.trim_start_matches('\'').starts_with(EVALUATED)
}

/// A text as the export writes it.
pub(super) fn neutralise(text: &str) -> std::borrow::Cow<'_, str> {
    if evaluated(text) {
        format!("'{text}").into()
    } else {
        text.into()
    }
}

/// A text cell as the export wrote it, back to the text.
pub(super) fn restore(cell: &str) -> &str {
    match cell.strip_prefix('\'') {
        Some(rest) if evaluated(rest) => rest,
        _ => cell,
    }
}

#[cfg(test)]
mod tests {
    use super::{neutralise, restore};

    #[test]
    fn cells_spreadsheets_would_evaluate_get_one_quote() {
        for (text, cell) in [
            ("=1+1", "'=1+1"),
            ("+1", "'+1"),
            ("-2", "'-2"),
            ("@SUM(A1)", "'@SUM(A1)"),
            ("\tx", "'\tx"),
            ("\rx", "'\rx"),
            ("a=b", "a=b"),
            ("'quoted'", "'quoted'"),
            ("'=x", "''=x"),
            ("", ""),
        ] {
            assert_eq!(neutralise(text), cell, "{text:?}");
        }
    }

    #[test]
    fn every_text_reads_back_as_it_was() {
        for text in [
            "=1+1", "+1", "-2", "@x", "\tx", "\rx", "'", "''", "'a", "'=x", "''=x", "'-", "a", "",
            "x'=",
        ] {
            assert_eq!(restore(&neutralise(text)), text, "{text:?}");
        }
    }
}
