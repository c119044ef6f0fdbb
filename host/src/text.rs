//! Text that came from a plugin, made safe to show: every control character escaped and the length capped.
//!
//! A plugin's log lines, the error texts it returns and anything else it writes end up in terminals, log files
//! and traces. Left as they are, a `\n` forges a line of the host's own (`lyra-character quarantined`), an ANSI
//! escape clears the screen, and a 16 MiB error text is printed whole. Every path from a plugin's text to the
//! host's output goes through [`shown`].
//!
//! "Control character" here means more than Unicode's `Cc` category ([`char::is_control`]): the format
//! characters (`Cf`) and the line and paragraph separators count too ([`is_control`]). Bidirectional overrides
//! and isolates (U+202A..U+202E, U+2066..U+2069) make a terminal show text in another order than it was
//! written (`quarantined` can read as `denitnarauq`, or a name can reorder the words after it), the marks
//! (U+200E, U+200F, U+061C) and zero-width characters (U+200B..U+200D, U+2060, U+FEFF) hide text or make two
//! names look the same, and U+2028/U+2029 break lines in some viewers. Each is shown escaped (`\u{202e}`) and
//! makes a name unprintable. (The zero-width joiner of an emoji sequence is escaped too: a plugin's log line
//! shows such a sequence as its parts.)

/// The longest error text or quarantine cause shown: a cause is one line a person reads.
pub const MAX_CAUSE: usize = 1024;

/// The longest name (a class, state, feature or asset name) quoted in an error: as long as any name a plugin may
/// pass the host.
pub const MAX_NAME: usize = 256;

/// `text` with each control character (`\n`, `\r`, `\t`, ESC, …, Unicode's C1 controls and the invisible
/// format characters: see [`is_control`]) written as an escape (`\n`, `\u{1b}`, `\u{202e}`), cut to at most
/// `max` bytes of its own (marked `[cut]`).
pub fn shown(text: &str, max: usize) -> String {
    let mut out = String::with_capacity(text.len().min(max) + 8);
    for (index, c) in text.char_indices() {
        if index >= max {
            out.push_str(" [cut]");
            break;
        }
        if is_control(c) {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    out
}

/// `text` on one line: every run of whitespace (newlines included) becomes one space, and every other control
/// character is escaped as [`shown`] does. For causes the host reports from libraries that format over several
/// lines (wasmtime's parse errors list bytes one per line), so that every error is one line in a terminal, a log
/// and a listing; such a cause may quote a name from the component it is about.
pub fn one_line(text: &str) -> String {
    shown(&text.split_whitespace().collect::<Vec<_>>().join(" "), usize::MAX)
}

/// Whether `text` can be shown as it is: no control characters (as [`is_control`] counts them).
pub fn is_printable(text: &str) -> bool {
    !text.chars().any(is_control)
}

/// Whether `c` is a control character for what the host shows: Unicode's controls (`Cc`: C0, DEL, C1), its
/// format characters (`Cf`: bidirectional overrides, isolates and marks, zero-width spaces and joiners, the
/// byte-order mark, interlinear annotations, tags, …) and the line and paragraph separators (`Zl`, `Zp`).
/// None of them is visible text: each reorders, hides or breaks what a terminal shows.
pub fn is_control(c: char) -> bool {
    c.is_control() || is_format(c)
}

/// Unicode's format characters (general category `Cf`, as of Unicode 15.1) and the line and paragraph
/// separators U+2028 and U+2029.
fn is_format(c: char) -> bool {
    // Ranges in code point order, inclusive.
    const FORMAT: &[(char, char)] = &[
        ('\u{ad}', '\u{ad}'),       // soft hyphen
        ('\u{600}', '\u{605}'),     // Arabic number signs
        ('\u{61c}', '\u{61c}'),     // Arabic letter mark
        ('\u{6dd}', '\u{6dd}'),     // Arabic end of ayah
        ('\u{70f}', '\u{70f}'),     // Syriac abbreviation mark
        ('\u{890}', '\u{891}'),     // Arabic pound and piastre marks above
        ('\u{8e2}', '\u{8e2}'),     // Arabic disputed end of ayah
        ('\u{180e}', '\u{180e}'),   // Mongolian vowel separator
        ('\u{200b}', '\u{200f}'),   // zero-width space, non-joiner, joiner; left-to-right, right-to-left marks
        ('\u{2028}', '\u{202e}'),   // line, paragraph separators; bidirectional embeddings and overrides
        ('\u{2060}', '\u{2064}'),   // word joiner, invisible operators
        ('\u{2066}', '\u{206f}'),   // bidirectional isolates; deprecated format characters
        ('\u{feff}', '\u{feff}'),   // zero-width no-break space (byte-order mark)
        ('\u{fff9}', '\u{fffb}'),   // interlinear annotation
        ('\u{110bd}', '\u{110bd}'), // Kaithi number sign
        ('\u{110cd}', '\u{110cd}'), // Kaithi number sign above
        ('\u{13430}', '\u{1343f}'), // Egyptian hieroglyph format controls
        ('\u{1bca0}', '\u{1bca3}'), // shorthand format controls
        ('\u{1d173}', '\u{1d17a}'), // musical symbol format controls
        ('\u{e0001}', '\u{e0001}'), // language tag
        ('\u{e0020}', '\u{e007f}'), // tags
    ];
    let c = c as u32;
    // Below U+00AD nothing is a format character: plain ASCII and Latin-1 text skips the search.
    c >= 0xad && FORMAT.iter().any(|&(first, last)| (first as u32..=last as u32).contains(&c))
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
        assert_eq!(one_line("import `a\u{202e}b\x1b` not found\u{2028}"), "import `a\\u{202e}b\\u{1b}` not found");
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

    /// Bidirectional overrides, isolates and marks reorder what a terminal shows; zero-width and other format
    /// characters hide text. None reaches the terminal raw, and none is printable in a name.
    #[test]
    fn invisible_format_characters_are_escaped_and_not_printable() {
        let reordering = [
            '\u{202a}', '\u{202b}', '\u{202c}', '\u{202d}', '\u{202e}', '\u{2066}', '\u{2067}', '\u{2068}', '\u{2069}',
            '\u{200e}', '\u{200f}', '\u{61c}',
        ];
        let hiding = [
            '\u{ad}',
            '\u{200b}',
            '\u{200c}',
            '\u{200d}',
            '\u{2060}',
            '\u{2064}',
            '\u{feff}',
            '\u{2028}',
            '\u{2029}',
            '\u{206a}',
            '\u{fff9}',
            '\u{e0001}',
            '\u{e0041}',
            '\u{e007f}',
            '\u{1d173}',
            '\u{13430}',
            '\u{1343f}',
        ];
        for c in reordering.into_iter().chain(hiding) {
            let text = format!("Pawn{c}Hero");
            let escaped = format!("Pawn\\u{{{:x}}}Hero", c as u32);
            assert_eq!(shown(&text, 100), escaped, "U+{:04X}", c as u32);
            assert!(!is_printable(&text), "U+{:04X}", c as u32);
            assert!(is_control(c), "U+{:04X}", c as u32);
        }
        assert_eq!(shown("ok \u{202e}deniatnarauq", 100), "ok \\u{202e}deniatnarauq");
        // The ordinary text around them stays as it is, right-to-left scripts included.
        for text in [
            "InitState.Spawned",
            "héllo wörld",
            "\u{5e9}\u{5dc}\u{5d5}\u{5dd}",
            "\u{645}\u{631}\u{62d}\u{628}\u{627}",
            "日本語",
            "🎮",
        ] {
            assert_eq!(shown(text, 100), text);
            assert!(is_printable(text), "{text}");
        }
        for c in
            ['\u{ac}', '\u{ae}', '\u{2027}', '\u{202f}', '\u{2065}', '\u{2070}', '\u{fefe}', '\u{fffc}', '\u{e0080}']
        {
            assert!(!is_control(c), "U+{:04X}", c as u32);
        }
    }
}
