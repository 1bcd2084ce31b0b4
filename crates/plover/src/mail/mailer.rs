//! The `Mailer` handle: a backend and a sender address, sending off the request's thread.

use std::fmt;
use std::sync::Arc;

use super::{MailBackend, MailError, Message};

/// A mail backend and the address mail comes from, cloned freely (clones share the backend).
///
/// A backend may block (an SMTP exchange takes round trips, or a timeout), so the mailer runs
/// it on a blocking thread: [`Mailer::send`] awaits it there, [`Mailer::send_later`] does not
/// wait at all. A failure is logged (`log::error!`, with the recipient and the reason) and
/// never becomes an error page: the person who triggered a mail learns nothing from it, and
/// the message is not retried. Send after the request's database work is done, never while
/// a pooled connection is held (a slow server must not hold the pool).
#[derive(Clone)]
pub struct Mailer {
    backend: Arc<dyn MailBackend>,
    from: Arc<str>,
}

impl fmt::Debug for Mailer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Mailer")
            .field("from", &self.from)
            .finish_non_exhaustive()
    }
}

impl Mailer {
    /// A mailer sending through `backend`, from `from` (`noreply@example.com` or
    /// `Example <noreply@example.com>`).
    pub fn new(backend: impl MailBackend, from: &str) -> Mailer {
        Mailer {
            backend: Arc::new(backend),
            from: from.into(),
        }
    }

    /// The address mail comes from.
    pub fn from_address(&self) -> &str {
        &self.from
    }

    /// A plain-text message from this mailer's address.
    pub fn message(&self, to: &str, subject: &str, text: &str) -> Message {
        Message::new(to, &self.from, subject, text)
    }

    /// Sends `message` on this thread (it may block), logging a failure.
    ///
    /// # Errors
    /// The backend's [`MailError`], once logged.
    pub fn send_now(&self, message: &Message) -> Result<(), MailError> {
        let sent = self.backend.send(message);
        if let Err(e) = &sent {
            log::error!(
                "mail: a message to {} ({:?}) was not sent: {e}",
                message.to,
                message.subject
            );
        }
        sent
    }

    /// Sends `message` on a blocking thread and waits for it, logging a failure.
    ///
    /// # Errors
    /// The backend's [`MailError`], once logged.
    pub async fn send(&self, message: Message) -> Result<(), MailError> {
        let mailer = self.clone();
        match tokio::task::spawn_blocking(move || mailer.send_now(&message)).await {
            Ok(sent) => sent,
            Err(e) => {
                log::error!("mail: the sending thread failed: {e}");
                Err(MailError::Smtp(format!("the sending thread failed: {e}")))
            }
        }
    }

    /// Sends `message` on a blocking thread without waiting (a thread of its own outside a
    /// tokio runtime); a failure is only logged.
    pub fn send_later(&self, message: Message) {
        let mailer = self.clone();
        let work = move || {
            let _ = mailer.send_now(&message);
        };
        match tokio::runtime::Handle::try_current() {
            Ok(runtime) => drop(runtime.spawn_blocking(work)),
            Err(_) => drop(std::thread::spawn(work)),
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::mail::{FolderBackend, MemoryBackend};

    #[actix_web::test]
    async fn send_waits_on_a_blocking_thread_and_reports() {
        let outbox = MemoryBackend::default();
        let mailer = Mailer::new(outbox.clone(), "Site <noreply@example.com>");
        mailer
            .send(mailer.message("alice@example.com", "Hi", "Hello."))
            .await
            .unwrap();
        assert_eq!(outbox.sent()[0].from, "Site <noreply@example.com>");
        let refused = mailer.send(mailer.message("nobody", "Hi", "Hello.")).await;
        assert!(matches!(refused, Err(MailError::Address(_))));
        assert_eq!(
            outbox.sent().len(),
            1,
            "a message that does not build is not kept"
        );
    }

    #[test]
    fn the_folder_backend_writes_one_utf8_eml_file_per_message() {
        let dir = std::env::temp_dir().join(format!("plover-mail-test-{}", std::process::id()));
        let mailer = Mailer::new(FolderBackend::new(&dir), "noreply@example.com");
        for n in 0..2 {
            let message = mailer.message("alice@example.com", "Ünïcode", &format!("élan {n}"));
            mailer.send_now(&message).unwrap();
        }
        let mut files: Vec<_> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        files.sort();
        assert_eq!(files.len(), 2, "one file each, no partial file left");
        let text = std::fs::read_to_string(&files[0]).unwrap();
        assert!(files[0].to_string_lossy().ends_with(".eml"));
        assert!(text.contains("To: alice@example.com\r\n"), "{text}");
        assert!(
            text.contains("Subject: =?utf-8?"),
            "encoded subject: {text}"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
