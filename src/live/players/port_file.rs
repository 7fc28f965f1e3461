//! `host --port-file PATH`: the port listened on, for scripts and tests
//! that start a host on port 0. The file is written whole or not at all
//! (a reader never sees half a number), never through a link someone left
//! at PATH (the link itself is replaced), and removed when the host ends.

use crate::engine::AppError;
use std::io::Write;
use std::path::{Path, PathBuf};

/// The port file while the host runs; dropping it removes the file, if it
/// is still the one written.
pub struct PortFile {
    path: PathBuf,
    /// What was written.
    text: String,
    /// The file written (device and inode), so a file someone else put at
    /// the path since is left alone (its text too: an inode is reused).
    #[cfg(unix)]
    written: (u64, u64),
}

impl PortFile {
    /// Writes `port` (and a newline) to `path`: into a new file beside it,
    /// then renamed over it.
    pub fn write(path: &Path, port: u16) -> Result<PortFile, AppError> {
        let failed = |source| AppError::WriteFile {
            what: "the port file",
            path: path.to_path_buf(),
            source,
        };
        let name = path.file_name().ok_or_else(|| {
            failed(std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                "the path names no file",
            ))
        })?;
        let text = format!("{port}\n");
        let mut temporary = path.to_path_buf();
        temporary.set_file_name(format!(
            ".{}.{}.tmp",
            name.to_string_lossy(),
            std::process::id()
        ));
        // A new file only: a link (or anything else) already there is
        // refused rather than followed.
        let written = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&temporary)
            .and_then(|mut file| {
                file.write_all(text.as_bytes())?;
                file.sync_all()?;
                file.metadata()
            })
            .and_then(|metadata| {
                std::fs::rename(&temporary, path)?;
                Ok(metadata)
            });
        let metadata = written.map_err(|error| {
            let _ = std::fs::remove_file(&temporary);
            failed(error)
        })?;
        #[cfg(not(unix))]
        let _ = metadata;
        Ok(PortFile {
            path: path.to_path_buf(),
            text,
            #[cfg(unix)]
            written: {
                use std::os::unix::fs::MetadataExt;
                (metadata.dev(), metadata.ino())
            },
        })
    }

    fn still_ours(&self) -> bool {
        let Ok(metadata) = std::fs::symlink_metadata(&self.path) else {
            return false;
        };
        #[cfg(unix)]
        let same = {
            use std::os::unix::fs::MetadataExt;
            (metadata.dev(), metadata.ino()) == self.written
        };
        #[cfg(not(unix))]
        let same = true;
        same && metadata.is_file()
            && std::fs::read_to_string(&self.path).is_ok_and(|text| text == self.text)
    }
}

impl Drop for PortFile {
    fn drop(&mut self) {
        if self.still_ours() {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_port_file_replaces_a_link_instead_of_writing_through_it_and_goes_at_the_end() {
        let dir = tempfile::tempdir().unwrap();
        let victim = dir.path().join("victim");
        std::fs::write(&victim, "precious\n").unwrap();
        let path = dir.path().join("port");
        std::os::unix::fs::symlink(&victim, &path).unwrap();
        let file = PortFile::write(&path, 7123).unwrap();
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious\n");
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "7123\n");
        assert!(!std::fs::symlink_metadata(&path).unwrap().is_symlink());
        drop(file);
        assert!(!path.exists());
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious\n");
        // Nothing else is left in the folder.
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }

    #[test]
    fn a_port_file_someone_replaced_is_left_to_them() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("port");
        let file = PortFile::write(&path, 7123).unwrap();
        std::fs::remove_file(&path).unwrap();
        std::fs::write(&path, "theirs\n").unwrap();
        drop(file);
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "theirs\n");
    }
}
