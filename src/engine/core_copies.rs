//! Private copies of one core library, one per machine of a match played in
//! one process (the demo): the libretro host refuses to load the same file
//! twice in a process, since its globals would be shared.

use crate::engine::interrupt::{exit_on_interrupt, keep_on_interrupt, remove_on_interrupt};
use crate::engine::AppError;
use std::path::{Path, PathBuf};

/// Private copies of one core library, one per machine (the libretro host
/// refuses to load the same file twice in a process: its globals would be
/// shared). The directory is removed when dropped, or on Ctrl-C.
pub struct CoreCopies {
    /// The directory holding the copies.
    pub dir: PathBuf,
    /// One copy per machine.
    pub paths: Vec<PathBuf>,
}

impl CoreCopies {
    /// Copies `original` `count` times into a new temporary directory.
    pub fn new(original: &Path, count: usize) -> Result<CoreCopies, AppError> {
        exit_on_interrupt();
        let base = std::env::temp_dir();
        let mut attempt = 0u32;
        let dir = loop {
            let dir = base.join(format!("netcade-demo-{}-{attempt}", std::process::id()));
            match std::fs::create_dir(&dir) {
                Ok(()) => break dir,
                Err(error)
                    if error.kind() == std::io::ErrorKind::AlreadyExists && attempt < 100 =>
                {
                    attempt += 1;
                }
                Err(source) => {
                    return Err(AppError::PrepareFile {
                        what: "a directory for the core copies",
                        path: dir,
                        source,
                    })
                }
            }
        };
        remove_on_interrupt(dir.clone());
        let mut copies = CoreCopies {
            dir,
            paths: Vec::new(),
        };
        let name = original.file_name().unwrap_or(original.as_os_str());
        for machine in 1..=count {
            let machine_dir = copies.dir.join(format!("machine{machine}"));
            let path = machine_dir.join(name);
            std::fs::create_dir(&machine_dir)
                .and_then(|()| std::fs::copy(original, &path).map(drop))
                .map_err(|source| AppError::PrepareFile {
                    what: "a copy of the core",
                    path: path.clone(),
                    source,
                })?;
            copies.paths.push(path);
        }
        Ok(copies)
    }

    /// Removes the copies' files once they are loaded (a loaded library
    /// stays mapped on Unix; elsewhere this fails quietly and `drop` retries).
    pub fn remove_files(&self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

impl Drop for CoreCopies {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
        keep_on_interrupt(&self.dir);
    }
}
