//! The parsers of `/proc/cpuinfo`, `/proc/meminfo` and `/etc/os-release`.

use super::{
    Machine, UNKNOWN, cpu_model, first_words, load_average, logical_cpus, memory_total, os_name,
};

const X86: &str = "processor\t: 0\nvendor_id\t: AuthenticAMD\nmodel name\t: AMD EPYC 7B13\n\n\
                   processor\t: 1\nvendor_id\t: AuthenticAMD\nmodel name\t: AMD EPYC 7B13\n";

const ARM: &str = "processor\t: 0\nBogoMIPS\t: 48.00\nCPU part\t: 0xd0c\n\n\
                   processor\t: 1\nBogoMIPS\t: 48.00\nCPU part\t: 0xd0c\n\nModel\t\t: Raspberry Pi 4\n";

#[test]
fn cpu_model_and_count_come_from_cpuinfo() {
    assert_eq!(cpu_model(X86).as_deref(), Some("AMD EPYC 7B13"));
    assert_eq!(logical_cpus(X86), 2);
    assert_eq!(cpu_model(ARM).as_deref(), Some("Raspberry Pi 4"));
    assert_eq!(logical_cpus(ARM), 2);
    assert_eq!(cpu_model("processor : 0\nmodel name :   \n"), None);
    assert_eq!(logical_cpus(""), 0);
}

#[test]
fn memory_total_is_in_bytes() {
    let meminfo = "MemTotal:       24683652 kB\nMemFree:        1000 kB\n";
    assert_eq!(memory_total(meminfo), Some(24_683_652 * 1024));
    assert_eq!(memory_total("MemFree: 1 kB\n"), None);
    assert_eq!(memory_total("MemTotal: lots kB\n"), None);
    assert_eq!(memory_total("MemTotal: 5 MB\n"), None);
}

#[test]
fn os_name_is_the_unquoted_pretty_name() {
    let release = "NAME=\"Debian GNU/Linux\"\nPRETTY_NAME=\"Debian GNU/Linux 12 (bookworm)\"\n";
    assert_eq!(os_name(release).as_deref(), Some("Debian GNU/Linux 12 (bookworm)"));
    assert_eq!(os_name("PRETTY_NAME='Alpine'\n").as_deref(), Some("Alpine"));
    assert_eq!(os_name("PRETTY_NAME=Arch\n").as_deref(), Some("Arch"));
    assert_eq!(os_name("PRETTY_NAME=\"\"\n"), None);
    assert_eq!(os_name("NAME=x\n"), None);
}

#[test]
fn a_version_line_is_cut_to_its_first_words() {
    let curl = "curl 7.88.1 (x86_64-pc-linux-gnu) libcurl/7.88.1 OpenSSL/3.0.19";
    assert_eq!(first_words(curl, 2), "curl 7.88.1");
    assert_eq!(first_words("curl", 2), "curl");
}

#[test]
fn the_load_average_is_the_first_three_fields() {
    assert_eq!(load_average("12.12 10.66 7.73 3/812 4242\n").as_deref(), Some("12.12 10.66 7.73"));
    assert_eq!(load_average("0.00 0.01 0.05"), Some("0.00 0.01 0.05".to_owned()));
    assert_eq!(load_average("1.0 2.0\n"), None);
    assert_eq!(load_average("high 2.0 3.0 1/2 3\n"), None);
    assert_eq!(load_average(""), None);
}

fn machine(cores: usize, load: Option<&str>) -> Machine {
    Machine {
        cpu: UNKNOWN.to_owned(),
        cores,
        available_cores: cores,
        memory_bytes: 0,
        os: UNKNOWN.to_owned(),
        kernel: UNKNOWN.to_owned(),
        rustc: UNKNOWN.to_owned(),
        curl: None,
        tmux: None,
        load: load.map(str::to_owned),
    }
}

#[test]
fn a_load_above_the_cpus_is_noted_as_busy() {
    let note = machine(2, Some("12.12 10.66 7.73")).busy_note().unwrap();
    assert!(
        note.starts_with(
            "the machine was shared and busy (load average 12.12 10.66 7.73 on 2 logical CPUs)"
        ),
        "{note}"
    );
    assert_eq!(machine(2, Some("2.00 9.00 9.00")).busy_note(), None);
    assert_eq!(machine(2, Some("0.10 0.20 0.30")).busy_note(), None);
    assert_eq!(machine(2, None).busy_note(), None);
}
