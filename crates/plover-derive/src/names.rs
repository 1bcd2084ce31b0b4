//! The names people read: a field's or a model's humanized default from its identifier, and
//! the plural of a model's.

/// `join_date` -> `Join date`: the words of a snake-case identifier, the first capitalized
/// (`id` reads `ID`).
pub(crate) fn humanize(snake: &str) -> String {
    let words: Vec<&str> = (snake.split('_'))
        .filter(|w| !w.is_empty())
        .map(|w| if w == "id" { "ID" } else { w })
        .collect();
    capitalize(&words.join(" "))
}

/// `BlogPost` -> `Blog post`: the words of a camel-case identifier, the first capitalized.
pub(crate) fn humanize_camel(camel: &str) -> String {
    let chars: Vec<char> = camel.chars().collect();
    let mut snake = String::with_capacity(camel.len() + 4);
    for (i, &c) in chars.iter().enumerate() {
        let previous = i.checked_sub(1).map(|p| chars[p]);
        let next = chars.get(i + 1);
        // A word begins at an upper-case letter after a lower-case one or a digit (`BlogPost`),
        // or at the last capital of a run followed by a lower-case letter (`HTTPLog`).
        let starts = c.is_uppercase()
            && previous
                .is_some_and(|p| !p.is_uppercase() || next.is_some_and(|n| n.is_lowercase()));
        if starts {
            snake.push('_');
        }
        snake.extend(c.to_lowercase());
    }
    humanize(&snake)
}

/// The plural of an English noun phrase, by the common rules: `Message` -> `Messages`,
/// `Category` -> `Categories`, `Box` -> `Boxes`. An irregular plural is declared with
/// `verbose_name_plural`.
pub(crate) fn plural(singular: &str) -> String {
    let lower = singular.to_lowercase();
    let before_y = lower.chars().rev().nth(1);
    if lower.ends_with('y') && before_y.is_some_and(|c| !"aeiou".contains(c)) {
        format!("{}ies", &singular[..singular.len() - 1])
    } else if ["s", "x", "z", "ch", "sh"]
        .iter()
        .any(|e| lower.ends_with(e))
    {
        format!("{singular}es")
    } else {
        format!("{singular}s")
    }
}

/// The text with its first character in upper case.
fn capitalize(text: &str) -> String {
    let mut chars = text.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::{humanize, humanize_camel, plural};

    #[test]
    fn humanized_defaults() {
        assert_eq!(humanize("join_date"), "Join date");
        assert_eq!(humanize("content"), "Content");
        assert_eq!(humanize("id"), "ID");
        assert_eq!(humanize("order_id"), "Order ID");
        assert_eq!(humanize("_private__name"), "Private name");
        assert_eq!(humanize_camel("Message"), "Message");
        assert_eq!(humanize_camel("BlogPost"), "Blog post");
        assert_eq!(humanize_camel("HTTPLog"), "Http log");
    }

    #[test]
    fn plurals() {
        assert_eq!(plural("Message"), "Messages");
        assert_eq!(plural("Category"), "Categories");
        assert_eq!(plural("Day"), "Days");
        assert_eq!(plural("Box"), "Boxes");
        assert_eq!(plural("Blog post"), "Blog posts");
    }
}
