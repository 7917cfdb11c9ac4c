//! The layout of `termsprawlctl`'s code on Linux: `cli/build.rs` links it with `cli/hot-text.ld`,
//! which puts the functions a call runs first in an executable section `.text.hot` before `.text`
//! (ARCHITECTURE.md, "Build configuration"). Read from the section headers of the real binary.

#![cfg(target_os = "linux")]

/// One section header of a 64-bit little-endian ELF file: name, flags, address and size.
struct Section {
    name: String,
    flags: u64,
    address: u64,
    size: u64,
}

/// `SHF_EXECINSTR`: the section holds code.
const EXECUTABLE: u64 = 0x4;

fn u16_at(bytes: &[u8], at: usize) -> usize {
    usize::from(u16::from_le_bytes(bytes[at..at + 2].try_into().expect("two bytes")))
}

fn u32_at(bytes: &[u8], at: usize) -> usize {
    usize::try_from(u32::from_le_bytes(bytes[at..at + 4].try_into().expect("four bytes")))
        .expect("fits")
}

fn u64_at(bytes: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(bytes[at..at + 8].try_into().expect("eight bytes"))
}

/// The entry address and the sections of the ELF file `bytes`.
fn sections(bytes: &[u8]) -> (u64, Vec<Section>) {
    assert_eq!(&bytes[..6], b"\x7fELF\x02\x01", "a 64-bit little-endian ELF file");
    let entry = u64_at(bytes, 0x18);
    let table = usize::try_from(u64_at(bytes, 0x28)).expect("fits");
    let (entry_size, count, names) =
        (u16_at(bytes, 0x3a), u16_at(bytes, 0x3c), u16_at(bytes, 0x3e));
    let header = |index: usize| &bytes[table + index * entry_size..][..entry_size];
    let names_offset = usize::try_from(u64_at(header(names), 0x18)).expect("fits");
    let sections = (0..count)
        .map(|index| {
            let header = header(index);
            let name = &bytes[names_offset + u32_at(header, 0)..];
            let end = name.iter().position(|byte| *byte == 0).expect("a terminated name");
            Section {
                name: String::from_utf8_lossy(&name[..end]).into_owned(),
                flags: u64_at(header, 0x08),
                address: u64_at(header, 0x10),
                size: u64_at(header, 0x20),
            }
        })
        .collect();
    (entry, sections)
}

#[test]
fn the_code_a_call_runs_first_is_in_its_own_section_before_the_rest() {
    let bytes = std::fs::read(env!("CARGO_BIN_EXE_termsprawlctl")).expect("read termsprawlctl");
    let (entry, sections) = sections(&bytes);
    let find = |name: &str| {
        sections
            .iter()
            .find(|section| section.name == name)
            .unwrap_or_else(|| panic!("no section {name} in termsprawlctl"))
    };
    let (hot, text) = (find(".text.hot"), find(".text"));
    assert_eq!(hot.flags & EXECUTABLE, EXECUTABLE, ".text.hot holds code");
    assert!(hot.size > 0, ".text.hot is empty");
    assert!(hot.address + hot.size <= text.address, ".text.hot comes before .text");
    // The first line of the script is the C start-up code: the program starts in .text.hot.
    assert!(
        (hot.address..hot.address + hot.size).contains(&entry),
        "the entry point is in .text.hot"
    );
}
