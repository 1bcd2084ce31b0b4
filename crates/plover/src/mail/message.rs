//! One e-mail message, and its RFC 5322 form (built by lettre).

use lettre::message::{header::ContentType, Mailbox, MultiPart, SinglePart};

use super::MailError;

/// One e-mail: who to, who from, a subject, a plain-text body and, if given, an HTML
/// alternative of it (sent together as `multipart/alternative`: mail readers show the one
/// they prefer).
///
/// ```
/// use plover::mail::Message;
///
/// let message = Message::new("alice@example.com", "noreply@example.com", "Hi", "Hello.")
///     .html("<p>Hello.</p>");
/// let text = String::from_utf8(message.to_rfc5322().expect("valid addresses"))
///     .expect("UTF-8");
/// assert!(text.contains("To: alice@example.com"));
/// assert!(text.contains("multipart/alternative"));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Message {
    /// The recipient: `alice@example.com` or `Alice <alice@example.com>`.
    pub to: String,
    /// The sender, in the same forms.
    pub from: String,
    /// The subject (any Unicode: it is encoded as mail needs).
    pub subject: String,
    /// The plain-text body.
    pub text: String,
    /// The HTML alternative of the body, if any.
    pub html: Option<String>,
}

impl Message {
    /// A plain-text message.
    pub fn new(to: &str, from: &str, subject: &str, text: &str) -> Message {
        Message {
            to: to.to_owned(),
            from: from.to_owned(),
            subject: subject.to_owned(),
            text: text.to_owned(),
            html: None,
        }
    }

    /// This message with an HTML alternative of its body.
    pub fn html(mut self, html: &str) -> Message {
        self.html = Some(html.to_owned());
        self
    }

    /// The message as lettre builds it (headers `From`, `To`, `Subject`, `Date`,
    /// `Message-ID`, `MIME-Version`, and the body parts in UTF-8).
    ///
    /// # Errors
    /// [`MailError::Address`] for an address that is no mailbox; [`MailError::Build`] for a
    /// message lettre refuses.
    pub fn to_lettre(&self) -> Result<lettre::Message, MailError> {
        let mailbox = |address: &str| {
            address
                .parse::<Mailbox>()
                .map_err(|_| MailError::Address(address.to_owned()))
        };
        let builder = lettre::Message::builder()
            .from(mailbox(&self.from)?)
            .to(mailbox(&self.to)?)
            .subject(&self.subject);
        let text = SinglePart::builder()
            .header(ContentType::TEXT_PLAIN)
            .body(self.text.clone());
        let built = match &self.html {
            None => builder.singlepart(text),
            Some(html) => builder.multipart(
                MultiPart::alternative().singlepart(text).singlepart(
                    SinglePart::builder()
                        .header(ContentType::TEXT_HTML)
                        .body(html.clone()),
                ),
            ),
        };
        built.map_err(|e| MailError::Build(e.to_string()))
    }

    /// The message as RFC 5322 text (CRLF line ends, UTF-8 bodies transfer-encoded as needed):
    /// what an SMTP server receives and what a `.eml` file holds.
    ///
    /// # Errors
    /// As [`Message::to_lettre`].
    pub fn to_rfc5322(&self) -> Result<Vec<u8>, MailError> {
        Ok(self.to_lettre()?.formatted())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bad_addresses_are_refused_by_name() {
        let message = Message::new("not an address", "noreply@example.com", "s", "t");
        assert!(matches!(
            message.to_rfc5322(),
            Err(MailError::Address(a)) if a == "not an address"
        ));
        let injected = Message::new(
            "a@example.com\r\nBcc: b@example.com",
            "n@example.com",
            "s",
            "t",
        );
        assert!(matches!(injected.to_rfc5322(), Err(MailError::Address(_))));
    }

    #[test]
    fn headers_cannot_be_injected_through_the_subject() {
        let message = Message::new(
            "a@example.com",
            "n@example.com",
            "hi\r\nBcc: evil@example.com",
            "body",
        );
        let text = String::from_utf8(message.to_rfc5322().unwrap_or_default()).unwrap_or_default();
        assert!(!text.contains("\r\nBcc:"), "{text}");
    }
}
