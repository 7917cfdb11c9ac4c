//! Tests of the command-line definition.

use clap::{CommandFactory as _, Parser as _};

use super::{Command, Xtask};

#[test]
fn command_line_definition_is_consistent() {
    Xtask::command().debug_assert();
}

fn parse(args: &[&str]) -> Result<Command, clap::Error> {
    Xtask::try_parse_from(std::iter::once("xtask").chain(args.iter().copied()))
        .map(|xtask| xtask.command)
}

#[test]
fn protocol_diff_takes_exactly_one_baseline() {
    let Ok(Command::ProtocolDiff(by_ref)) = parse(&["protocol-diff", "main"]) else { panic!() };
    assert_eq!(by_ref.git_ref.as_deref(), Some("main"));
    let Ok(Command::ProtocolDiff(by_file)) =
        parse(&["protocol-diff", "--against-file", "c.json", "--against-version", "1.0.0"])
    else {
        panic!()
    };
    assert_eq!(by_file.against_file.as_deref(), Some(std::path::Path::new("c.json")));
    assert_eq!(by_file.against_version.as_deref(), Some("1.0.0"));

    let kind = |args: &[&str]| parse(args).unwrap_err().kind();
    assert_eq!(kind(&["protocol-diff"]), clap::error::ErrorKind::MissingRequiredArgument);
    assert_eq!(
        kind(&["protocol-diff", "main", "--against-file", "c.json"]),
        clap::error::ErrorKind::ArgumentConflict
    );
    assert_eq!(
        kind(&["protocol-diff", "main", "--against-version", "1.0.0"]),
        clap::error::ErrorKind::ArgumentConflict
    );
}

#[test]
fn codegen_check_is_a_flag() {
    let Ok(Command::Codegen(codegen)) = parse(&["codegen", "--check"]) else { panic!() };
    assert!(codegen.check);
    let Ok(Command::Codegen(codegen)) = parse(&["codegen"]) else { panic!() };
    assert!(!codegen.check);
}

#[test]
fn bench_soak_and_demo_hand_every_word_to_the_harness() {
    let Ok(Command::Bench(bench)) = parse(&["bench", "--runs", "0", "--help", "--check"]) else {
        panic!()
    };
    assert_eq!(bench.args, ["--runs", "0", "--help", "--check"]);
    let Ok(Command::Soak(soak)) = parse(&["soak", "--minutes", "1", "--no-write"]) else {
        panic!()
    };
    assert_eq!(soak.args, ["--minutes", "1", "--no-write"]);
    let Ok(Command::Demo(demo)) = parse(&["demo"]) else { panic!() };
    assert!(demo.args.is_empty());
}
