//! Sending mail: a [`Message`], the [`MailBackend`] trait with three backends (SMTP over TLS
//! with [`SmtpBackend`], a folder of `.eml` files with [`FolderBackend`], memory with
//! [`MemoryBackend`]), and the [`Mailer`] handle that sends on a blocking thread and logs
//! failures (docs/accounts.md#mail).
//!
//! ```
//! use plover::mail::{Mailer, MemoryBackend, Message};
//!
//! let outbox = MemoryBackend::default();
//! let mailer = Mailer::new(outbox.clone(), "Example <noreply@example.com>");
//! let message = mailer.message("alice@example.com", "Hello", "Hello, Alice.");
//! mailer.send_now(&message).expect("memory never fails");
//! assert_eq!(outbox.sent()[0].subject, "Hello");
//! ```

mod folder;
mod mailer;
mod memory;
mod message;
mod smtp;

pub use folder::FolderBackend;
pub use mailer::Mailer;
pub use memory::MemoryBackend;
pub use message::Message;
pub use smtp::{SmtpBackend, SmtpSettings, Tls};

/// Why a message was not sent.
#[derive(Debug, thiserror::Error)]
pub enum MailError {
    /// An address (sender or recipient) that is not a valid mailbox.
    #[error("invalid address {0:?}")]
    Address(String),
    /// The message could not be built (a header lettre refused).
    #[error("the message could not be built: {0}")]
    Build(String),
    /// The SMTP server refused the message, or could not be reached.
    #[error("SMTP: {0}")]
    Smtp(String),
    /// The folder backend could not write the file.
    #[error("writing the message: {0}")]
    Io(#[from] std::io::Error),
}

/// Where messages go: an SMTP server, a folder, memory, or a backend of your own. A backend
/// is shared by every request (`Send + Sync`) and may block (the [`Mailer`] calls it on a
/// blocking thread).
pub trait MailBackend: Send + Sync + 'static {
    /// Sends one message, returning once it is accepted (or written) or has failed.
    ///
    /// # Errors
    /// A [`MailError`] saying why the message was not sent.
    fn send(&self, message: &Message) -> Result<(), MailError>;
}
