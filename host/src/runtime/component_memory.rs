//! How much linear memory a component starts with, read from its binary: the largest initial size among its
//! core modules' memories. A language runtime's memory at rest grows from what it starts with (a Rust or C
//! plugin starts with one MiB or less; componentize-js's runtime with 9 MiB and componentize-py's with 13),
//! so the host fits a component's default memory limit to it (see `Limits`).
//!
//! Only section headers are read: the parser jumps from section to section, into nested components and core
//! modules, and reads the memory sections alone, so a 19 MB component costs microseconds.

/// The largest initial linear memory, in bytes, among the core modules of `component` (a component or a core
/// module); `None` when the bytes cannot be read as one.
pub fn largest_initial_memory(component: &[u8]) -> Option<u64> {
    largest_within(component, 0)
}

/// How deep components may nest here: a component file is read before wasmtime validates it, and a crafted one
/// nests a few bytes a level (deeper than any real component, and than a thread's stack would hold).
const MAX_NESTING: usize = 100;

fn largest_within(component: &[u8], depth: usize) -> Option<u64> {
    if depth > MAX_NESTING {
        return None;
    }
    let body = component.get(8..)?;
    sections(body)?.into_iter().try_fold(0u64, |largest, (id, section)| {
        let found = match (id, component.get(4..8)?) {
            // A component's core module (section 1) and nested component (section 4) start with their own header.
            (1 | 4, [_, _, 0x01, 0x00]) => largest_within(section, depth + 1)?,
            // A core module's memory section.
            (5, [0x01, 0x00, 0x00, 0x00]) => memories(section)?,
            _ => 0,
        };
        Some(largest.max(found))
    })
}

/// The sections of a binary's body, as (id, contents).
fn sections(mut bytes: &[u8]) -> Option<Vec<(u8, &[u8])>> {
    let mut found = Vec::new();
    while let Some((&id, rest)) = bytes.split_first() {
        let (size, rest) = leb128(rest)?;
        let size = usize::try_from(size).ok()?;
        found.push((id, rest.get(..size)?));
        bytes = rest.get(size..)?;
    }
    Some(found)
}

/// The largest initial size, in bytes, in a memory section.
fn memories(section: &[u8]) -> Option<u64> {
    let (count, mut rest) = leb128(section)?;
    let mut largest = 0u64;
    for _ in 0..count {
        let (&flags, after) = rest.split_first()?;
        let (initial, after) = leb128(after)?;
        rest = if flags & 1 == 1 { leb128(after)?.1 } else { after };
        // Pages of 64 KiB, unless the custom-page-sizes proposal says otherwise (flag 8): then a page size
        // exponent follows, and the host assumes the default size, which is the larger.
        if flags & 8 == 8 {
            rest = leb128(rest)?.1;
        }
        largest = largest.max(initial.saturating_mul(64 << 10));
    }
    Some(largest)
}

/// An unsigned LEB128 number and what follows it.
fn leb128(bytes: &[u8]) -> Option<(u64, &[u8])> {
    let mut value = 0u64;
    for (index, byte) in bytes.iter().enumerate().take(10) {
        value |= u64::from(byte & 0x7f) << (7 * index);
        if byte & 0x80 == 0 {
            return Some((value, &bytes[index + 1..]));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    const MODULE_HEADER: [u8; 8] = *b"\0asm\x01\0\0\0";
    const COMPONENT_HEADER: [u8; 8] = *b"\0asm\x0d\0\x01\0";

    fn section(id: u8, contents: &[u8]) -> Vec<u8> {
        assert!(contents.len() < 128);
        [&[id, contents.len() as u8][..], contents].concat()
    }

    /// A core module with memories of these initial pages (and a type section before them).
    fn module(pages: &[u8]) -> Vec<u8> {
        let mut memories = vec![pages.len() as u8];
        for page in pages {
            memories.extend([0x00, *page]);
        }
        [&MODULE_HEADER[..], &section(1, &[0]), &section(5, &memories)].concat()
    }

    #[test]
    fn the_largest_initial_memory_of_any_nested_module_is_found() {
        assert_eq!(largest_initial_memory(&module(&[2, 17])), Some(17 * 65536));
        let inner = [&COMPONENT_HEADER[..], &section(1, &module(&[40]))].concat();
        let outer = [&COMPONENT_HEADER[..], &section(1, &module(&[3])), &section(4, &inner)].concat();
        assert_eq!(largest_initial_memory(&outer), Some(40 * 65536));
        assert_eq!(largest_initial_memory(&COMPONENT_HEADER), Some(0), "no memory at all");
    }

    #[test]
    fn bytes_that_are_not_a_binary_give_nothing_and_never_panic() {
        let whole = [&COMPONENT_HEADER[..], &section(1, &module(&[3]))].concat();
        for cut in 9..whole.len() {
            assert_eq!(largest_initial_memory(&whole[..cut]), None, "cut at {cut}");
        }
        assert_eq!(largest_initial_memory(b"\0asm"), None);
        assert_eq!(largest_initial_memory(&[0xff; 64]), None);
    }

    /// A component nested a hundred thousand deep (a few bytes a level) is refused, not walked into a stack
    /// overflow.
    #[test]
    fn a_component_nested_without_end_gives_nothing() {
        let mut nested = COMPONENT_HEADER.to_vec();
        for _ in 0..100_000 {
            let mut size = Vec::new();
            let mut left = nested.len() as u64;
            loop {
                let byte = (left & 0x7f) as u8;
                left >>= 7;
                if left == 0 {
                    size.push(byte);
                    break;
                }
                size.push(byte | 0x80);
            }
            nested = [&COMPONENT_HEADER[..], &[4], &size, &nested].concat();
        }
        assert_eq!(largest_initial_memory(&nested), None);
    }
}
