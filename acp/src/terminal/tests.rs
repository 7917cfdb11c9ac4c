//! Tests of the tmux backend on a private tmux socket, and of its pure helpers.

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use super::{
    ExitStatus, Server, Spec, Terminals, clean_capture, parse_state, shell_line, shell_quote,
    signal_name, tail,
};

struct Fixture {
    directory: tempfile::TempDir,
    terminals: Terminals,
}

impl Drop for Fixture {
    fn drop(&mut self) {
        let _ = Command::new("tmux").arg("-S").arg(self.socket()).arg("kill-server").output();
    }
}

impl Fixture {
    fn socket(&self) -> std::path::PathBuf {
        self.directory.path().join("tmux.sock")
    }

    fn tmux(&self, args: &[&str]) -> String {
        let output = Command::new("tmux")
            .arg("-S")
            .arg(self.socket())
            .args(args)
            .env_remove("TMUX")
            .output()
            .unwrap();
        String::from_utf8_lossy(&output.stdout).into_owned()
    }
}

fn fixture() -> Fixture {
    let directory = tempfile::tempdir().unwrap();
    let socket = directory.path().join("tmux.sock");
    let terminals = Terminals::new(Server::Socket(socket), directory.path().to_path_buf()).unwrap();
    Fixture { directory, terminals }
}

#[tokio::test]
async fn a_failing_command_reports_its_code_and_both_streams_until_released() {
    let f = fixture();
    let id =
        f.terminals.create(Spec::of("printf 'out\\n'; printf 'err\\n' >&2; exit 3")).await.unwrap();
    let status = f.terminals.wait_for_exit(&id).await.unwrap();
    assert_eq!(status, ExitStatus { exit_code: Some(3), signal: None });
    let output = f.terminals.output(&id).await.unwrap();
    assert_eq!(output.output, "out\nerr\n");
    assert!(!output.truncated);
    assert_eq!(
        output.to_json(),
        serde_json::json!({"output": "out\nerr\n", "truncated": false, "exitStatus": {"exitCode": 3, "signal": null}})
    );
    let attach = f.terminals.attach_command(&id).unwrap();
    assert!(attach.starts_with("tmux -S ") && attach.contains(" attach -t acp-"), "{attach}");
    f.terminals.release(&id).await.unwrap();
    assert_eq!(f.terminals.output(&id).await.unwrap_err().code, -32602);
    assert_eq!(f.terminals.wait_for_exit(&id).await.unwrap_err().code, -32602);
    assert_eq!(f.terminals.kill(&id).await.unwrap_err().code, -32602);
    assert_eq!(f.terminals.release(&id).await.unwrap_err().code, -32602);
    // The tmux session stays for the person until shutdown, then goes.
    let session = f.terminals.session_names()[0].clone();
    assert!(f.tmux(&["capture-pane", "-p", "-t", &format!("={session}:")]).contains("out\nerr"));
    f.terminals.shutdown().await;
    assert!(!f.tmux(&["list-sessions", "-F", "#{session_name}"]).contains(&session));
}

#[tokio::test]
async fn arguments_environment_and_cwd_reach_the_command() {
    let f = fixture();
    let work = f.directory.path().join("work dir");
    std::fs::create_dir(&work).unwrap();
    let id = f
        .terminals
        .create(Spec {
            command: "printf '%s|%s|%s|%s\\n'".to_owned(),
            args: vec!["it's".to_owned(), "$HOME".to_owned()],
            env: vec![("ACP_X".to_owned(), "x y".to_owned())],
            cwd: Some(work.to_str().unwrap().to_owned()),
            output_byte_limit: None,
        })
        .await
        .unwrap();
    f.terminals.wait_for_exit(&id).await.unwrap();
    let id2 = f
        .terminals
        .create(Spec {
            env: vec![("ACP_X".to_owned(), "x y".to_owned())],
            cwd: Some(work.to_str().unwrap().to_owned()),
            ..Spec::of("printf '%s|%s|%s|%s\\n' \"$ACP_X\" \"$(pwd)\" \"$PAGER\" \"$GIT_PAGER\"; read line; echo \"read:$line\"")
        })
        .await
        .unwrap();
    f.terminals.wait_for_exit(&id2).await.unwrap();
    let first = f.terminals.output(&id).await.unwrap();
    assert_eq!(first.output, "it's|$HOME||\n", "{first:?} {}", f.tmux(&["list-sessions"]));
    assert_eq!(
        f.terminals.output(&id2).await.unwrap().output,
        format!("x y|{}||cat\nread:\n", work.display())
    );
    f.terminals.shutdown().await;
}

#[tokio::test]
async fn bad_requests_are_invalid_params() {
    let f = fixture();
    let relative = Spec { cwd: Some("relative".to_owned()), ..Spec::of("true") };
    assert_eq!(f.terminals.create(relative).await.unwrap_err().code, -32602);
    let missing = Spec { cwd: Some("/no/such/dir".to_owned()), ..Spec::of("true") };
    assert_eq!(f.terminals.create(missing).await.unwrap_err().code, -32602);
    let bad_env = Spec { env: vec![("A=B".to_owned(), "c".to_owned())], ..Spec::of("true") };
    assert_eq!(f.terminals.create(bad_env).await.unwrap_err().code, -32602);
    assert_eq!(f.terminals.output("term-404").await.unwrap_err().code, -32602);
}

#[tokio::test]
async fn kill_ends_the_command_and_keeps_the_terminal() {
    let f = fixture();
    let id = f.terminals.create(Spec::of("echo started; sleep 300")).await.unwrap();
    let stubborn = f
        .terminals
        .create(Spec::of("trap '' TERM; echo stubborn; sleep 300; sleep 300"))
        .await
        .unwrap();
    let running = loop {
        let output = f.terminals.output(&id).await.unwrap();
        if output.output.contains("started")
            && f.terminals.output(&stubborn).await.unwrap().output.contains("stubborn")
        {
            break output;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    assert_eq!(running.exit_status, None);
    let started = Instant::now();
    f.terminals.kill(&id).await.unwrap();
    let status = f.terminals.wait_for_exit(&id).await.unwrap();
    assert_eq!(status, ExitStatus { exit_code: None, signal: Some("SIGTERM".to_owned()) });
    f.terminals.kill(&stubborn).await.unwrap();
    // The pane's shell ends with SIGTERM; the command that ignores it is killed with the group.
    let status = f.terminals.wait_for_exit(&stubborn).await.unwrap();
    assert!(status.signal.is_some(), "{status:?}");
    let session = f.terminals.session_names()[1].clone();
    let group: i32 = f
        .tmux(&["display-message", "-p", "-t", &format!("={session}:"), "#{pane_pid}"])
        .trim()
        .parse()
        .unwrap();
    let group = rustix::process::Pid::from_raw(group).unwrap();
    assert!(!super::group_alive(group), "the stubborn command survived");
    assert!(started.elapsed() < Duration::from_secs(20));
    let after = f.terminals.output(&id).await.unwrap();
    assert_eq!(after.output, "started\n");
    assert_eq!(after.exit_status, Some(status_of("SIGTERM")));
    f.terminals.shutdown().await;
}

fn status_of(signal: &str) -> ExitStatus {
    ExitStatus { exit_code: None, signal: Some(signal.to_owned()) }
}

#[tokio::test]
async fn shutdown_kills_running_commands() {
    let f = fixture();
    let id = f.terminals.create(Spec::of("sleep 300")).await.unwrap();
    let session = f.terminals.session_names()[0].clone();
    let pid: i32 = f
        .tmux(&["display-message", "-p", "-t", &format!("={session}:"), "#{pane_pid}"])
        .trim()
        .parse()
        .unwrap();
    assert!(Path::new(&format!("/proc/{pid}")).exists());
    assert!(f.terminals.output(&id).await.unwrap().exit_status.is_none());
    f.terminals.shutdown().await;
    let deadline = Instant::now() + Duration::from_secs(10);
    while Path::new(&format!("/proc/{pid}/cmdline")).exists()
        && std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .is_ok_and(|stat| !stat.contains(") Z "))
        && Instant::now() < deadline
    {
        std::thread::sleep(Duration::from_millis(50));
    }
    let alive = std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .is_ok_and(|stat| !stat.contains(") Z "));
    assert!(!alive, "the pane's process survived shutdown");
}

#[tokio::test]
async fn output_is_tail_truncated_to_the_byte_limit() {
    let f = fixture();
    let id = f
        .terminals
        .create(Spec { output_byte_limit: Some(100), ..Spec::of("seq 1 3000") })
        .await
        .unwrap();
    f.terminals.wait_for_exit(&id).await.unwrap();
    let output = f.terminals.output(&id).await.unwrap();
    assert!(output.truncated);
    assert!(output.output.len() <= 100);
    assert!(output.output.ends_with("2999\n3000\n"), "{:?}", output.output);
    f.terminals.shutdown().await;
}

#[test]
fn tail_cuts_on_character_boundaries() {
    assert_eq!(tail("abc", 3), ("abc", false));
    assert_eq!(tail("abcdef", 2), ("ef", true));
    assert_eq!(tail("éé", 3), ("é", true));
    assert_eq!(tail("aé", 1), ("", true));
    assert_eq!(tail("", 0), ("", false));
}

#[test]
fn shell_lines_quote_arguments() {
    assert_eq!(shell_quote("it's"), r"'it'\''s'");
    assert_eq!(
        shell_line("ls -l", &["a b".to_owned(), "$x".to_owned()], Path::new("/t/it's")),
        "exec </dev/null\n(\nls -l 'a b' '$x'\n)\nacp_status=$?\nsleep 0.2\n\
printf '%s\\n' \"$acp_status\" > '/t/it'\\''s'.tmp && mv -f '/t/it'\\''s'.tmp '/t/it'\\''s'\n\
exit $acp_status\n"
    );
}

#[test]
fn pane_states_parse() {
    let closing = parse_state("1|||10|100").unwrap();
    assert!(closing.dead);
    assert_eq!(closing.exit_status, None);
    let exited = parse_state("1|3||10|100").unwrap();
    assert_eq!(exited.exit_status, Some(ExitStatus { exit_code: Some(3), signal: None }));
    assert!(!exited.history_full);
    let signalled = parse_state("1||9|100|100").unwrap();
    assert_eq!(signalled.exit_status, Some(status_of("SIGKILL")));
    assert!(signalled.history_full);
    assert_eq!(parse_state("0|||0|100").unwrap().exit_status, None);
    assert!(parse_state("garbage").is_err());
}

#[test]
fn captures_lose_trailing_blank_lines_and_the_dead_pane_notice() {
    assert_eq!(clean_capture("a\n\nb\n\n\n", false), "a\n\nb\n");
    assert_eq!(clean_capture("a\n\nPane is dead (status 1, now)\n\n", true), "a\n");
    assert_eq!(clean_capture("\n\n", true), "");
}

#[test]
fn signal_numbers_have_names() {
    assert_eq!(signal_name(15), "SIGTERM");
    assert_eq!(signal_name(9), "SIGKILL");
    assert_eq!(signal_name(2), "SIGINT");
    assert_eq!(signal_name(200), "SIG200");
}
