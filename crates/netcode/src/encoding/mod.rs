//! The byte and bit encodings the wire protocol and the replay file share,
//! pure: bits written least significant first, LEB128 varints, GGPO's input
//! toggle code and the bounded lz4 savestate blob. Below both `protocol` and
//! `replay`, so a change to one format cannot reach into the other.

pub mod bits;
pub mod hex;
pub mod printable;
pub mod state_blob;
pub mod toggles;
pub mod varint;

pub use bits::{BitReader, BitWriter};
pub use printable::is_printable;
pub use state_blob::StateBlobError;
pub use toggles::{put_toggles, read_toggles, toggle_cost};
pub use varint::{put_varint, read_varint};

/// Why bytes cannot be read as the encoding they should hold. Each format
/// names the field and what the bytes are (a datagram, a record) itself.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ReadError {
    /// The bytes end in the middle of a field.
    #[error("the bytes end in the middle of a field")]
    Truncated,
    /// A LEB128 number is longer than 64 bits or not in its shortest form.
    #[error("malformed variable-length number")]
    BadVarint,
    /// An input's toggle code changes more than the 16 buttons a pad has.
    #[error("an input frame toggles more buttons than a pad has")]
    BadInputBits,
}
