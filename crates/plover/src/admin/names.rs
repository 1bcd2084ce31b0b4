//! The names of models, fields and rows as people read them.

/// A name people read as it stands inside a sentence: its first letter in lower case
/// (`Date joined` -> "By date joined", `Message` -> "Add message"), unless the name begins
/// with an acronym (`URL`, `API key`).
pub(crate) fn in_sentence(name: &str) -> String {
    let mut chars = name.chars();
    match (chars.next(), chars.next()) {
        (Some(first), second) if !second.is_some_and(char::is_uppercase) => {
            first.to_lowercase().chain(name.chars().skip(1)).collect()
        }
        _ => name.to_owned(),
    }
}

/// The text of row `pk` of model `model` as a link or title shows it: `text`, or
/// `"<model> #<pk>"` where `text` is empty or only white space (as `RestModel::display` does
/// for its own rows; this covers text stored or read elsewhere: history entries, lookups).
pub(crate) fn object_text(text: String, model: &str, pk: impl std::fmt::Display) -> String {
    if text.trim().is_empty() {
        format!("{model} #{pk}")
    } else {
        text
    }
}

#[cfg(test)]
mod tests {
    use super::in_sentence;

    #[test]
    fn names_inside_a_sentence_keep_acronyms() {
        assert_eq!(in_sentence("Date joined"), "date joined");
        assert_eq!(in_sentence("Message"), "message");
        assert_eq!(in_sentence("ID"), "ID");
        assert_eq!(in_sentence("API key"), "API key");
        assert_eq!(in_sentence(""), "");
    }
}
