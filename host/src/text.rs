//! Text that came from a plugin, made safe to show: every control character escaped and the length capped.
//!
//! A plugin's log lines, the error texts it returns and anything else it writes end up in terminals, log files
//! and traces. Left as they are, a `\n` forges a line of the host's own (`lyra-character quarantined`), an ANSI
//! escape clears the screen, and a 16 MiB error text is printed whole. Every path from a plugin's text to the
//! host's output goes through [`shown`].

/// The longest error text or quarantine cause shown: a cause is one line a person reads.
pub const MAX_CAUSE: usize = 1024;

/// `text` with each control character (`\n`, `\r`, `\t`, ESC, …, and Unicode's C1 controls) written as an escape
/// (`\n`, `\u{1b}`), cut to at most `max` bytes of its own (marked `[cut]`).
pub fn shown(text: &str, max: usize) -> String {
    let mut out = String::with_capacity(text.len().min(max) + 8);
    for (index, c) in text.char_indices() {
        if index >= max {
            out.push_str(" [cut]");
            break;
        }
        if c.is_control() {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    out
}

/// `text` on one line: every run of whitespace (newlines included) becomes one space. For causes the host
/// reports from libraries that format over several lines (wasmtime's parse errors list bytes one per line), so
/// that every error is one line in a terminal, a log and a listing.
pub fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Whether `text` can be shown as it is: no control characters.
pub fn is_printable(text: &str) -> bool {
    !text.chars().any(char::is_control)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn multi_line_causes_become_one_line() {
        assert_eq!(
            one_line("bad magic - expected=[\n    0x0,\n    0x61,\n] actual"),
            "bad magic - expected=[ 0x0, 0x61, ] actual"
        );
    }

    #[test]
    fn control_characters_are_escaped_so_a_plugin_cannot_forge_lines_or_drive_the_terminal() {
        assert_eq!(shown("ok\nlyra-character quarantined", 100), "ok\\nlyra-character quarantined");
        assert_eq!(shown("\x1b[2J\r\t\u{85}", 100), "\\u{1b}[2J\\r\\t\\u{85}");
        assert_eq!(shown("héllo wörld", 100), "héllo wörld");
    }

    #[test]
    fn long_text_is_cut_on_a_character_boundary() {
        assert_eq!(shown("abcdef", 3), "abc [cut]");
        assert_eq!(shown("ééé", 3), "éé [cut]");
        assert_eq!(shown(&"x".repeat(16 << 20), MAX_CAUSE).len(), MAX_CAUSE + " [cut]".len());
    }

    #[test]
    fn printable_text_has_no_control_characters() {
        assert!(is_printable("InitState.Spawned"));
        assert!(!is_printable("Bad\nName"));
    }
}
