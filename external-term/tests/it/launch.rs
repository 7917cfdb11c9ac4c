//! The spawn: argv without a shell, environment, standard streams, process group, the grace period
//! and reaping.

use std::ffi::OsString;
use std::fs;
use std::path::{Path, PathBuf};
use std::time::Duration;

use termsprawl_external_term::{Error, LaunchOptions, Launched, TerminalCommand, launch};

use crate::support::{KillGroup, process_exists, process_group, script, wait_until};

/// A generous grace period for emulators that exit at once: their exit ends the wait early.
const LONG_GRACE: Duration = Duration::from_secs(10);

/// A fake emulator that records what it got in `$RECORD` and exits with status 0.
const RECORDER: &str = r#"fd0=$(readlink /proc/$$/fd/0)
fd1=$(readlink /proc/$$/fd/1)
fd2=$(readlink /proc/$$/fd/2)
pgid=$(cut -d' ' -f5 /proc/$$/stat)
{
  for arg in "$@"; do printf 'arg <%s>\n' "$arg"; done
  printf 'TMUX=%s\n' "${TMUX-(unset)}"
  printf 'TMUX_PANE=%s\n' "${TMUX_PANE-(unset)}"
  printf 'EXTERNAL_TERM_MARK=%s\n' "${EXTERNAL_TERM_MARK-(unset)}"
  printf 'stdin=%s stdout=%s stderr=%s\n' "$fd0" "$fd1" "$fd2"
  if [ "$pgid" = "$$" ]; then echo 'leads its own process group'; else echo "pgid $pgid, pid $$"; fi
} > "$RECORD""#;

fn command(program: &Path, args: &[&str]) -> TerminalCommand {
    TerminalCommand {
        program: program.to_path_buf(),
        args: args.iter().map(OsString::from).collect(),
    }
}

fn env(pairs: &[(&str, &str)]) -> Vec<(OsString, OsString)> {
    pairs.iter().map(|(name, value)| (OsString::from(name), OsString::from(value))).collect()
}

#[test]
fn runs_the_program_directly_detached_without_streams_or_tmux_variables() {
    let dir = tempfile::tempdir().unwrap();
    let program = script(&dir.path().join("recorder"), RECORDER);
    let record = dir.path().join("record");
    let options = LaunchOptions {
        grace_period: LONG_GRACE,
        env: env(&[
            ("RECORD", record.to_str().unwrap()),
            ("TMUX", "/tmp/tmux-0/default,1,0"),
            ("TMUX_PANE", "%1"),
            ("EXTERNAL_TERM_MARK", "passed"),
        ]),
    };
    let args = ["-e", "two words", "$HOME", "a;b", "`id`", "*", "'quoted'", "", "{command}"];
    let launched = launch(&command(&program, &args), &options).unwrap();
    assert!(matches!(launched, Launched::HandedOff { .. }), "{launched:?}");
    insta::assert_snapshot!(fs::read_to_string(&record).unwrap());
}

#[test]
fn an_emulator_that_fails_at_once_is_an_error_with_its_status() {
    let dir = tempfile::tempdir().unwrap();
    let program = script(&dir.path().join("fails"), "exit 3");
    let options = LaunchOptions { grace_period: LONG_GRACE, env: Vec::new() };
    let error = launch(&command(&program, &["-e", "tmux"]), &options).unwrap_err();
    let Error::ExitedEarly { program: reported, status, grace_period } = &error else {
        panic!("expected ExitedEarly, got {error:?}");
    };
    assert_eq!((reported, status.code(), *grace_period), (&program, Some(3), LONG_GRACE));
    assert_eq!(
        error.to_string(),
        format!("terminal emulator {} exited within 10000 ms (exit status: 3)", program.display())
    );
}

#[test]
fn an_emulator_killed_at_once_is_an_error_naming_the_signal() {
    let dir = tempfile::tempdir().unwrap();
    let program = script(&dir.path().join("killed"), "kill -9 $$");
    let options = LaunchOptions { grace_period: LONG_GRACE, env: Vec::new() };
    let error = launch(&command(&program, &[]), &options).unwrap_err();
    assert_eq!(
        error.to_string(),
        format!(
            "terminal emulator {} exited within 10000 ms (signal: 9 (SIGKILL))",
            program.display()
        )
    );
}

#[test]
fn an_emulator_still_running_after_the_grace_period_is_a_success_and_is_reaped() {
    let dir = tempfile::tempdir().unwrap();
    let program = script(&dir.path().join("stays"), "exec sleep 600");
    let options = LaunchOptions { grace_period: Duration::from_millis(200), env: Vec::new() };
    let launched = launch(&command(&program, &[]), &options).unwrap();
    let Launched::Running { pid } = launched else { panic!("expected Running, got {launched:?}") };
    let mut group = KillGroup::new(pid);
    assert_eq!(process_group(pid), pid);

    group.kill();
    // A zombie would keep /proc/<pid> alive: its disappearance shows the reaper thread waited.
    wait_until("the emulator is reaped", || !process_exists(pid));
}

#[test]
fn a_program_that_cannot_be_spawned() {
    let dir = tempfile::tempdir().unwrap();
    let missing: PathBuf = dir.path().join("missing-term");
    let error = launch(&command(&missing, &[]), &LaunchOptions::default()).unwrap_err();
    assert!(matches!(error, Error::Spawn { .. }), "{error:?}");
    assert_eq!(
        error.to_string(),
        format!(
            "could not start terminal emulator {}: No such file or directory (os error 2)",
            missing.display()
        )
    );
}

#[test]
fn the_default_grace_period() {
    assert_eq!(LaunchOptions::default().grace_period, Duration::from_millis(500));
    assert!(LaunchOptions::default().env.is_empty());
}
