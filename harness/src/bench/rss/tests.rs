//! Reading what GNU time wrote, and wrapping a command line.

use std::path::Path;

use super::{PeakRss, parse};
use crate::bench::command::Invocation;

#[test]
fn the_last_line_is_kilobytes() {
    assert_eq!(parse("5944\n"), Some(5944 * 1024));
    assert_eq!(parse("Command exited with non-zero status 1\n1080\n"), Some(1080 * 1024));
    assert_eq!(parse("1080\n\n"), Some(1080 * 1024));
    assert_eq!(parse(""), None);
    assert_eq!(parse("Command terminated by signal 9\n"), None);
}

#[test]
fn a_wrapped_invocation_keeps_the_program_and_its_arguments() {
    let rss = PeakRss { program: "time".into(), output: Path::new("/d/rss").to_path_buf() };
    let wrapped = rss.wrap(&Invocation::new("/bin/ctl").args(["call", "{}"]));
    assert_eq!(wrapped.to_string(), "time -f %M -o /d/rss /bin/ctl call '{}'");
}
