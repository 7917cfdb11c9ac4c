//! The node-id rule of `spec/protocol.md` §2.4: the one pattern every node id matches, checked
//! wherever an id becomes a file name (`D/sessions/<nodeId>.json`) or a tmux target (`ts-<nodeId>`).

/// The longest node id, in bytes (all of them ASCII).
pub const MAX_NODE_ID_LEN: usize = 128;

/// Whether `node_id` matches `^[a-zA-Z0-9][a-zA-Z0-9_-]{0,127}$`. Other ids could name a path
/// outside the sessions directory (`..`, `/`) or carry tmux target syntax (`:`, `.`).
pub fn is_valid_node_id(node_id: &str) -> bool {
    let bytes = node_id.as_bytes();
    let Some((first, rest)) = bytes.split_first() else { return false };
    bytes.len() <= MAX_NODE_ID_LEN
        && first.is_ascii_alphanumeric()
        && rest.iter().all(|byte| byte.is_ascii_alphanumeric() || *byte == b'_' || *byte == b'-')
}

#[cfg(test)]
mod tests;
