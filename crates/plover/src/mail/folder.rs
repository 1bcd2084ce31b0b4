//! The folder backend, for development.

use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use rand::Rng;

use super::{MailBackend, MailError, Message};

/// Writes each message as one file in a folder (made if missing): the RFC 5322 text of the
/// message, UTF-8, in a file whose name starts with the time it was written (milliseconds
/// since the Unix epoch) and ends in `.eml`, which any mail reader opens. Each file is
/// written under a temporary name and then renamed, so that a reader of the folder never sees
/// half a message.
///
/// ```
/// use plover::mail::{FolderBackend, MailBackend, Message};
///
/// let dir = std::env::temp_dir().join(format!("plover-mail-doc-{}", std::process::id()));
/// let folder = FolderBackend::new(&dir);
/// folder.send(&Message::new("a@example.com", "n@example.com", "Hi", "Hello.")).unwrap();
/// let file = std::fs::read_dir(&dir).unwrap().next().unwrap().unwrap().path();
/// assert_eq!(file.extension().and_then(|e| e.to_str()), Some("eml"));
/// # std::fs::remove_dir_all(&dir).unwrap();
/// ```
#[derive(Debug, Clone)]
pub struct FolderBackend {
    dir: PathBuf,
}

impl FolderBackend {
    /// A backend writing into `dir`.
    pub fn new(dir: impl AsRef<Path>) -> FolderBackend {
        FolderBackend {
            dir: dir.as_ref().to_owned(),
        }
    }

    /// The folder written into.
    pub fn dir(&self) -> &Path {
        &self.dir
    }
}

impl MailBackend for FolderBackend {
    fn send(&self, message: &Message) -> Result<(), MailError> {
        let text = message.to_rfc5322()?;
        std::fs::create_dir_all(&self.dir)?;
        let millis = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_millis());
        let name = format!("{millis:013}-{:016x}", rand::rng().next_u64());
        let partial = self.dir.join(format!(".{name}.part"));
        std::fs::write(&partial, text)?;
        std::fs::rename(&partial, self.dir.join(format!("{name}.eml")))?;
        Ok(())
    }
}
