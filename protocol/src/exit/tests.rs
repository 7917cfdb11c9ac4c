//! The numbers behind the meanings.

use super::ExitStatus;

#[test]
fn statuses_have_the_contract_numbers() {
    let codes = [ExitStatus::OK, ExitStatus::FAILED, ExitStatus::USAGE, ExitStatus::NEEDS_ANSWER]
        .map(ExitStatus::code);
    assert_eq!(codes, [0, 1, 2, 3]);
    assert_eq!(ExitStatus::from_ok(true), ExitStatus::OK);
    assert_eq!(ExitStatus::from_ok(false), ExitStatus::FAILED);
}
