//! The memory backend, for tests.

use std::sync::{Arc, Mutex, PoisonError};

use super::{MailBackend, MailError, Message};

/// Keeps every message sent in memory, for tests to read: clones share one outbox, so give
/// one clone to the [`Mailer`](super::Mailer) and read the other.
///
/// ```
/// use plover::mail::{MailBackend, MemoryBackend, Message};
///
/// let outbox = MemoryBackend::default();
/// let backend = outbox.clone();
/// backend.send(&Message::new("a@example.com", "n@example.com", "Hi", "Hello.")).unwrap();
/// assert_eq!(outbox.sent().len(), 1);
/// assert_eq!(outbox.take().len(), 1);
/// assert!(outbox.sent().is_empty());
/// ```
#[derive(Debug, Clone, Default)]
pub struct MemoryBackend {
    sent: Arc<Mutex<Vec<Message>>>,
}

impl MemoryBackend {
    /// The messages sent so far, oldest first.
    pub fn sent(&self) -> Vec<Message> {
        self.sent
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// The messages sent so far, oldest first, emptying the outbox.
    pub fn take(&self) -> Vec<Message> {
        std::mem::take(&mut *self.sent.lock().unwrap_or_else(PoisonError::into_inner))
    }
}

impl MailBackend for MemoryBackend {
    /// Keeps the message, once it is known to build (so that a message the other backends
    /// would refuse is refused here too).
    fn send(&self, message: &Message) -> Result<(), MailError> {
        message.to_lettre()?;
        self.sent
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(message.clone());
        Ok(())
    }
}
