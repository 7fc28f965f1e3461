//! Which bytes differ between two versions of a memory or a state, as
//! ranges, so a desync report points at the variables that went wrong.

use std::fmt;
use std::ops::Range;

/// How many ranges a report lists by default before saying "and N more".
pub const DEFAULT_RANGE_CAP: usize = 16;

/// The bytes that differ between two buffers, coalesced into ranges
/// (half-open: `0x0010..0x0012` is the two bytes 0x10 and 0x11).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ByteDiff {
    /// The first ranges found, at most the cap given to [`ByteDiff::between`].
    pub ranges: Vec<Range<usize>>,
    /// All differing ranges, listed or not.
    pub total_ranges: usize,
    /// All differing bytes (a length difference counts the extra bytes).
    pub differing_bytes: usize,
    /// Length of `before`, in bytes.
    pub len_before: usize,
    /// Length of `after`, in bytes.
    pub len_after: usize,
}

impl ByteDiff {
    /// Compares `before` with `after` byte by byte, listing at most `cap`
    /// ranges. Bytes past the end of the shorter buffer count as differing.
    pub fn between(before: &[u8], after: &[u8], cap: usize) -> ByteDiff {
        let mut diff = ByteDiff {
            len_before: before.len(),
            len_after: after.len(),
            ..ByteDiff::default()
        };
        let common = before.len().min(after.len());
        let longest = before.len().max(after.len());
        let mut open: Option<usize> = None;
        for offset in 0..common {
            let differs = before[offset] != after[offset];
            match (differs, open) {
                (true, None) => open = Some(offset),
                (false, Some(start)) => {
                    diff.push(start..offset, cap);
                    open = None;
                }
                _ => {}
            }
        }
        if longest > common {
            // The extra tail joins a range still open at the common end.
            let start = open.take().unwrap_or(common);
            diff.push(start..longest, cap);
        } else if let Some(start) = open {
            diff.push(start..common, cap);
        }
        diff
    }

    fn push(&mut self, range: Range<usize>, cap: usize) {
        self.total_ranges += 1;
        self.differing_bytes += range.len();
        if self.ranges.len() < cap {
            self.ranges.push(range);
        }
    }

    /// True when the buffers are equal in length and content.
    pub fn is_identical(&self) -> bool {
        self.total_ranges == 0
    }

    /// The ranges as `0x0010..0x0012` strings, for JSON.
    pub fn range_strings(&self) -> Vec<String> {
        self.ranges.iter().map(format_range).collect()
    }

    /// The diff as a JSON object: the listed ranges as hex strings, the
    /// totals and both lengths.
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::json!({
            "ranges": self.range_strings(),
            "total_ranges": self.total_ranges,
            "differing_bytes": self.differing_bytes,
            "len_before": self.len_before,
            "len_after": self.len_after,
        })
    }
}

/// `0x0010..0x0012`: offsets in hex, at least 4 digits.
pub fn format_range(range: &Range<usize>) -> String {
    format!("{:#06x}..{:#06x}", range.start, range.end)
}

/// `identical`, or `0x0010..0x0012, 0x0100..0x0101 (and 3 more ranges; 9 bytes
/// differ)`.
impl fmt::Display for ByteDiff {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_identical() {
            return f.write_str("identical");
        }
        for (index, range) in self.ranges.iter().enumerate() {
            if index > 0 {
                f.write_str(", ")?;
            }
            f.write_str(&format_range(range))?;
        }
        f.write_str(" (")?;
        let unlisted = self.total_ranges - self.ranges.len();
        if unlisted > 0 {
            write!(f, "and {unlisted} more ranges; ")?;
        }
        let plural = if self.differing_bytes == 1 { "" } else { "s" };
        write!(f, "{} byte{plural} differ", self.differing_bytes)?;
        if self.len_before != self.len_after {
            write!(f, "; length {} vs {}", self.len_before, self.len_after)?;
        }
        f.write_str(")")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identical_buffers_have_no_ranges() {
        let diff = ByteDiff::between(&[1, 2, 3], &[1, 2, 3], 8);
        assert!(diff.is_identical());
        assert_eq!(diff.to_string(), "identical");
    }

    #[test]
    fn adjacent_differing_bytes_coalesce_into_one_range() {
        let before = [0u8; 32];
        let mut after = before;
        after[0x10] = 1;
        after[0x11] = 2;
        after[0x14] = 3;
        let diff = ByteDiff::between(&before, &after, 8);
        assert_eq!(diff.ranges, vec![0x10..0x12, 0x14..0x15]);
        assert_eq!(diff.differing_bytes, 3);
        assert_eq!(
            diff.to_string(),
            "0x0010..0x0012, 0x0014..0x0015 (3 bytes differ)"
        );
    }

    #[test]
    fn a_range_running_to_the_end_is_closed() {
        let diff = ByteDiff::between(&[0, 0, 0], &[0, 1, 1], 8);
        assert_eq!(diff.ranges, vec![1..3]);
    }

    #[test]
    fn the_list_is_capped_but_the_totals_count_everything() {
        let before = [0u8; 100];
        let after: Vec<u8> = (0..100).map(|i| (i % 2) as u8).collect();
        let diff = ByteDiff::between(&before, &after, 3);
        assert_eq!(diff.ranges.len(), 3);
        assert_eq!(diff.total_ranges, 50);
        assert_eq!(diff.differing_bytes, 50);
        assert!(diff.to_string().contains("and 47 more ranges"), "{diff}");
    }

    #[test]
    fn extra_bytes_of_a_longer_buffer_differ() {
        let diff = ByteDiff::between(&[1, 2], &[1, 3, 4, 5], 8);
        assert_eq!(diff.ranges, vec![1..4]);
        assert!(diff.to_string().contains("length 2 vs 4"), "{diff}");
        let diff = ByteDiff::between(&[1, 2, 3], &[1, 2], 8);
        assert_eq!(diff.ranges, vec![2..3]);
    }
}
