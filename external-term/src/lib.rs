//! Opens a terminal emulator attached to a termsprawl node's tmux session (skeleton).
